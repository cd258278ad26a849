// Speech in a job (`speech:`): the transcript of each video stored as segments with source
// "speech" (absolute times, backend and model recorded), found by `reel search`, interleaved with
// the frames in contexts as `prefer` says, shown on the storyboard page; chunks stored as they are
// done, so a server that fails some of them costs only those on the next run, and a changed
// speech setting re-transcribes without redoing the frames.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_test_util.h"
#include "tests/support/fake_model_server.h"
#include "tests/support/speech_media.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

void ReplaceInJob(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = ReadText(path);
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  WriteText(path, text);
}

// A job over one video with speech (tone bursts the fake server "transcribes" as "tone HZ").
std::string ToneBurstJob(const std::string& test, const std::string& speech) {
  const std::string dir = ScratchDir(test);
  const SpeechVideo video = ToneBurstVideo();
  EXPECT_FALSE(video.path.empty());
  fs::create_directories(dir + "/media");
  fs::copy_file(video.path, dir + "/media/talk.mkv", fs::copy_options::overwrite_existing);
  WriteText(dir + "/job.yaml", "name: " + test +
                                   "\ninputs:\n  - media/*.mkv\n"
                                   "sampling:\n  policy: count\n  count: 4\n"
                                   "storage:\n  database: out.db\n" +
                                   speech +
                                   "prompts:\n"
                                   "  - id: what\n    question: What is said?\n");
  return dir;
}

TEST(SpeechJobTest, AFailedChunkIsRetriedAloneAndTheTranscriptReachesSearchAndContexts) {
  FakeServerOptions fo;
  fo.model = "whisper-1";
  FakeModelServer server(fo);
  ASSERT_TRUE(server.started());
  const std::string dir = ToneBurstJob(
      "speech_job_resume", "speech:\n  enabled: true\n  endpoint: " + server.endpoint() +
                               "\n  model: whisper-1\n  retries: 0\n");
  const std::string db = dir + "/out.db";
  const SpeechVideo video = ToneBurstVideo();

  // The server fails one chunk: the transcript is partial, the item's frames are stored, and its
  // questions wait (no context) for the rest of its speech.
  server.Script(R"([{"kind": "status", "status": 500, "times": 1, "match": "chunk-00002.wav"}])");
  CommandResult first = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(first.exit_code, 3) << "cron hears of it: " << first.err;
  EXPECT_NE(first.err.find("speech chunks not transcribed"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("1 file's speech is not fully transcribed"), std::string::npos)
      << first.err;
  const int first_uploads = server.TranscriptionUploads();
  EXPECT_GE(first_uploads, 3);
  nlohmann::json t = QueryJson(db, "SELECT * FROM transcripts");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0]["status"], "partial");
  EXPECT_EQ(t[0]["backend"], "openai");
  EXPECT_EQ(t[0]["model"], "whisper-1");
  EXPECT_EQ(t[0]["failed_chunks"], 1);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM frames"), 4);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts"), 0) << "questions wait";
  const int64_t stored_first =
      QueryInt(db, "SELECT count(*) FROM segments WHERE source = 'speech'");
  EXPECT_GT(stored_first, 0);
  EXPECT_LT(stored_first, static_cast<int64_t>(video.placed.size()));

  // The next run sends only the chunk that failed, finishes the transcript and builds contexts.
  server.Reset();
  CommandResult second = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(LastJsonLine(second.err)["skipped"], 1) << "the item itself is not redone";
  EXPECT_EQ(server.TranscriptionUploads(), 1) << "only the failed chunk is sent again";
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM transcripts WHERE status = 'done'"), 1);
  // Every burst once, at the time it was placed (the server's times are relative to its chunk).
  nlohmann::json segments =
      QueryJson(db,
                "SELECT text, start_seconds FROM segments WHERE source = 'speech' "
                "ORDER BY start_seconds");
  ASSERT_EQ(segments.size(), video.placed.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    EXPECT_EQ(segments[i]["text"], video.placed[i].text);
    EXPECT_NEAR(segments[i]["start_seconds"].get<double>(), video.placed[i].onset_s, 0.05)
        << video.placed[i].text;
  }
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts"), 1);

  // Search finds the words and their time; the context interleaves them with the frames.
  CommandResult found = Reel("search --db out.db \"tone 380\" --format json", dir);
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_NE(found.out.find("talk.mkv"), std::string::npos) << found.out;
  EXPECT_NE(found.out.find("speech"), std::string::npos) << found.out;
  CommandResult request = Reel("context job.yaml media/talk.mkv --request req.json", dir);
  ASSERT_EQ(request.exit_code, 0) << request.err;
  const std::string body = ReadText(dir + "/req.json");
  EXPECT_NE(body.find("tone 380"), std::string::npos);
  EXPECT_NE(body.find("tone 1260"), std::string::npos) << "the last burst, at 71.5 s";

  // The storyboard page shows the transcript beside the frames and says where it came from.
  ASSERT_EQ(Reel("report --job job.yaml -o report", dir).exit_code, 0);
  std::string page;
  for (const auto& entry : fs::directory_iterator(dir + "/report/items")) {
    page += ReadText(entry.path().string());
  }
  EXPECT_NE(page.find("class=\"sub speech\""), std::string::npos);
  EXPECT_NE(page.find("transcribed by whisper-1"), std::string::npos);

  // A changed speech setting re-transcribes everything and rebuilds the context, but does not
  // redo the item; a third run with nothing changed sends nothing.
  ReplaceInJob(dir + "/job.yaml", "  retries: 0\n", "  retries: 0\n  max_chunk: 10\n");
  server.Reset();
  CommandResult third = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(LastJsonLine(third.err)["skipped"], 1);
  EXPECT_GT(server.TranscriptionUploads(), first_uploads) << "10 s chunks: more of them";
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM segments WHERE source = 'speech'"),
            static_cast<int64_t>(video.placed.size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts WHERE superseded_at IS NULL"), 1);
  server.Reset();
  CommandResult fourth = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(fourth.exit_code, 0) << fourth.err;
  EXPECT_EQ(server.TranscriptionUploads(), 0);
}

