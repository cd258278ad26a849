// The server backend against a fake transcription server on loopback
// (tests/support/fake_openai_server.py): every upload is checked there (a valid WAV, the form's
// fields), and the server answers with times relative to the chunk it got; the transcript's
// times must be the video's. The audio is tone bursts at known times, which the fake server
// "transcribes" as "tone <Hz>", so every burst must come back exactly once, at its time, through
// 429s, 5xx, cut connections, stalls and bad JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include "llm/speech/transcribe_file.h"
#include "llm/speech/transcriber.h"
#include "tests/support/fake_model_server.h"
#include "tests/support/speech_media.h"

namespace reel::llm {
namespace {

using reel::testing::FakeModelServer;
using reel::testing::FakeServerOptions;
using reel::testing::SpeechVideo;

struct Burst {
  double at_s;
  int hz;
};

// The bursts of ToneBurstVideo, from its placed pieces.
std::vector<Burst> Bursts() {
  static const std::vector<Burst> bursts = [] {
    std::vector<Burst> out;
    for (const auto& p : reel::testing::ToneBurstVideo().placed) {
      out.push_back({p.onset_s, std::stoi(p.text.substr(5))});
    }
    return out;
  }();
  return bursts;
}

SpeechVideo BurstVideo() { return reel::testing::ToneBurstVideo(); }

TranscriberOptions ServerOptions(const FakeModelServer& server) {
  TranscriberOptions o;
  o.backend = "auto";
  o.endpoint = server.endpoint();
  o.model = "whisper-1";
  o.retry.initial_delay_s = 0.05;
  o.retry.max_delay_s = 0.2;
  return o;
}

std::vector<nlohmann::json> Uploads(FakeModelServer& server) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : nlohmann::json::parse(server.Log())) {
    if (e.value("path", "") == "/v1/audio/transcriptions") out.push_back(e);
  }
  return out;
}

// Every burst exactly once, at its time; nothing else.
void ExpectEveryBurstOnce(const FileTranscript& t, const std::set<int>& missing = {}) {
  std::map<int, int> seen;
  for (const TranscriptSegment& s : t.segments) {
    ASSERT_EQ(s.text.rfind("tone ", 0), 0u) << s.text;
    const int hz = std::stoi(s.text.substr(5));
    ++seen[hz];
    bool known = false;
    for (const Burst& b : Bursts()) {
      if (b.hz != hz) continue;
      known = true;
      EXPECT_NEAR(s.start_s, b.at_s, 0.05) << "tone " << hz << ": not the video's time";
      EXPECT_NEAR(s.end_s, b.at_s + 0.8, 0.05) << "tone " << hz;
      ASSERT_EQ(s.words.size(), 2u) << "tone " << hz;
      EXPECT_NEAR(s.words[0].start_s, b.at_s, 0.05);
      EXPECT_NEAR(s.words[1].end_s, b.at_s + 0.8, 0.05);
    }
    EXPECT_TRUE(known) << s.text;
  }
  for (const Burst& b : Bursts()) {
    EXPECT_EQ(seen[b.hz], missing.count(b.hz) ? 0 : 1) << "tone " << b.hz << " at " << b.at_s;
  }
}

TEST(OpenAiTranscriberTest, UploadsAreValidAndTimesAreTheVideos) {
  FakeServerOptions fo;
  fo.model = "whisper-1";
  fo.api_key = "sk-speech-secret";
  FakeModelServer server(fo);
  ASSERT_TRUE(server.started());
  const SpeechVideo video = BurstVideo();
  ASSERT_FALSE(video.path.empty());
  TranscriberOptions o = ServerOptions(server);
  o.language = "English";
  o.api_key = ApiKey::FromSecret("sk-speech-secret");
  Result<std::unique_ptr<Transcriber>> transcriber = CreateTranscriber(o);
  ASSERT_TRUE(transcriber.ok()) << transcriber.status().message();
  EXPECT_EQ((*transcriber)->backend(), "openai");
  TranscribeFileOptions options;
  options.concurrency = 4;
  Result<FileTranscript> t = TranscribeFile(video.path, **transcriber, options);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->complete());
  ExpectEveryBurstOnce(*t);
  for (const TranscriptSegment& s : t->segments) {
    EXPECT_EQ(s.language, "en");
    EXPECT_EQ(s.backend, "openai");
    EXPECT_EQ(s.model, "whisper-1");
    ASSERT_TRUE(s.confidence.has_value());
    EXPECT_NEAR(*s.confidence, std::exp(-0.1) * 0.99, 1e-6);
  }
  const std::vector<nlohmann::json> uploads = Uploads(server);
  ASSERT_EQ(static_cast<int>(uploads.size()), t->chunks);
  EXPECT_GE(t->chunks, 6);
  double longest = 0;
  for (const nlohmann::json& u : uploads) {
    EXPECT_TRUE(u["shape_errors"].empty()) << u["shape_errors"].dump();
    EXPECT_TRUE(u["auth_problems"].empty()) << u["auth_problems"].dump();
    EXPECT_EQ(u["fields"]["language"], nlohmann::json::array({"en"}));
    EXPECT_EQ(u["fields"]["timestamp_granularities[]"], nlohmann::json::array({"segment", "word"}));
    EXPECT_EQ(u["file"]["sample_rate"], 16000);
    longest = std::max(longest, u["file"]["duration"].get<double>());
  }
  EXPECT_LE(longest, 30.0);
  EXPECT_GT(longest, 20.0) << "the 40 s run of bursts should fill a window";
}

