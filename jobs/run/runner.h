// The job runner: `reel run` without the command line. RunJob() takes the run lock and hands this
// shard's inputs to worker threads (one Store each) that plan, process and store each item in one
// transaction; one bad item never stops the batch, kill -9 loses no finished item, a non-zero
// *stop_signal interrupts the run. RunJob blocks until the run ends and joins its threads.
// Steps, crash safety and stopping: jobs/run/README.md, "Runner".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/model/model_run.h"
#include "jobs/model/usage_report.h"
#include "jobs/progress.h"
#include "jobs/run/shard.h"
#include "jobs/run_lock.h"
#include "jobs/spec/job_spec.h"
#include "storage/records.h"

namespace reel::jobs {

struct RunOptions {
  std::string database;        // see DatabasePathFor
  int workers = 0;             // items processed at once; 0 = min(4, cores)
  bool retry_failed = false;   // also redo items that failed with unchanged content / settings
  bool wait_for_lock = false;  // queue behind a running run instead of giving up
  bool ask_again = false;      // reel ask --again: answered questions are asked anew
  ShardSpec shard;
  ProgressReporter* progress = nullptr;  // required; not owned
  // Non-zero asks the run to stop; the value (the signal number) is reported. Not owned.
  const std::atomic<int>* stop_signal = nullptr;
  // The model stage (jobs/model/model_run.h): watches final answers stream in, and hears how each
  // (item, prompt) ended (reel ask).
  std::function<std::unique_ptr<llm::ChatObserver>(const std::string& item_path,
                                                   const std::string& prompt_id)>
      answer_observer;
  std::function<void(const PromptOutcome&)> on_prompt;
};

enum class RunResult {
  kSucceeded,        // this run did its work: every item done or skipped, every question asked
                     // (old failures not retried do not count: `reel status` lists them)
  kSomeFailed,       // finished; some items failed in this run
  kQuestionsFailed,  // finished; the items are fine but questions failed in this run, or could
                     // not be asked (the model server unreachable, the API key refused)
  kInterrupted,      // stopped by *stop_signal
  kLockHeld,         // another run holds the database (lock_owner says who)
  kInvalidJob,       // the inputs cannot be listed (a named file does not exist, ...)
  kError,            // the database could not be opened or written
};

// How a run's message (runs.message) begins the part saying the model server could not be
// reached, at the start or during the run (`reel status` reads it).
inline constexpr char kModelUnreachable[] = "model server unreachable: ";

struct RunOutcome {
  RunResult result = RunResult::kError;
  int stop_signal = 0;
  int64_t run_id = 0;
  storage::RunCounters counters;
  std::string message;                    // for kLockHeld, kInvalidJob, kError: what went wrong
  LockOwner lock_owner;                   // kLockHeld
  std::optional<RunReport> model_report;  // when the job has prompts
  // The job has an endpoint but its server could not be reached (or refused the model list):
  // why, with the URL tried; the questions wait. "" otherwise.
  std::string model_problem;
  ModelRunCounters model;
};

// The database a run writes: `db_flag` if given, else the job's storage.database (resolved
// against the job file's directory), with ".shard-I-of-N" before the extension when sharded and
// no `db_flag` was given.
std::string DatabasePathFor(const JobSpec& job, const std::optional<std::string>& db_flag,
                            const ShardSpec& shard);

// The job's inputs that belong to `shard`, sorted by path. Warnings (globs matching nothing)
// are appended to `warnings`. Errors: as ExpandInputs.
Result<std::vector<InputFile>> ShardInputs(const JobSpec& job, const ShardSpec& shard,
                                           std::vector<std::string>* warnings);

RunOutcome RunJob(const JobSpec& job, const RunOptions& options);

}  // namespace reel::jobs
