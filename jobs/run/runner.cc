#include "jobs/run/runner.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include "jobs/context/item_context.h"

#include "base/file_util.h"
#include "base/utf8.h"
#include "jobs/context/group_context.h"
#include "jobs/context/item_context.h"
#include "jobs/model/request_setup.h"
#include "jobs/run/item_plan.h"
#include "jobs/run/item_processor.h"
#include "jobs/stages/stages.h"
#include "storage/busy_retry.h"
#include "storage/sha256.h"
#include "storage/space_reserve.h"
#include "storage/store.h"
#include "storage/tasks.h"

namespace reel::jobs {
namespace {

using Clock = std::chrono::steady_clock;

// Space kept beside the database (`<db>.reserve`) and given back when the disk fills up, so the
// run can still record its end: a few WAL frames are enough.
constexpr int64_t kEndOfRunReserveBytes = 256 * 1024;

using storage::RetryBusy;  // a write the busy timeout did not let through runs again

// Shared by the workers of one run.
class Batch {
 public:
  Batch(const JobSpec& job, const RunOptions& options, const std::vector<InputFile>& inputs,
        int64_t job_id, int64_t run_id, ModelRun* model)
      : job_(job),
        options_(options),
        inputs_(inputs),
        job_id_(job_id),
        run_id_(run_id),
        model_(model),
        processor_([&job, &options, model] {
          ItemProcessor processor = ItemProcessor::ForJob(job, options.database);
          if (model != nullptr) processor.AddStoredStage(MakeModelStage(model));
          return processor;
        }()) {}

  // The body of one worker thread.
  void Work() {
    Result<storage::Store> store = storage::Store::Open(options_.database);
    if (!store.ok()) {
      Fatal(store.status());
    } else {
      while (!cancel_.load()) {
        size_t index = next_.fetch_add(1);
        if (index >= inputs_.size()) break;
        HandleItem(*store, inputs_[index]);
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++workers_finished_;
    finished_cv_.notify_all();
  }

  // Waits for `workers` workers, turning a stop request into cancellation and keeping the run's
  // counters and the progress line fresh.
  void Supervise(storage::Store& store, int workers) {
    auto last_update = Clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (workers_finished_ < workers) {
      finished_cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (options_.stop_signal != nullptr && options_.stop_signal->load() != 0) {
        cancel_.store(true);
        if (model_ != nullptr) model_->Cancel();
      }
      // A database write failed in the model stage, or here: the whole run stops.
      if (model_ != nullptr) {
        if (Status failed = model_->fatal_error(); !failed.ok() && fatal_error_.ok()) {
          fatal_error_ = failed;
          cancel_.store(true);
        }
        if (!fatal_error_.ok()) model_->Cancel();
      }
      if (Clock::now() - last_update > std::chrono::seconds(1)) {
        storage::RunCounters counters = counters_;
        lock.unlock();
        // Best effort (the final FinishRun writes them again), but a full disk stops the run.
        StopIfDiskFull(store.UpdateRunCounters(run_id_, counters));
        options_.progress->Tick();
        lock.lock();
        last_update = Clock::now();
      }
    }
  }

  storage::RunCounters counters() {
    std::lock_guard<std::mutex> lock(mutex_);
    return counters_;
  }
  // Items skipped because they failed before with the same content and settings.
  int64_t still_failed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return still_failed_;
  }
  bool cancelled() const { return cancel_.load(); }
  Status fatal_error() {
    std::lock_guard<std::mutex> lock(mutex_);
    return fatal_error_;
  }

 private:
  void Fatal(const Status& status) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fatal_error_.ok()) fatal_error_ = status;
    cancel_.store(true);
  }

  // A full disk stops the run (the items and questions not finished wait for the next run; none
  // is marked failed for it). Returns whether `status` was that.
  bool StopIfDiskFull(const Status& status) {
    if (status.code() != ErrorCode::kDiskFull) return false;
    Fatal(status);
    return true;
  }

