// A full disk under a run that asks the model: the disk fills (a fault-injecting SQLite VFS,
// tests/support/full_disk_vfs.h) at every write of a whole run (RunJob, as `reel run` does it)
// against the fake model server, and while an answer is on its way. Each time the run ends
// within a bounded time, fails loudly (the database named, "disk full"), is marked ended, and
// counts no answer it did not store; the next run, with room again, asks exactly the questions
// that have no stored answer and finishes the job.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "jobs/progress.h"
#include "jobs/run/runner.h"
#include "jobs/spec/job_spec.h"
#include "storage/query.h"
#include "tests/support/fake_model_server.h"
#include "tests/support/full_disk_vfs.h"
#include "tests/support/speech_media.h"
#include "tests/support/test_media.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

// A job asking `prompts` (1: "describe"; 2: also "facts", with a JSON schema) about the notes,
// against `endpoint` ("": none, the questions wait).
std::string JobText(int prompts, int concurrency, const std::string& endpoint) {
  std::string job =
      "name: disk\n"
      "inputs:\n"
      "  - notes/*.md\n"
      "context:\n"
      "  token_budget: 1400\n"
      "model:\n"
      "  endpoint: " +
      endpoint +
      "\n"
      "  max_output_tokens: 64\n"
      "  retries: 0\n"
      "  concurrency: " +
      std::to_string(concurrency) +
      "\n"
      "prompts:\n"
      "  - id: describe\n"
      "    question: Describe what happens.\n";
  if (prompts > 1) {
    job +=
        "  - id: facts\n"
        "    question: List the facts.\n"
        "    json_schema: {type: object, properties: {facts: {type: array, items: {type: "
        "string}}}, required: [facts]}\n";
  }
  return job;
}

// A folder with `documents` Markdown notes and the job (JobText).
std::string MakeJob(const std::string& name, int documents, int prompts, int concurrency,
                    const std::string& endpoint) {
  const std::string dir = ScratchDir(name);
  fs::remove_all(dir);
  fs::create_directories(dir + "/notes");
  for (int i = 0; i < documents; ++i) {
    std::ofstream(dir + "/notes/note" + std::to_string(i) + ".md")
        << "# Note " << i << "\n\nThe clips are test patterns, number " << i << ".\n";
  }
  std::ofstream(dir + "/job.yaml") << JobText(prompts, concurrency, endpoint);
  return dir;
}

struct BoundedRun {
  jobs::RunOutcome outcome;
  std::string log;  // what the run printed (quiet style, verbose)
  bool hung = false;
};

// RunJob on `dir`/job.yaml, stopped (as by SIGTERM) if it has not ended after `limit`.
BoundedRun RunBounded(const std::string& dir, std::chrono::seconds limit) {
  BoundedRun r;
  Result<jobs::JobSpec> job = jobs::LoadJobFile(dir + "/job.yaml");
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  if (!job.ok()) return r;
  std::FILE* log = std::tmpfile();
  std::atomic<int> stop{0};
  {
    jobs::ProgressReporter progress(jobs::ProgressStyle::kQuiet, log, /*verbose=*/true);
    jobs::RunOptions options;
    options.database = dir + "/out.db";
    options.workers = 2;
    options.progress = &progress;
    options.stop_signal = &stop;
    std::future<jobs::RunOutcome> running =
        std::async(std::launch::async, [&] { return jobs::RunJob(*job, options); });
    if (running.wait_for(limit) == std::future_status::timeout) {
      r.hung = true;
      stop.store(15);
    }
    r.outcome = running.get();
  }
  std::rewind(log);
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), log)) > 0) r.log.append(buffer, n);
  std::fclose(log);
  return r;
}

int64_t Count(const std::string& db, const std::string& sql) {
  Result<storage::Table> t = storage::Query(db, sql);
  EXPECT_TRUE(t.ok()) << sql << ": " << t.status().ToString();
  if (!t.ok() || t->rows.empty()) return -1;
  const storage::Value& v = t->rows[0][0];
  return std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v) : -1;
}

std::string Text(const std::string& db, const std::string& sql) {
  Result<storage::Table> t = storage::Query(db, sql);
  if (!t.ok() || t->rows.empty()) return "";
  return storage::FormatValue(t->rows[0][0]);
}

