// The model stage's engine for one run: plans each item's questions (model_plan.h), sends them
// with bounded concurrency in prefix-cache order, stores every answer, re-plans as answers arrive.
// A question the server failed waits for the next run; the stage stops on a refused API key, a
// server down past circuit_give_up (stop_reason) or a database it cannot write (fatal_error).
// Threads: AddItem from any thread (each with its own Store); Finish once, from the creator.
// Order, memory bound, crash safety, failures: jobs/model/README.md, "Model run".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "jobs/model/request_setup.h"
#include "jobs/progress.h"
#include "jobs/spec/job_spec.h"
#include "llm/client/model_client.h"
#include "storage/store.h"
#include "storage/tasks.h"

namespace reel::jobs {

// How one (item, prompt) ended in this run.
struct PromptOutcome {
  std::string item_path;
  std::string prompt_id;
  enum class State { kAnswered, kFailed, kWaiting } state = State::kWaiting;
  std::string message;                          // kFailed: why
  std::optional<storage::AnswerRecord> answer;  // kAnswered
  bool answered_before = false;  // the answer (or the failure) was stored by an earlier run
  bool streamed = false;         // the observer saw it arrive
};

struct ModelRunOptions {
  std::string database;
  int64_t run_id = 0;
  std::string run_uid;
  bool retry_failed = false;
  bool ask_again = false;                // PlanOptions::ask_again
  ProgressReporter* progress = nullptr;  // not owned; may be null
  // Watches a final answer (ask or reduce) stream in (reel ask); called on the sending thread.
  std::function<std::unique_ptr<llm::ChatObserver>(const std::string& item_path,
                                                   const std::string& prompt_id)>
      observer;
  // Called once per (item, prompt) that ends in this run, or was answered before.
  std::function<void(const PromptOutcome&)> on_prompt;
};

struct ModelRunCounters {
  int64_t items = 0;
  int64_t prompts_answered = 0;
  int64_t prompts_failed = 0;         // failed in this run (asked, or re-asked with --retry-failed)
  int64_t prompts_failed_before = 0;  // failed in an earlier run and not asked again
  int64_t prompts_waiting = 0;        // no endpoint, or the run stopped
  int64_t sends = 0;
  // Sends the server failed (storage::IsServerFailure): their questions wait for the next run.
  int64_t server_failures = 0;
  int64_t tokenize_checks = 0;
  // Contexts the model stage built (re-fits, reduces, and contexts the context stage did not
  // build in this run), contexts it took from the context stage, and request frames decoded.
  int64_t contexts_built = 0;
  int64_t contexts_reused = 0;
  int64_t frame_passes = 0;
  int64_t frames_decoded = 0;
};

// requests.outcome of a request whose answer arrived but could not be stored (a full disk): its
// question waits and is asked again by the next run.
inline constexpr std::string_view kNotStoredOutcome = "not stored";

// A client result as the database records it (shared with `reel import`).
storage::SendOutcome SendOutcomeOf(const llm::ChatResult& result);
storage::AnswerRecord AnswerRecordOf(const llm::ChatResult& result);
// Whether the server gave a complete answer (one it bills), also one the schema refused.
bool AnswerReceived(const llm::ChatResult& result);
// Adds the answer's usage to `outcome`'s usage sums (requests.prompt_tokens ...).
void AddUsage(const llm::ChatResult& result, storage::SendOutcome* outcome);

class ModelRun {
 public:
  // Checks the endpoint (GET /v1/models: the model is served; the job's token budget fits its
  // max_model_len) and starts the senders. Errors: kUnavailable when the server cannot be
  // reached; kNotFound (model not served), kLimitExceeded (budget above the server's window,
  // both numbers said), kInvalidArgument (key refused, bad settings) otherwise.
  static Result<std::unique_ptr<ModelRun>> Start(const JobSpec& job,
                                                 std::shared_ptr<const ModelSetup> setup,
                                                 ModelRunOptions options);
  // No endpoint: records the tasks, sends nothing.
  static std::unique_ptr<ModelRun> PrepareOnly(const JobSpec& job,
                                               std::shared_ptr<const ModelSetup> setup,
                                               ModelRunOptions options);
  ~ModelRun();
  ModelRun(const ModelRun&) = delete;
  ModelRun& operator=(const ModelRun&) = delete;

  // Plans the item's prompts and queues what must be sent. `built`: contexts of the item the
  // context stage built in this run (sent as they are, not built again). Errors are the item's
  // (its message names the file); other items go on.
  Status AddItem(storage::Store& store, int64_t item_id, const std::string& media_path,
                 std::vector<std::shared_ptr<const ItemContext>> built = {});

  // Waits until every queued request is answered (or `stop_requested()` returns true: requests
  // in flight are cancelled and their tasks wait again), then stops the senders. `tick` is
  // called every 100 ms while it waits (may be empty).
  void Finish(const std::function<bool()>& stop_requested, const std::function<void()>& tick);

  // Stops at once: requests in flight are cancelled; their tasks wait for the next run.
  void Cancel();

  bool sending() const;
  ModelRunCounters counters() const;
  // Why the stage stopped sending before its work was done: the server refused the API key, or
  // stayed unreachable longer than model.circuit_give_up ("" when it did not). The questions it
  // did not ask wait for the next run.
  std::string stop_reason() const;
  // A write to the database failed (a full disk: kDiskFull, naming the file), so the stage
  // stopped; the run must end. OK when none.
  Status fatal_error() const;

  struct Impl;

 private:
  explicit ModelRun(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace reel::jobs