TEST(OpenAiTranscriberTest, FaultsLoseNothingAndTranscribeNothingTwice) {
  FakeServerOptions fo;
  fo.model = "whisper-1";
  FakeModelServer server(fo);
  ASSERT_TRUE(server.started());
  const SpeechVideo video = BurstVideo();
  server.Script(R"([
    {"kind": "status", "status": 429, "headers": {"retry-after": "1"}, "match": "chunk-00001.wav"},
    {"kind": "status", "status": 500, "times": 2, "match": "chunk-00002.wav"},
    {"kind": "reset", "match": "chunk-00003.wav"},
    {"kind": "stall", "seconds": 8, "match": "chunk-00004.wav"},
    {"kind": "status", "status": 503, "match": "chunk-00005.wav"},
    {"kind": "cut", "match": "chunk-00000.wav"}
  ])");
  TranscriberOptions o = ServerOptions(server);
  o.read_timeout_s = 4;  // the stall (8 s) times out; a loaded machine's slow answer does not
  Result<std::unique_ptr<Transcriber>> transcriber = CreateTranscriber(o);
  ASSERT_TRUE(transcriber.ok());
  TranscribeFileOptions options;
  options.concurrency = 3;
  std::mutex mutex;
  std::map<int, int> attempts;
  Result<FileTranscript> t =
      TranscribeFile(video.path, **transcriber, options, nullptr, [&](const ChunkOutcome& o) {
        std::lock_guard<std::mutex> lock(mutex);
        attempts[o.chunk] = o.result.ok() ? o.result->attempts : -1;
      });
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->complete()) << (t->failures.empty() ? "" : t->failures[0].status.message());
  ExpectEveryBurstOnce(*t);
  // Requests Reel sent for each chunk (a reset on a kept-alive connection is sent again by
  // libcurl itself, within one attempt), and what the server got.
  EXPECT_EQ(attempts[0], 2);
  EXPECT_EQ(attempts[1], 2);
  EXPECT_EQ(attempts[2], 3);
  EXPECT_LE(attempts[3], 2);
  EXPECT_EQ(attempts[4], 2);
  EXPECT_EQ(attempts[5], 2);
  EXPECT_EQ(attempts[6], 1);
  std::map<std::string, int> uploads;
  std::vector<double> times;
  for (const nlohmann::json& u : Uploads(server)) {
    const std::string name = u["file"]["filename"];
    ++uploads[name];
    if (name == "chunk-00001.wav") times.push_back(u["time"].get<double>());
  }
  const std::map<std::string, int> want = {{"chunk-00000.wav", 2}, {"chunk-00001.wav", 2},
                                           {"chunk-00002.wav", 3}, {"chunk-00003.wav", 2},
                                           {"chunk-00004.wav", 2}, {"chunk-00005.wav", 2},
                                           {"chunk-00006.wav", 1}};
  EXPECT_EQ(uploads, want);
  // retry-after: 1 was waited for.
  ASSERT_EQ(times.size(), 2u);
  EXPECT_GE(times[1] - times[0], 0.95);
}

TEST(OpenAiTranscriberTest, AnUnreadableAnswerFailsItsChunkOnlyAndSaysWhich) {
  FakeServerOptions fo;
  fo.model = "whisper-1";
  FakeModelServer server(fo);
  ASSERT_TRUE(server.started());
  const SpeechVideo video = BurstVideo();
  server.Script(R"([{"kind": "malformed", "match": "chunk-00002.wav"}])");
  Result<std::unique_ptr<Transcriber>> transcriber = CreateTranscriber(ServerOptions(server));
  ASSERT_TRUE(transcriber.ok());
  Result<FileTranscript> t = TranscribeFile(video.path, **transcriber, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->failures.size(), 1u);
  const ChunkFailure& f = t->failures[0];
  EXPECT_EQ(f.chunk, 2);
  EXPECT_EQ(f.status.code(), ErrorCode::kCorruptData);
  EXPECT_NE(f.status.message().find("malformed response"), std::string::npos) << f.status.message();
  std::set<int> lost;
  for (const Burst& b : Bursts()) {
    if (b.at_s >= f.start_s && b.at_s < f.end_s) lost.insert(b.hz);
  }
  EXPECT_FALSE(lost.empty());
  ExpectEveryBurstOnce(*t, lost);
  EXPECT_EQ(Uploads(server).size(), static_cast<size_t>(t->chunks)) << "a bad answer was retried";
}