// After a run the disk stopped: it failed loudly and was marked ended; then, with room again,
// the next run asks exactly the questions without a stored answer and finishes the job.
void ExpectStoppedThenResumed(const std::string& dir, const BoundedRun& first,
                              FakeModelServer& server, FullDiskVfs& disk, int64_t tasks_total) {
  const std::string db = dir + "/out.db";
  EXPECT_FALSE(first.hung) << "the run did not end on its own\n" << first.log;
  EXPECT_EQ(first.outcome.result, jobs::RunResult::kError) << first.log;
  EXPECT_NE(first.outcome.message.find(db), std::string::npos) << first.outcome.message;
  EXPECT_NE(first.outcome.message.find("disk full"), std::string::npos) << first.outcome.message;
  // (`reel run` prints the message; the summary line, when the run got that far, never says
  // it succeeded.)
  EXPECT_EQ(first.log.find("reel run: succeeded"), std::string::npos) << first.log;
  disk.Empty();
  EXPECT_FALSE(fs::exists(db + ".reserve"));
  int64_t answered = 0;
  if (first.outcome.run_id > 0) {  // else the disk filled before the run was recorded
    EXPECT_EQ(
        Text(db, "SELECT status FROM runs WHERE id = " + std::to_string(first.outcome.run_id)),
        "failed")
        << first.log;
    // Never counted as answered unless stored.
    EXPECT_LE(first.outcome.model.prompts_answered,
              Count(db, "SELECT count(*) FROM latest_answers"));
    EXPECT_EQ(Count(db,
                    "SELECT count(*) FROM tasks t WHERE t.status = 'succeeded' AND NOT EXISTS "
                    "(SELECT 1 FROM responses p WHERE p.request_id = t.request_id)"),
              0);
    answered = Count(db, "SELECT count(*) FROM tasks WHERE status = 'succeeded'");
  }

  server.Reset();
  BoundedRun second = RunBounded(dir, std::chrono::seconds(60));
  ASSERT_FALSE(second.hung) << second.log;
  ASSERT_EQ(second.outcome.result, jobs::RunResult::kSucceeded) << second.outcome.message << "\n"
                                                                << second.log;
  EXPECT_EQ(Count(db, "SELECT count(*) FROM tasks WHERE status = 'succeeded'"), tasks_total);
  EXPECT_EQ(Count(db,
                  "SELECT count(*) FROM tasks t WHERE (SELECT count(*) FROM requests r JOIN "
                  "responses p ON p.request_id = r.id WHERE r.task_id = t.id) != 1"),
            0);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM requests WHERE status = 'sent'"), 0);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM runs WHERE status = 'running'"), 0);
  // Asked again: exactly what had no stored answer.
  EXPECT_EQ(static_cast<int64_t>(server.ChatLog().size()), tasks_total - answered);
}