  void CountSkipped(bool failed_before) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counters_.items_skipped;
    if (failed_before) ++still_failed_;
  }
  void CountFailed() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counters_.items_failed;
  }
  void CountDone(const storage::ItemOutputs& outputs) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counters_.items_done;
    counters_.frames += static_cast<int64_t>(outputs.frames.size());
    counters_.segments += static_cast<int64_t>(outputs.segments.size());
  }

  void LogEvent(storage::Store& store, std::optional<int64_t> item_id, storage::EventLevel level,
                const std::string& message) {
    Status logged = RetryBusy([&] {
      return store.LogEvent(
          {.run_id = run_id_, .item_id = item_id, .level = level, .message = message});
    });
    // The event log is best effort (the item's own row holds its outcome), but a full disk
    // stops the run.
    StopIfDiskFull(logged);
  }

  // Records a failure: the item row (created if needed) says failed with `error`.
  void Fail(storage::Store& store, std::optional<int64_t> item_id, const ItemPlan* plan,
            const InputFile& input, const std::string& error, int attempts) {
    if (!item_id) {
      storage::ItemRecord record;
      record.job_id = job_id_;
      record.path = DisplayPath(input.path);
      record.kind = ToItemKind(input.kind);
      record.settings_hash = ItemSettingsHash(job_, input);
      if (plan != nullptr) {
        record.content_hash = plan->content_hash;
        record.size_bytes = plan->facts.size_bytes;
        record.mtime_ns = plan->facts.mtime_ns;
        record.inode = plan->facts.inode;
      }
      Result<int64_t> id = RetryBusy([&] { return store.UpsertItem(record); });
      if (id.ok()) item_id = *id;
      if (!id.ok()) StopIfDiskFull(id.status());
    }
    if (item_id) {
      Status marked = RetryBusy([&] { return store.MarkItemFailed(*item_id, error); });
      StopIfDiskFull(marked);  // the item is done again by the next run
      if (!marked.ok()) {
        options_.progress->Warning(input.path +
                                   ": could not record the failure: " + marked.message());
      }
    }
    LogEvent(store, item_id, storage::EventLevel::kError, error);
    CountFailed();
    options_.progress->ItemFailed(input.path, error, attempts);
  }

  void HandleItem(storage::Store& store, const InputFile& input) {
    const std::string settings_hash = ItemSettingsHash(job_, input);
    Result<ItemPlan> planned = RetryBusy([&] {
      return PlanItem(&store, job_id_, input, settings_hash,
                      {.retry_failed = options_.retry_failed}, &cancel_);
    });
    if (!planned.ok()) {
      if (cancel_.load() || StopIfDiskFull(planned.status())) return;
      Fail(store, std::nullopt, nullptr, input, planned.status().message(), 0);
      return;
    }
    const ItemPlan& plan = *planned;
    storage::ItemRecord record;
    record.job_id = job_id_;
    record.path = DisplayPath(input.path);
    record.kind = ToItemKind(input.kind);
    record.content_hash = plan.content_hash;
    record.size_bytes = plan.facts.size_bytes;
    record.mtime_ns = plan.facts.mtime_ns;
    record.inode = plan.facts.inode;
    record.settings_hash = plan.settings_hash;

    if (plan.action == PlanAction::kSkip) {
      // The kind its processing found (a video container holding sound alone is audio).
      if (plan.stored) record.kind = plan.stored->kind;
      if (plan.facts_changed) {  // touched but unchanged: remember the new facts, keep status
        Result<int64_t> id = RetryBusy([&] { return store.UpsertItem(record); });
        if (!id.ok() && StopIfDiskFull(id.status())) return;
        if (!id.ok()) options_.progress->Warning(id.status().message());
      }
      CountSkipped(plan.stored && plan.stored->status == storage::ItemStatus::kFailed);
      options_.progress->ItemSkipped(input.path, plan.reason);
      // An up-to-date item may still need contexts: a prompt or a context setting changed.
      if (plan.stored && plan.stored->status == storage::ItemStatus::kDone) {
        ItemWork work;
        work.job = &job_;
        work.input = input;
        work.cancel = &cancel_;
        for (const auto& stage : processor_.stored_stages()) {
          if (cancel_.load()) return;
          Status s = stage->Run(store, plan.stored->id, run_id_, work);
          if (StopIfDiskFull(s)) return;
          if (!s.ok()) {
            LogEvent(store, plan.stored->id, storage::EventLevel::kWarning, s.message());
            options_.progress->Warning(s.message());
          }
          if (work.failed) {  // e.g. an audio item whose audio could not be read after all
            LogEvent(store, plan.stored->id, storage::EventLevel::kError, *work.failed);
            options_.progress->Warning(*work.failed);
            break;
          }
        }
      }
      return;
    }

    options_.progress->ItemStarted(input.path);
    Result<int64_t> id = RetryBusy([&] { return store.UpsertItem(record); });
    if (!id.ok()) {
      if (StopIfDiskFull(id.status())) return;
      Fail(store, std::nullopt, &plan, input, id.status().message(), 0);
      return;
    }
    const int64_t item_id = *id;
    const int max_attempts = 1 + std::max(0, job_.limits.item_retries);
    Status last;
    for (int attempt = 1; attempt <= max_attempts; ++attempt) {
      if (cancel_.load()) {
        Abandon(store, item_id);
        return;
      }
      Status running = RetryBusy([&] { return store.MarkItemRunning(item_id, run_id_); });
      if (!running.ok()) {
        if (StopIfDiskFull(running)) return;
        last = running;
        break;
      }
      auto started = Clock::now();
      Result<ItemWork> work = processor_.Process(job_, input, &cancel_);
      if (work.ok()) {
        last = RetryBusy([&] { return store.MarkItemDone(item_id, work->outputs); });
        if (last.ok()) {
          for (const auto& stage : processor_.stored_stages()) {
            if (cancel_.load()) break;
            Status s = stage->Run(store, item_id, run_id_, *work);
            if (StopIfDiskFull(s)) break;
            if (!s.ok()) work->warnings.push_back(s.message());
            if (work->failed) break;
          }
          for (const std::string& warning : work->warnings) {
            LogEvent(store, item_id, storage::EventLevel::kWarning, warning);
            options_.progress->Warning(warning);
          }
          for (const std::string& note : work->notes) {
            LogEvent(store, item_id, storage::EventLevel::kInfo, note);
          }
          if (work->failed) {  // marked failed by a stage after it was stored
            LogEvent(store, item_id, storage::EventLevel::kError, *work->failed);
            CountFailed();
            options_.progress->ItemFailed(input.path, *work->failed, attempt);
            return;
          }
          CountDone(work->outputs);
          double seconds = std::chrono::duration<double>(Clock::now() - started).count();
          options_.progress->ItemDone(input.path, static_cast<int64_t>(work->outputs.frames.size()),
                                      static_cast<int64_t>(work->outputs.segments.size()), seconds);
          return;
        }
      } else {
        last = work.status();
      }
      if (StopIfDiskFull(last) || cancel_.load()) {
        Abandon(store, item_id);
        return;
      }
      if (!IsTransient(last) || attempt == max_attempts) break;
      options_.progress->Warning(input.path + ": attempt " + std::to_string(attempt) +
                                 " failed, retrying: " + last.message());
      std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
    }
    std::string error = last.message();
    if (error.find(input.path) == std::string::npos) error = input.path + ": " + error;
    KeepTextOfFailedItem(store, item_id, input);
    Fail(store, item_id, &plan, input, error, max_attempts);
  }

  // A video that failed keeps the text that needs no pictures (its side-car subtitles, its text
  // streams), stored and searchable, before the item is marked failed. A failure to store it is
  // a warning: the item's own failure is what is reported.
  void KeepTextOfFailedItem(storage::Store& store, int64_t item_id, const InputFile& input) {
    if (cancel_.load()) return;
    std::vector<std::string> warnings;
    std::vector<storage::SegmentRecord> segments =
        processor_.TextOfFailedItem(job_, input, &cancel_, &warnings);
    for (const std::string& warning : warnings) {
      LogEvent(store, item_id, storage::EventLevel::kWarning, warning);
      options_.progress->Warning(warning);
    }
    if (segments.empty()) return;
    Status kept = RetryBusy([&] { return store.ReplaceItemSegments(item_id, segments); });
    if (StopIfDiskFull(kept)) return;
    if (!kept.ok()) {
      options_.progress->Warning(input.path + ": could not keep its subtitles: " + kept.message());
      return;
    }
    std::set<std::string> sources;
    for (const storage::SegmentRecord& segment : segments) sources.insert(segment.source);
    std::string from;
    for (const std::string& source : sources) from += (from.empty() ? "" : ", ") + source;
    const std::string message = input.path + ": the video failed, its " +
                                std::to_string(segments.size()) +
                                (segments.size() == 1 ? " subtitle cue" : " subtitle cues") + " (" +
                                from + ") are kept and searchable";
    LogEvent(store, item_id, storage::EventLevel::kWarning, message);
    options_.progress->Warning(message);
  }

  // A stopped item goes back to 'pending' (it was never half-stored: outputs are written only
  // by MarkItemDone). If even this fails, the next run still redoes it ('running' counts as
  // to-do).
  void Abandon(storage::Store& store, int64_t item_id) {
    Status reset = store.database().Execute(
        "UPDATE items SET status = 'pending' WHERE status = 'running' AND id = " +
        std::to_string(item_id));
    (void)reset;
  }

  const JobSpec& job_;
  const RunOptions& options_;
  const std::vector<InputFile>& inputs_;
  const int64_t job_id_;
  const int64_t run_id_;
  ModelRun* const model_;
  const ItemProcessor processor_;

  std::atomic<size_t> next_{0};
  std::atomic<bool> cancel_{false};
  std::mutex mutex_;
  std::condition_variable finished_cv_;
  int workers_finished_ = 0;
  storage::RunCounters counters_;
  int64_t still_failed_ = 0;
  Status fatal_error_;  // a write failed so that the run cannot go on (a full disk)
};

