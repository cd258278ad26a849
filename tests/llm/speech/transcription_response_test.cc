// Reading a transcription server's answer: OpenAI's verbose_json, whisper.cpp's, plain text;
// times clamped into the chunk; unreadable answers are errors, never a crash.
#include <gtest/gtest.h>

#include <cmath>

#include "llm/speech/transcription_response.h"

namespace reel::llm {
namespace {

TEST(TranscriptionResponseTest, OpenAiVerboseJsonWithTopLevelWords) {
  const char* body = R"({
    "task": "transcribe", "language": "english", "duration": 9.5, "text": "Hello there. Bye.",
    "segments": [
      {"id": 1, "start": 5.0, "end": 6.2, "text": " Bye.", "avg_logprob": -0.5,
       "no_speech_prob": 0.2},
      {"id": 0, "start": 0.48, "end": 2.5, "text": " Hello\nthere. ", "avg_logprob": -0.2}
    ],
    "words": [
      {"word": "Hello", "start": 0.5, "end": 1.0}, {"word": " there.", "start": 1.1, "end": 2.4},
      {"word": "Bye.", "start": 5.1, "end": 6.0}, {"word": "late", "start": 8.0, "end": 12.0}
    ]})";
  Result<ParsedTranscription> p = ParseTranscriptionResponse(body, 9.5);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->language, "en");
  EXPECT_TRUE(p->timed);
  EXPECT_TRUE(p->has_words);
  ASSERT_EQ(p->segments.size(), 2u);
  EXPECT_EQ(p->segments[0].text, "Hello there.");  // sorted, trimmed, one line
  EXPECT_DOUBLE_EQ(p->segments[0].start_s, 0.48);
  EXPECT_NEAR(*p->segments[0].confidence, std::exp(-0.2), 1e-12);
  EXPECT_NEAR(*p->segments[1].confidence, std::exp(-0.5) * 0.8, 1e-12);
  ASSERT_EQ(p->segments[0].words.size(), 2u);
  EXPECT_EQ(p->segments[0].words[1].text, "there.");
  ASSERT_EQ(p->segments[1].words.size(), 2u);            // "late" goes to the nearest segment
  EXPECT_DOUBLE_EQ(p->segments[1].words[1].end_s, 9.5);  // clamped into the chunk
  EXPECT_FALSE(p->segments[1].words[0].confidence.has_value());
}

TEST(TranscriptionResponseTest, WhisperCppWordsInsideSegmentsAndPlainText) {
  Result<ParsedTranscription> p = ParseTranscriptionResponse(R"({"language": "de",
    "segments": [{"start": 0, "end": 3, "text": "Guten Tag", "words": [
      {"word": "Guten", "start": 0.1, "end": 0.6, "probability": 0.93},
      {"word": "Tag", "start": 0.7, "end": 1.0, "probability": 1.5}]}]})",
                                                             10);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->language, "de");
  ASSERT_EQ(p->segments[0].words.size(), 2u);
  EXPECT_DOUBLE_EQ(*p->segments[0].words[0].confidence, 0.93);
  EXPECT_FALSE(p->segments[0].words[1].confidence.has_value());  // out of range: dropped
  EXPECT_FALSE(p->segments[0].confidence.has_value());

  Result<ParsedTranscription> text = ParseTranscriptionResponse(R"({"text": " just text "})", 7.5);
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(text->timed);
  ASSERT_EQ(text->segments.size(), 1u);
  EXPECT_EQ(text->segments[0].text, "just text");
  EXPECT_DOUBLE_EQ(text->segments[0].start_s, 0);
  EXPECT_DOUBLE_EQ(text->segments[0].end_s, 7.5);
  EXPECT_TRUE(ParseTranscriptionResponse(R"({"text": ""})", 3)->segments.empty());
}

TEST(TranscriptionResponseTest, OddValuesAreSkippedOrClampedAndBadBodiesAreErrors) {
  Result<ParsedTranscription> p = ParseTranscriptionResponse(R"({"segments": [
      {"start": -3, "end": 1, "text": "a"}, {"start": 2, "end": 1, "text": "b"},
      {"start": "x", "end": 1, "text": "c"}, {"start": 1, "end": 2, "text": 5},
      {"start": 1, "end": 2, "text": "   "}, 7, null,
      {"start": 4, "end": 99, "text": "e"}]})",
                                                             5);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->segments.size(), 3u);
  EXPECT_EQ(p->segments[0].text, "a");
  EXPECT_DOUBLE_EQ(p->segments[0].start_s, 0);
  EXPECT_EQ(p->segments[1].text, "b");
  EXPECT_DOUBLE_EQ(p->segments[1].end_s, 2);  // end >= start
  EXPECT_DOUBLE_EQ(p->segments[2].end_s, 5);
  EXPECT_EQ(p->language, "");

  for (const char* bad :
       {"", "not json", "[1,2]", R"({"segments": [{"start": 1e400}]})", R"({"segments": 5})",
        R"({"words": []})", R"({"segments": [{"start": 0, "end": 1, "text": "cut)"}) {
    Result<ParsedTranscription> r = ParseTranscriptionResponse(bad, 5);
    EXPECT_EQ(r.status().code(), ErrorCode::kCorruptData) << bad;
  }
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(ParseTranscriptionResponse(deep, 5).status().message().find("nests deeper"),
            std::string::npos);
  // Text that is not UTF-8 comes out valid.
  Result<ParsedTranscription> bytes =
      ParseTranscriptionResponse("{\"text\": \"caf\\u00e9 \\u0001x\"}", 1);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->segments[0].text, "caf\xc3\xa9  x");
}

}  // namespace
}  // namespace reel::llm