// The disk fills at the k-th write of a run, for every `stride`-th k of the writes a whole run
// makes (items, contexts, questions, requests, answers, the run's own rows).
void SweepDiskFull(const std::string& name, int64_t stride) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const int kDocuments = 3;
  const int64_t kTasks = kDocuments * 2;
  const std::string dir = MakeJob(name, kDocuments, 2, 2, server.endpoint());
  FullDiskVfs disk(dir);
  ASSERT_TRUE(disk.registered());

  // A whole run with room for everything: how many writes it makes.
  BoundedRun clean = RunBounded(dir, std::chrono::seconds(60));
  ASSERT_EQ(clean.outcome.result, jobs::RunResult::kSucceeded) << clean.log;
  ASSERT_EQ(Count(dir + "/out.db", "SELECT count(*) FROM latest_answers"), kTasks);
  const int64_t writes = disk.writes();
  ASSERT_GT(writes, 20);
  SCOPED_TRACE(std::to_string(writes) + " writes in a whole run");

  int64_t tried = 0, stopped = 0;
  for (int64_t k = 1; k <= writes; k += stride) {
    SCOPED_TRACE("the disk fills at write " + std::to_string(k));
    ++tried;
    const std::string run_dir = MakeJob(name, kDocuments, 2, 2, server.endpoint());
    server.Reset();
    disk.FillAtWrite(k);
    BoundedRun first = RunBounded(run_dir, std::chrono::seconds(60));
    if (disk.refused() == 0 || first.outcome.result == jobs::RunResult::kSucceeded) {
      // Nothing refused (the run made fewer writes), or only what SQLite does on its own once
      // everything is committed (the checkpoint when the last connection closes: the log keeps
      // every page until a later one succeeds). Then the job is complete and nothing is lost.
      disk.Empty();
      EXPECT_FALSE(first.hung);
      EXPECT_EQ(first.outcome.result, jobs::RunResult::kSucceeded) << first.log;
      EXPECT_EQ(Count(run_dir + "/out.db", "SELECT count(*) FROM latest_answers"), kTasks);
      EXPECT_EQ(Text(run_dir + "/out.db", "SELECT group_concat(status) FROM runs"), "succeeded");
      continue;
    }
    ++stopped;
    ExpectStoppedThenResumed(run_dir, first, server, disk, kTasks);
    if (::testing::Test::HasFailure()) break;  // one k's story is enough to read
  }
  EXPECT_GT(stopped, tried * 3 / 4) << "most writes of a run must matter";
}

TEST(ModelDiskFullTest, AtEverySeventhWriteOfARunTheRunStopsLoudlyAndTheNextOneFinishes) {
  SweepDiskFull("disk_full_sweep7", 7);
}

// Every write (about 600; some minutes).
TEST(ModelDiskFullSlowTest, AtEveryWriteOfARunTheRunStopsLoudlyAndTheNextOneFinishes) {
  SweepDiskFull("disk_full_sweep", 1);
}

