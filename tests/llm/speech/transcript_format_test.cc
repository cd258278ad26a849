// SRT, VTT, text and JSON out of a transcript: the exact text players read, and the multipart
// form a transcription server is sent.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llm/speech/multipart_form.h"
#include "llm/speech/transcript_format.h"

namespace reel::llm {
namespace {

std::vector<TranscriptSegment> Segments() {
  TranscriptSegment a;
  a.start_s = 1.2344;
  a.end_s = 3.5;
  a.text = "Hello there.";
  a.confidence = 0.87654;
  a.language = "en";
  a.words = {{1.2344, 1.9, "Hello", 0.9}, {2.0, 3.5, "there.", std::nullopt}};
  TranscriptSegment b;
  b.start_s = 3725.0006;
  b.end_s = 3725.0006;  // zero length: shown for a millisecond
  b.text = "a <b> & c --> d\nnext";
  TranscriptSegment empty;
  empty.start_s = 4000;
  empty.end_s = 4001;
  return {a, b, empty};
}

TEST(TranscriptFormatTest, SrtAsPlayersReadIt) {
  EXPECT_EQ(FormatSrt(Segments()),
            "1\n00:00:01,234 --> 00:00:03,500\nHello there.\n\n"
            "2\n01:02:05,001 --> 01:02:05,002\na <b> & c --> d next\n\n");
  // On the player's clock: the container's start subtracted, never below zero.
  EXPECT_EQ(FormatSrt({Segments()[0]}, 1.5), "1\n00:00:00,000 --> 00:00:02,000\nHello there.\n\n");
  EXPECT_EQ(FormatSrt({}), "");
  EXPECT_EQ(CueTime(360000.25, ','), "100:00:00,250");
}

TEST(TranscriptFormatTest, VttWithEscapes) {
  EXPECT_EQ(FormatVtt(Segments()),
            "WEBVTT\n\n"
            "00:00:01.234 --> 00:00:03.500\nHello there.\n\n"
            "01:02:05.001 --> 01:02:05.002\na &lt;b&gt; &amp; c --&gt; d next\n\n");
  EXPECT_EQ(FormatVtt({}), "WEBVTT\n\n");
}

TEST(TranscriptFormatTest, TextAndJson) {
  EXPECT_EQ(FormatText(Segments()), "Hello there.\na <b> & c --> d next\n");
  FileTranscript t;
  t.backend = "openai";
  t.model = "whisper-1";
  t.segments = Segments();
  t.chunks = 3;
  t.audio.track.has_audio = true;
  t.audio.track.stream.index = 1;
  t.audio.track.stream.language = "eng";
  t.audio.audio_s = 10.0004;
  t.failures.push_back({2, 5, 9, Status(ErrorCode::kUnavailable, "server error")});
  t.notes = {"a note"};
  const std::string text = FormatJson(t, "clip.mp4", 0.5);
  ASSERT_EQ(text.back(), '\n');
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["path"], "clip.mp4");
  EXPECT_EQ(j["backend"], "openai");
  EXPECT_EQ(j["audio_stream"], 1);
  EXPECT_EQ(j["audio_stream_language"], "eng");
  EXPECT_EQ(j["complete"], false);
  EXPECT_DOUBLE_EQ(j["segments"][0]["start"].get<double>(), 0.734);
  EXPECT_DOUBLE_EQ(j["segments"][0]["confidence"].get<double>(), 0.877);
  EXPECT_EQ(j["segments"][0]["words"].size(), 2u);
  EXPECT_FALSE(j["segments"][0]["words"][1].contains("confidence"));
  EXPECT_EQ(j["failures"][0]["error"], "server error");
  EXPECT_DOUBLE_EQ(j["failures"][0]["start"].get<double>(), 4.5);
  EXPECT_EQ(j["notes"][0], "a note");
}

TEST(MultipartFormTest, FieldsAndAFileWithABoundaryFoundNowhereInThem) {
  MultipartForm form;
  form.AddFile("file", "chunk \"1\".wav", "audio/wav", std::string("RIFF\0\r\n--x", 10));
  form.AddField("model", "whisper-1");
  form.AddField("timestamp_granularities[]", "word");
  const MultipartForm::Encoded e = form.Encode(7);
  const std::string boundary = e.content_type.substr(e.content_type.find('=') + 1);
  EXPECT_EQ(e.content_type, "multipart/form-data; boundary=" + boundary);
  EXPECT_EQ(e.body, "--" + boundary +
                        "\r\nContent-Disposition: form-data; name=\"file\"; "
                        "filename=\"chunk %221%22.wav\"\r\nContent-Type: audio/wav\r\n\r\n" +
                        std::string("RIFF\0\r\n--x", 10) + "\r\n--" + boundary +
                        "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n"
                        "--" +
                        boundary +
                        "\r\nContent-Disposition: form-data; "
                        "name=\"timestamp_granularities[]\"\r\n\r\nword\r\n--" +
                        boundary + "--\r\n");
  // A part holding the boundary the seed would give: another one is chosen.
  MultipartForm clash;
  clash.AddField("x", "--" + boundary);
  const MultipartForm::Encoded other = clash.Encode(7);
  EXPECT_NE(other.content_type, e.content_type);
  EXPECT_EQ(other.body.find("--" + boundary + "--"), std::string::npos);
}

}  // namespace
}  // namespace reel::llm