TEST(OpenAiTranscriberTest, AServerWithoutWordTimesOrSegments) {
  const SpeechVideo video = BurstVideo();
  {
    FakeServerOptions fo;
    fo.model = "whisper-1";
    fo.extra_args = {"--no-word-timestamps", "--transcribe-shape", "whispercpp"};
    FakeModelServer server(fo);
    ASSERT_TRUE(server.started());
    Result<std::unique_ptr<Transcriber>> transcriber = CreateTranscriber(ServerOptions(server));
    ASSERT_TRUE(transcriber.ok());
    Result<FileTranscript> t = TranscribeFile(video.path, **transcriber, {});
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_TRUE(t->complete());
    ASSERT_FALSE(t->notes.empty());
    EXPECT_NE(t->notes.back().find("the server gives no word times"), std::string::npos);
    // Asked for words once, refused, then never again.
    int with_words = 0;
    for (const nlohmann::json& u : Uploads(server)) {
      with_words += u["fields"]["timestamp_granularities[]"].size() == 2 ? 1 : 0;
    }
    EXPECT_EQ(with_words, 1);
    EXPECT_EQ(Uploads(server).size(), static_cast<size_t>(t->chunks) + 1);
    for (const TranscriptSegment& s : t->segments) EXPECT_TRUE(s.words.empty());
    EXPECT_EQ(t->segments.size(), Bursts().size());
  }
  // Text only: a server that ignores response_format, and one that refuses verbose_json.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--transcribe-shape", "text"},
        std::vector<std::string>{"--no-verbose-json"}}) {
    SCOPED_TRACE(args.back());
    FakeServerOptions fo;
    fo.model = "whisper-1";
    fo.extra_args = args;
    FakeModelServer server(fo);
    ASSERT_TRUE(server.started());
    Result<std::unique_ptr<Transcriber>> transcriber = CreateTranscriber(ServerOptions(server));
    ASSERT_TRUE(transcriber.ok());
    Result<FileTranscript> t = TranscribeFile(video.path, **transcriber, {});
    ASSERT_TRUE(t.ok()) << t.status().message();
    // One segment per chunk, spanning it, at the chunk's place in the video.
    ASSERT_EQ(t->segments.size(), static_cast<size_t>(t->chunks));
    EXPECT_NE(t->notes.back().find("no segment times"), std::string::npos);
    EXPECT_NEAR(t->segments[0].start_s, 0.75, 0.04);
    EXPECT_EQ(t->segments[0].text, "tone 300 tone 340");
  }
}

TEST(OpenAiTranscriberTest, ARejectedKeyFailsEveryChunkWithoutRetrying) {
  FakeServerOptions fo;
  fo.model = "whisper-1";
  fo.api_key = "right";
  FakeModelServer server(fo);
  ASSERT_TRUE(server.started());
  TranscriberOptions o = ServerOptions(server);
  o.api_key = ApiKey::FromSecret("wrong");
  Result<std::unique_ptr<Transcriber>> transcriber = CreateTranscriber(o);
  ASSERT_TRUE(transcriber.ok());
  Result<FileTranscript> t = TranscribeFile(BurstVideo().path, **transcriber, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->failures.size(), static_cast<size_t>(t->chunks));
  EXPECT_EQ(t->failures[0].status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(t->failures[0].status.message().find("HTTP 401"), std::string::npos);
  EXPECT_EQ(t->failures[0].status.message().find("wrong"), std::string::npos) << "key leaked";
  EXPECT_EQ(Uploads(server).size(), static_cast<size_t>(t->chunks));
}

TEST(OpenAiTranscriberTest, BadOptionsAreRefusedAtOnce) {
  TranscriberOptions o;
  o.backend = "openai";
  EXPECT_EQ(CreateTranscriber(o).status().code(), ErrorCode::kInvalidArgument);
  o.endpoint = "localhost:8000";
  EXPECT_NE(CreateTranscriber(o).status().message().find("not a URL"), std::string::npos);
  o.backend = "whisper";
  EXPECT_NE(CreateTranscriber(o).status().message().find("unknown speech backend"),
            std::string::npos);
  o.backend = "pocketsphinx";
  o.language = "de";
  EXPECT_NE(CreateTranscriber(o).status().message().find("English only"), std::string::npos);
}

}  // namespace
}  // namespace reel::llm