// Runs a crash left 'running' (we hold the lock, so no live run can own them) become
// 'interrupted'.
// Errors: only a full disk (anything else is a warning).
Status MarkAbandonedRuns(storage::Store& store, ProgressReporter& progress) {
  Result<std::vector<storage::RunRecord>> abandoned = RetryBusy([&] {
    return store.InterruptAbandonedRuns(
        "the process ended without finishing the run (killed or crashed); found by a later run");
  });
  if (!abandoned.ok()) {
    if (abandoned.status().code() == ErrorCode::kDiskFull) return abandoned.status();
    progress.Warning("could not mark unfinished earlier runs interrupted: " +
                     abandoned.status().message());
    return Status::Ok();
  }
  for (const storage::RunRecord& run : *abandoned) {
    progress.Warning("run " + std::to_string(run.id) + " (pid " + std::to_string(run.pid) + " on " +
                     run.host + ", started " + run.started_at +
                     ") did not finish; marked interrupted. Its unfinished items are redone.");
  }
  return Status::Ok();
}

// The message of a run a full disk stopped.
std::string DiskFullMessage(const std::string& database, const Status& error) {
  std::string text = error.message();
  if (text.find(database) == std::string::npos) text = database + ": " + text;
  return text +
         "; the run stopped: free some space and run it again (what is stored is kept; unfinished "
         "items and unanswered questions are done then)";
}