// Killed while a chunk is being transcribed: the chunks stored stay, and the next run sends only
// the rest; every burst ends up stored once.
TEST(SpeechJobTest, AKilledRunResumesAtTheFirstChunkNotStored) {
  FakeServerOptions fo;
  fo.model = "whisper-1";
  FakeModelServer server(fo);
  ASSERT_TRUE(server.started());
  const std::string dir =
      ToneBurstJob("speech_job_kill", "speech:\n  enabled: true\n  endpoint: " + server.endpoint() +
                                          "\n  concurrency: 1\n");
  const std::string db = dir + "/out.db";
  server.Script(R"([{"kind": "stall", "seconds": 60, "match": "chunk-00004.wav"}])");
  {
    ReelProcess run({"run", dir + "/job.yaml"}, dir + "/run.err");
    ASSERT_GT(run.pid(), 0);
    ASSERT_TRUE(WaitFor([&] { return PollInt(db, "SELECT count(*) FROM transcript_chunks") == 4; },
                        std::chrono::seconds(60)))
        << ReadText(dir + "/run.err");
    run.Signal(SIGKILL);
    EXPECT_EQ(run.Wait(), 128 + SIGKILL);
  }
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM transcripts WHERE status = 'running'"), 1);
  EXPECT_GE(server.TranscriptionUploads(), 4) << "chunks 0-3 (and perhaps the one that stalled)";
  server.Reset();
  CommandResult again = Reel("run job.yaml", dir);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.TranscriptionUploads(), 3) << "chunks 4, 5 and 6 only";
  const SpeechVideo video = ToneBurstVideo();
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM segments WHERE source = 'speech'"),
            static_cast<int64_t>(video.placed.size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(DISTINCT text) FROM segments WHERE source = 'speech'"),
            static_cast<int64_t>(video.placed.size()));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts"), 1);
}