// The disk fills while a video's speech is transcribed (the speech stage stores each chunk as it
// comes back from a transcription server): at about 15 writes spread over a whole run, the run
// stops loudly, and the next one, with room again, sends only the chunks not stored and ends with
// the whole transcript, each piece once.
TEST(ModelDiskFullTest, WhileSpeechIsTranscribedTheRunStopsLoudlyAndTheNextSendsOnlyWhatIsMissing) {
  FakeServerOptions fo;
  fo.model = "whisper-1";
  FakeModelServer server(fo);
  ASSERT_TRUE(server.started());
  const SpeechVideo video = ToneBurstVideo();
  ASSERT_FALSE(video.path.empty());
  auto make_job = [&](const std::string& name) {
    const std::string dir = ScratchDir(name);
    fs::remove_all(dir);
    fs::create_directories(dir + "/media");
    fs::copy_file(video.path, dir + "/media/talk.mkv");
    std::ofstream(dir + "/job.yaml") << "name: speech-disk\ninputs: [media/talk.mkv]\n"
                                        "sampling: {policy: count, count: 2}\n"
                                        "speech:\n  enabled: true\n  endpoint: "
                                     << server.endpoint()
                                     << "\n  concurrency: 1\n  retries: 0\n"
                                        "prompts:\n  - id: what\n    question: What is said?\n";
    return dir;
  };
  const int64_t pieces = static_cast<int64_t>(video.placed.size());
  const std::string name = "speech_disk_full";
  const std::string dir = make_job(name);
  FullDiskVfs disk(dir);
  ASSERT_TRUE(disk.registered());
  BoundedRun clean = RunBounded(dir, std::chrono::seconds(120));
  ASSERT_EQ(clean.outcome.result, jobs::RunResult::kSucceeded) << clean.log;
  const int64_t chunks = Count(dir + "/out.db", "SELECT count(*) FROM transcript_chunks");
  ASSERT_EQ(server.TranscriptionUploads(), chunks);
  ASSERT_GT(chunks, 3);
  ASSERT_EQ(Count(dir + "/out.db", "SELECT count(*) FROM segments WHERE source = 'speech'"),
            pieces);
  const int64_t writes = disk.writes();
  SCOPED_TRACE(std::to_string(writes) + " writes in a whole run, " + std::to_string(chunks) +
               " chunks");
  // About 15 fill points spread over the run (every write: minutes).
  const int64_t stride = std::max<int64_t>(1, writes / 15);
  int64_t stopped = 0, mid_transcript = 0;
  for (int64_t k = 1; k <= writes; k += stride) {
    SCOPED_TRACE("the disk fills at write " + std::to_string(k));
    const std::string run_dir = make_job(name);
    const std::string db = run_dir + "/out.db";
    server.Reset();
    disk.FillAtWrite(k);
    BoundedRun first = RunBounded(run_dir, std::chrono::seconds(120));
    disk.Empty();
    ASSERT_FALSE(first.hung) << first.log;
    if (first.outcome.result == jobs::RunResult::kSucceeded) continue;  // past the last write
    ++stopped;
    EXPECT_EQ(first.outcome.result, jobs::RunResult::kError) << first.log;
    EXPECT_NE(first.outcome.message.find("disk full"), std::string::npos) << first.outcome.message;
    // (The disk may have filled before the database had its tables.)
    Result<storage::Table> stored_rows =
        storage::Query(db, "SELECT count(*) FROM transcript_chunks");
    const int64_t stored = stored_rows.ok() && !stored_rows->rows.empty()
                               ? std::get<int64_t>(stored_rows->rows[0][0])
                               : 0;
    mid_transcript += stored > 0 && stored < chunks;
    server.Reset();
    BoundedRun second = RunBounded(run_dir, std::chrono::seconds(120));
    ASSERT_EQ(second.outcome.result, jobs::RunResult::kSucceeded) << second.outcome.message << "\n"
                                                                  << second.log;
    EXPECT_EQ(server.TranscriptionUploads(), chunks - std::max<int64_t>(stored, 0))
        << "only the chunks not stored";
    EXPECT_EQ(Text(db, "SELECT status FROM transcripts"), "done");
    EXPECT_EQ(Count(db, "SELECT count(*) FROM transcript_chunks"), chunks);
    EXPECT_EQ(Count(db, "SELECT count(*) FROM segments WHERE source = 'speech'"), pieces);
    EXPECT_EQ(Count(db, "SELECT count(DISTINCT text) FROM segments WHERE source = 'speech'"),
              pieces);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(stopped, 3);
  EXPECT_GT(mid_transcript, 0) << "some fill point fell between two chunks";
}

// The reported hang: the disk fills while an answer is on its way. Before, the answer was lost
// with a warning, and the sender thread then tried to record the next question's request again
// and again, forever (each failed write left the question waiting, and re-planning queued it
// again), holding the run's lock.
TEST(ModelDiskFullTest, WhileAnAnswerIsOnItsWayTheRunEndsInsteadOfLooping) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const int kDocuments = 20;
  // The items and their questions first (no endpoint), so the disk fills in the model stage.
  const std::string dir = MakeJob("disk_full_answer", kDocuments, 1, 1, "");
  ASSERT_EQ(RunBounded(dir, std::chrono::seconds(60)).outcome.result, jobs::RunResult::kSucceeded);
  std::ofstream(dir + "/job.yaml", std::ios::trunc) << JobText(1, 1, server.endpoint());
  FullDiskVfs disk(dir);
  ASSERT_TRUE(disk.registered());
  server.Script(R"([{"kind": "slow", "seconds": 0.5, "times": 1}])");
  std::atomic<bool> done{false};
  std::thread filler([&] {  // fills the disk once the first question has reached the server
    while (!done.load()) {
      if (!server.ChatLog().empty()) {
        disk.FillNow();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  const auto started = std::chrono::steady_clock::now();
  BoundedRun first = RunBounded(dir, std::chrono::seconds(60));
  done.store(true);
  filler.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_GT(disk.refused(), 0) << "the disk never filled";
  EXPECT_LT(seconds, 30) << first.log;
  // The answer that came was not stored, so not counted; no other question was sent.
  EXPECT_EQ(first.outcome.model.prompts_answered, 0);
  EXPECT_EQ(server.ChatLog().size(), 1u);
  EXPECT_NE(first.outcome.message.find("the answer arrived but could not be stored"),
            std::string::npos)
      << first.outcome.message;
  ExpectStoppedThenResumed(dir, first, server, disk, kDocuments);
}

}  // namespace
}  // namespace reel::testing