// Records the run's end. On a full disk the reserve goes back to SQLite first, and the run is
// recorded failed (`*status`, `*message` say so afterwards). Returns the write's status.
Status EndRun(storage::Store& store, int64_t run_id, const storage::RunCounters& counters,
              storage::RunStatus* status, std::optional<std::string>* message,
              storage::SpaceReserve& reserve) {
  Status finished = RetryBusy([&] { return store.FinishRun(run_id, *status, counters, *message); });
  if (finished.ok() || finished.code() != ErrorCode::kDiskFull) return finished;
  if (*status != storage::RunStatus::kFailed) {
    *status = storage::RunStatus::kFailed;
    *message = DiskFullMessage(store.database().path(), finished);
  }
  reserve.Release();
  return RetryBusy([&] { return store.FinishRun(run_id, *status, counters, *message); });
}

int DefaultWorkers() {
  unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(cores, 1u, 4u));
}

}  // namespace

std::string DatabasePathFor(const JobSpec& job, const std::optional<std::string>& db_flag,
                            const ShardSpec& shard) {
  if (db_flag) return *db_flag;
  return ShardDatabasePath(ResolveJobPath(job.base_dir, job.storage.database), shard);
}

Result<std::vector<InputFile>> ShardInputs(const JobSpec& job, const ShardSpec& shard,
                                           std::vector<std::string>* warnings) {
  REEL_ASSIGN_OR_RETURN(std::vector<InputFile> inputs, ExpandInputs(job, warnings));
  if (!shard.sharded()) return inputs;
  std::vector<InputFile> mine;
  for (InputFile& input : inputs) {
    if (InShard(shard, job.base_dir, input.path)) mine.push_back(std::move(input));
  }
  return mine;
}