TEST(SpeechJobTest, PreferChoosesBetweenSubtitlesAndTheTranscript) {
  FakeServerOptions fo;
  fo.model = "whisper-1";
  FakeModelServer server(fo);
  ASSERT_TRUE(server.started());
  const std::string dir = ToneBurstJob(
      "speech_job_prefer", "speech:\n  enabled: true\n  endpoint: " + server.endpoint() + "\n");
  WriteText(dir + "/media/talk.srt", "1\n00:00:01,000 --> 00:00:02,000\nA subtitle line\n");
  auto request_body = [&]() {
    CommandResult run = Reel("run job.yaml", dir);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    CommandResult request = Reel("context job.yaml media/talk.mkv --request req.json", dir);
    EXPECT_EQ(request.exit_code, 0) << request.err;
    return ReadText(dir + "/req.json");
  };
  std::string body = request_body();  // prefer: subtitles (the default)
  EXPECT_NE(body.find("A subtitle line"), std::string::npos);
  EXPECT_EQ(body.find("tone 380"), std::string::npos);
  const int once = server.TranscriptionUploads();
  EXPECT_GE(once, 3);
  ReplaceInJob(dir + "/job.yaml", "  enabled: true\n", "  enabled: true\n  prefer: speech\n");
  body = request_body();
  EXPECT_EQ(body.find("A subtitle line"), std::string::npos);
  EXPECT_NE(body.find("tone 380"), std::string::npos);
  ReplaceInJob(dir + "/job.yaml", "  prefer: speech\n", "  prefer: both\n");
  body = request_body();
  EXPECT_NE(body.find("A subtitle line"), std::string::npos);
  EXPECT_NE(body.find("tone 380"), std::string::npos);
  EXPECT_EQ(server.TranscriptionUploads(), once)
      << "prefer changes contexts only: transcribed once";
  // Speech off: the transcript stays searchable but no context takes it.
  ReplaceInJob(dir + "/job.yaml", "  enabled: true\n", "  enabled: false\n");
  ReplaceInJob(dir + "/job.yaml", "  prefer: both\n", "  prefer: speech\n");
  body = request_body();
  EXPECT_EQ(body.find("tone 380"), std::string::npos);
  EXPECT_NE(body.find("A subtitle line"), std::string::npos);
  EXPECT_GT(QueryInt(dir + "/out.db", "SELECT count(*) FROM segments WHERE source = 'speech'"), 0);
}

// Offline, through a job: sentences read by flite's recorded voices, mixed into a video over
// noise at known times, transcribed by PocketSphinx with nothing running.
TEST(SpeechJobTest, OfflineTranscriptHasTheWordsAtTheirTimes) {
  if (!HaveFlite() || !HavePocketSphinxModel()) GTEST_SKIP() << "flite or the model is missing";
  // Four sentences: the job's plumbing (recognition itself is measured on all ten and on real
  // recordings in tests/llm/speech/pocketsphinx_itest.cc).
  const SpeechVideo video = HarvardVideo(-50, /*sentences=*/4);
  ASSERT_FALSE(video.path.empty());
  const std::string dir = ScratchDir("speech_job_offline");
  fs::create_directories(dir + "/media");
  fs::copy_file(video.path, dir + "/media/harvard.mp4", fs::copy_options::overwrite_existing);
  WriteText(dir + "/job.yaml",
            "name: offline\ninputs:\n  - media/*.mp4\nsampling:\n  policy: count\n  count: 2\n"
            "storage:\n  database: out.db\nspeech:\n  enabled: true\n"
            "prompts:\n  - id: what\n    question: What is said?\n");
  CommandResult run = Reel("run job.yaml", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string db = dir + "/out.db";
  nlohmann::json t = QueryJson(db, "SELECT backend, model, status FROM transcripts");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0]["backend"], "pocketsphinx");
  EXPECT_EQ(t[0]["status"], "done");
  std::vector<TimedWord> words;
  for (const nlohmann::json& s :
       QueryJson(db,
                 "SELECT words_json FROM segments WHERE source = 'speech' "
                 "ORDER BY start_seconds")) {
    for (const nlohmann::json& w : nlohmann::json::parse(s["words_json"].get<std::string>())) {
      words.push_back({w["start"].get<double>(), w["end"].get<double>(), w["text"]});
    }
  }
  const TranscriptScore score = ScoreTranscript(video.placed, words);
  std::printf("reel run with speech, flite over noise:\n%s", score.Table().c_str());
  EXPECT_LE(score.total.rate(), 0.45) << score.Table();  // as `reel transcribe`: 38.2%
  for (const PieceScore& p : score.pieces) {
    EXPECT_NEAR(p.first_word_s, p.onset_s, 0.5) << p.reference;
  }
  CommandResult request = Reel("context job.yaml media/harvard.mp4 --request req.json", dir);
  ASSERT_EQ(request.exit_code, 0) << request.err;
  const std::string body = ReadText(dir + "/req.json");
  EXPECT_NE(body.find(words.front().text), std::string::npos) << "the transcript is in it";
}

}  // namespace
}  // namespace reel::testing