RunOutcome RunJob(const JobSpec& job_as_given, const RunOptions& options) {
  const JobSpec& job = job_as_given;
  RunOutcome outcome;
  ProgressReporter& progress = *options.progress;
  auto stop_requested = [&] {
    return options.stop_signal != nullptr && options.stop_signal->load() != 0;
  };
  const auto started = Clock::now();

  std::filesystem::path parent = std::filesystem::path(options.database).parent_path();
  if (!parent.empty()) {
    Status made = MakeDirectories(parent.string());
    if (!made.ok()) {
      outcome.message = made.message();
      return outcome;
    }
  }

  Result<RunLock> lock = [&]() -> Result<RunLock> {
    if (!options.wait_for_lock) return RunLock::TryAcquire(options.database, &outcome.lock_owner);
    return RunLock::Acquire(
        options.database,
        [&](const LockOwner& owner) {
          progress.Info("waiting for the run holding " + options.database + " (" +
                        owner.Describe() + ")");
        },
        stop_requested);
  }();
  if (!lock.ok()) {
    outcome.message = lock.status().message();
    if (lock.status().code() == ErrorCode::kUnavailable) {
      outcome.result = RunResult::kLockHeld;
    } else if (lock.status().code() == ErrorCode::kCancelled) {
      outcome.result = RunResult::kInterrupted;
      outcome.stop_signal = options.stop_signal ? options.stop_signal->load() : 0;
    }
    return outcome;
  }

  std::vector<std::string> warnings;
  Result<std::vector<InputFile>> inputs = ShardInputs(job, options.shard, &warnings);
  if (!inputs.ok()) {
    outcome.result = RunResult::kInvalidJob;
    outcome.message = inputs.status().message();
    return outcome;
  }
  // A question over several files (context.group, jobs/context/group_context.h): the files it
  // reads are read first, and one item at a time (below), so the item asked about finds them.
  if (!job.context.group.empty()) {
    std::stable_partition(inputs->begin(), inputs->end(),
                          [&](const InputFile& input) { return IsGroupMember(job, input.path); });
  }

  // Contexts need the tokenizer file and a template that fit together: checked once, up front,
  // instead of failing every item's context.
  if (!job.prompts.empty()) {
    Result<std::shared_ptr<const ContextSetup>> setup = LoadContextSetup(job);
    if (!setup.ok()) {
      outcome.result = RunResult::kInvalidJob;
      outcome.message = "context: " + setup.status().message();
      return outcome;
    }
  }

  Result<storage::Store> store = storage::Store::Open(options.database);
  if (!store.ok()) {
    outcome.message = store.status().message();
    return outcome;
  }
  // Room to record the run's end should the disk fill up (storage/space_reserve.h).
  storage::SpaceReserve reserve;
  if (Result<storage::SpaceReserve> made =
          storage::SpaceReserve::Allocate(options.database, kEndOfRunReserveBytes);
      made.ok()) {
    reserve = std::move(made).value();
  } else if (made.status().code() == ErrorCode::kDiskFull) {
    outcome.message = made.status().message() + "; free some space and run again";
    return outcome;
  } else {
    progress.Warning("no room kept to record the run's end on a full disk: " +
                     made.status().message());
  }
  if (Status marked = MarkAbandonedRuns(*store, progress); !marked.ok()) {
    outcome.message = DiskFullMessage(options.database, marked);
    return outcome;
  }
  // Time references of answers stored before this version of reel (or its grammar): one query
  // when there are none.
  if (Result<int64_t> indexed = RetryBusy([&] { return store->IndexAnswerTimes(); });
      !indexed.ok()) {
    if (indexed.status().code() == ErrorCode::kDiskFull) {
      outcome.message = DiskFullMessage(options.database, indexed.status());
      return outcome;
    }
    progress.Warning("answer time references not updated: " + indexed.status().message());
  }

  const std::string spec_text = RenderResolvedJob(job);
  const std::string spec_hash = storage::Sha256Hex(spec_text);
  Result<int64_t> job_id = RetryBusy([&] {
    return store->UpsertJob({.name = job.name, .spec_text = spec_text, .spec_hash = spec_hash});
  });
  if (!job_id.ok()) {
    outcome.message = job_id.status().message();
    return outcome;
  }
  storage::RunRecord run_request;
  run_request.job_id = *job_id;
  run_request.spec_hash = spec_hash;
  run_request.shard_index = options.shard.index;
  run_request.shard_count = options.shard.count;
  Result<storage::RunRecord> run = RetryBusy([&] { return store->BeginRun(run_request); });
  if (!run.ok()) {
    outcome.message = run.status().message();
    return outcome;
  }
  outcome.run_id = run->id;

  progress.RunStarted(job.name, options.database, run->id, static_cast<int64_t>(inputs->size()),
                      options.shard.sharded() ? options.shard.ToString() : "");
  for (const std::string& warning : warnings) progress.Warning(warning);
  Status logged = store->LogEvent(
      {.run_id = run->id,
       .level = storage::EventLevel::kInfo,
       .message = "run started: " + std::to_string(inputs->size()) + " items" +
                  (options.shard.sharded() ? ", shard " + options.shard.ToString() : "")});

  auto fail_run = [&](const std::string& text) {
    storage::RunStatus failed = storage::RunStatus::kFailed;
    std::optional<std::string> message = text;
    Status finished = EndRun(*store, run->id, outcome.counters, &failed, &message, reserve);
    (void)finished;
    outcome.result = RunResult::kError;
    outcome.message = text;
    return outcome;
  };
  if (logged.code() == ErrorCode::kDiskFull) {
    return fail_run(DiskFullMessage(options.database, logged));
  }
  // The model stage: the job's questions become tasks; with an endpoint they are asked.
  std::unique_ptr<ModelRun> model;
  std::string model_problem;  // the server could not be reached: questions wait
  if (!job.prompts.empty()) {
    Result<ModelSetup> setup = LoadModelSetup(job, options.database);
    if (!setup.ok()) return fail_run(setup.status().message());
    auto model_setup = std::make_shared<const ModelSetup>(std::move(setup).value());
    storage::TaskStore tasks(store->database());
    Result<int64_t> requeued = RetryBusy([&] { return tasks.RequeueInterrupted(); });
    if (!requeued.ok() && requeued.status().code() == ErrorCode::kDiskFull) {
      return fail_run(DiskFullMessage(options.database, requeued.status()));
    }
    if (requeued.ok() && *requeued > 0) {
      progress.Warning(std::to_string(*requeued) +
                       " requests were in flight when an earlier run ended; they are sent again");
    }
    ModelRunOptions model_options;
    model_options.database = options.database;
    model_options.run_id = run->id;
    model_options.run_uid = run->uid;
    model_options.retry_failed = options.retry_failed;
    model_options.ask_again = options.ask_again;
    model_options.progress = &progress;
    model_options.observer = options.answer_observer;
    model_options.on_prompt = options.on_prompt;
    if (job.model.endpoint) {
      Result<std::unique_ptr<ModelRun>> started = ModelRun::Start(job, model_setup, model_options);
      if (started.ok()) {
        model = std::move(started).value();
      } else if (started.status().code() == ErrorCode::kUnavailable) {
        // Said at the end when questions wait for it (a run with nothing to ask is not failed).
        model_problem = started.status().message();
        model = ModelRun::PrepareOnly(job, model_setup, model_options);
      } else {
        return fail_run(started.status().message());
      }
    } else {
      model = ModelRun::PrepareOnly(job, model_setup, model_options);
    }
  }

  const int workers =
      !job.context.group.empty()
          ? 1
          : std::max(1, std::min(options.workers > 0 ? options.workers : DefaultWorkers(),
                                 static_cast<int>(std::max<size_t>(1, inputs->size()))));
  // Items side by side already share the cores: with decoder_threads on auto, each item's
  // decoding gets its share (a lone video still gets every core). More decoding threads than
  // cores only add start-up work per item.
  JobSpec item_job = job;
  if (item_job.limits.media.decoder_threads == 0) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto videos = std::count_if(inputs->begin(), inputs->end(), [](const InputFile& input) {
      return input.kind == InputKind::kVideo;
    });
    // Only videos decode: one video among many documents still gets every core.
    const int decoding_side_by_side = static_cast<int>(std::clamp<int64_t>(videos, 1, workers));
    item_job.limits.media.decoder_threads = std::max(1, cores / decoding_side_by_side);
  }
  Batch batch(item_job, options, *inputs, *job_id, run->id, model.get());
  {
    std::vector<std::jthread> threads;
    threads.reserve(workers);
    for (int i = 0; i < workers; ++i) threads.emplace_back([&batch] { batch.Work(); });
    batch.Supervise(*store, workers);
  }  // joined
  Status fatal = batch.fatal_error();
  int64_t questions_waiting = 0;  // the job's questions not answered yet (all items)
  if (model) {
    model->Finish([&] { return stop_requested() || batch.cancelled(); }, [&] { progress.Tick(); });
    outcome.model = model->counters();
    if (fatal.ok()) fatal = model->fatal_error();
    // Time references in the answers of this run (storage: answer_times).
    if (!fatal.ok()) {
      // Nothing more is written but the run's end.
    } else if (Result<int64_t> indexed = RetryBusy([&] { return store->IndexAnswerTimes(); });
               !indexed.ok()) {
      if (indexed.status().code() == ErrorCode::kDiskFull) fatal = indexed.status();
      if (fatal.ok()) {
        progress.Warning("answer time references not updated: " + indexed.status().message());
      }
    }
    storage::TaskStore tasks(store->database());
    Result<storage::SendTotals> totals = tasks.Totals(run->id, std::nullopt);
    Result<storage::TaskCounts> counts = tasks.CountTasks(*job_id);
    if (totals.ok() && counts.ok()) {
      RunReport report = MakeRunReport(*totals, job.model, *counts);
      report.contexts_built = outcome.model.contexts_built;
      report.contexts_reused = outcome.model.contexts_reused;
      report.frame_passes = outcome.model.frame_passes;
      report.frames_decoded = outcome.model.frames_decoded;
      if (fatal.ok()) {
        // Priced by GPU time only: the run's cost is shared out over its requests (requests.cost),
        // so the report, batch.html and sum(requests.cost) show the figure `reel run` prints.
        const std::optional<double> gpu_cost = report.cost_tokens ? std::nullopt : report.cost_gpu;
        Status kept =
            RetryBusy([&] { return tasks.SetRunReport(run->id, report.ToJson(), gpu_cost); });
        if (kept.code() == ErrorCode::kDiskFull) fatal = kept;
      }
      for (const std::string& line : report.Lines()) progress.Info(line);
      questions_waiting = counts->waiting + counts->sent;
      if (questions_waiting > 0) {
        // With an endpoint set, the server is what failed: say so, never how to set it.
        if (!model_problem.empty()) {
          progress.Info("waiting for a model: the server at " + *job.model.endpoint +
                        " could not be reached (" + model_problem + "); run again when it answers");
        } else if (!model->stop_reason().empty()) {
          progress.Info("waiting for a model: the server at " + *job.model.endpoint +
                        " stopped the model stage (above); run again when it answers");
        } else if (!model->sending()) {
          progress.Info(
              "waiting for a model: write them as an OpenAI Batch file with `reel export "
              "--db " +
              options.database +
              " --format openai-batch OUT.jsonl`, or set model.endpoint (or "
              "REEL_MODEL_URL) and run again");
        }
      }
      outcome.model_report = report;
    }
  }

  outcome.counters = batch.counters();
  outcome.model_problem = model_problem;
  outcome.counters.requests = outcome.model.sends;
  outcome.counters.items_seen = static_cast<int64_t>(inputs->size());
  storage::RunStatus status = storage::RunStatus::kSucceeded;
  std::optional<std::string> message;
  auto stopped_by = [&](const Status& error) {
    std::string text = error.message();
    if (error.code() == ErrorCode::kDiskFull) {
      text = DiskFullMessage(options.database, error);
    } else if (text.find(options.database) == std::string::npos) {
      text = options.database + ": " + text;
    }
    status = storage::RunStatus::kFailed;
    message = text;
    outcome.result = RunResult::kError;
    outcome.message = text;
  };
  if (!fatal.ok()) {
    stopped_by(fatal);
  } else if (stop_requested()) {
    status = storage::RunStatus::kInterrupted;
    outcome.stop_signal = options.stop_signal->load();
    message = "interrupted by signal " + std::to_string(outcome.stop_signal) +
              (outcome.stop_signal == 2    ? " (SIGINT)"
               : outcome.stop_signal == 15 ? " (SIGTERM)"
                                           : "") +
              "; run the same `reel run` again to resume: finished items are kept, the rest "
              "are done then";
    outcome.result = RunResult::kInterrupted;
    outcome.message = *message;
  } else {
    // What this run did decides: failures of earlier runs that were not retried are listed by
    // `reel status`, not reported again by every run (cron mails only what changed).
    const bool server_problem = !model_problem.empty() && questions_waiting > 0;
    const bool stopped = model && !model->stop_reason().empty();
    std::string text;
    if (outcome.counters.items_failed > 0) {
      text = std::to_string(outcome.counters.items_failed) + " items failed";
    }
    if (outcome.model.prompts_failed > 0) {
      text += (text.empty() ? "" : ", ") + std::to_string(outcome.model.prompts_failed) +
              (options.retry_failed
                   ? std::string(" questions failed (`reel status`)")
                   : std::string(" questions failed (`reel status`; --retry-failed asks them "
                                 "again)"));
    }
    if (server_problem) {
      text += (text.empty() ? "" : ", ") + std::string(kModelUnreachable) + model_problem;
    }
    if (stopped) {
      const std::string reason = model->stop_reason();
      text += (text.empty() ? "" : ", ") +
              (reason.find("unreachable") != std::string::npos ? std::string(kModelUnreachable)
                                                               : std::string()) +
              "the model stage stopped: " + reason +
              " (the questions not answered wait for the next run)";
    } else if (const int64_t n = outcome.model.server_failures; n > 0) {
      text += (text.empty() ? "" : ", ") + std::to_string(n) +
              (n == 1 ? " question the model server failed (unreachable, timed out or "
                        "overloaded) waits for the next run"
                      : " questions the model server failed (unreachable, timed out or "
                        "overloaded) wait for the next run");
    }
    const bool audio_inputs =
        std::any_of(inputs->begin(), inputs->end(),
                    [](const InputFile& input) { return input.kind == InputKind::kAudio; });
    if (item_job.speech.enabled || audio_inputs) {
      Result<int64_t> unfinished = store->CountUnfinishedTranscripts(*job_id);
      if (unfinished.ok() && *unfinished > 0) {
        text += (text.empty() ? "" : ", ") + std::to_string(*unfinished) +
                (*unfinished == 1 ? " file's speech is" : " files' speech is") +
                " not fully transcribed (the transcription server failed some of it; its "
                "questions wait for the next run, which retries only that)";
      }
    }
    if (text.empty()) {
      outcome.result = RunResult::kSucceeded;
    } else {
      status = storage::RunStatus::kFailed;
      message = text;
      outcome.result =
          outcome.counters.items_failed > 0 ? RunResult::kSomeFailed : RunResult::kQuestionsFailed;
    }
  }
  const storage::RunStatus meant = status;
  Status finished = EndRun(*store, run->id, outcome.counters, &status, &message, reserve);
  if (status != meant) {  // the disk filled up just now: the run failed after all
    outcome.result = RunResult::kError;
    outcome.message = message.value_or("");
  }
  if (!finished.ok()) {
    progress.Warning("could not record the end of run " + std::to_string(run->id) + ": " +
                     finished.message());
  }
  RunSummary summary;
  summary.job = job.name;
  summary.database = options.database;
  summary.run_id = run->id;
  summary.status = storage::RunStatusName(status);
  summary.counters = outcome.counters;
  summary.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  summary.message = message.value_or("");
  progress.RunFinished(summary);
  return outcome;
}

}  // namespace reel::jobs
