// Tasks: the questions the model must answer, keyed by a stable custom_id, their state stored
// before anything is sent; a crash leaves a task 'sent' and RequeueInterrupted sends it again; an
// answer is never stored twice. Threads: one TaskStore per connection, one thread at a time.
// A task's life: storage/README.md, "Tasks"; docs/database.md, `tasks`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/database.h"
#include "storage/records.h"

namespace reel::storage {

enum class TaskStep { kAsk, kMap, kReduce };
enum class TaskStatus { kWaiting, kSent, kSucceeded, kFailed };

const char* TaskStepName(TaskStep step);        // "ask", "map", "reduce"
const char* TaskStatusName(TaskStatus status);  // "waiting", "sent", "succeeded", "failed"

struct TaskRecord {
  int64_t id = 0;         // output
  std::string custom_id;  // stable and unique
  int64_t item_id = 0;
  std::string prompt_id;
  std::optional<int64_t> context_id;
  TaskStep step = TaskStep::kAsk;
  int64_t segment_index = 0;
  int64_t segment_count = 1;
  std::optional<double> start_seconds;
  std::optional<double> end_seconds;
  std::optional<int64_t> local_prompt_tokens;
  std::optional<std::string> json_schema;       // the schema the answer must follow (compact JSON)
  std::optional<std::string> question;          // the prompt's question as asked
  TaskStatus status = TaskStatus::kWaiting;     // output
  std::optional<int64_t> server_count_tokens;   // output (SetServerCount)
  std::optional<int64_t> request_id;            // output: the latest send
  std::optional<std::string> last_outcome;      // output: that send's outcome
  std::optional<int64_t> last_too_long_tokens;  // output: the server's count, if too long
  std::optional<int64_t> last_too_long_output;  // output: the output it was asked for
  std::optional<int64_t> last_too_long_window;  // output: the server's context length
  std::optional<std::string> last_run_uid;      // output: the run that made that send
};

// Whether the task's answer is its prompt's answer: an "ask", or the reduce that covers every
// segment of a split video (segment_count 1). A reduce with segment_count > 1 is an intermediate
// one of a reduce in levels (jobs/model/model_plan.h): group segment_index of segment_count at its
// level, covering start_seconds to end_seconds.
inline bool IsFinalTask(const TaskRecord& t) {
  return t.step == TaskStep::kAsk || (t.step == TaskStep::kReduce && t.segment_count == 1);
}

// What one send is, recorded before it goes out.
struct SendRecord {
  std::optional<int64_t> run_id{};
  std::optional<std::string> model{};
  std::string via = "online";  // "online" or "batch"
  std::optional<int64_t> local_prompt_tokens{};
};

// A retry reason (SendOutcome::retry_reasons, requests.retry_reasons) that starts with this is no
// HTTP retry: the answer failed its prompt kind's check (jobs/spec/prompt_kinds.h) and the model
// was asked again in the same conversation; the check's reason follows.
inline constexpr std::string_view kAnswerCheckRetry = "answer check: ";

// Whether a send failed for the server's reasons, not the question's: the server could not be
// reached or did not answer in time (`outcome` "server down", "connection error", "timeout"), it
// was overloaded after the retries ("server error" with HTTP 429, 502, 503 or 504), or it refused
// the API key ("rejected" with 401 or 403). Such a question is not failed: it waits, and the next
// run asks it again without --retry-failed (schema migration 9 applies the same rule in SQL to
// questions failed before it).
bool IsServerFailure(std::string_view outcome, std::optional<int> http_status);

// How a send ended (both ways).
struct SendOutcome {
  std::string outcome = "ok";  // llm::ChatOutcomeName
  std::string error;           // "" when ok
  std::optional<int> http_status;
  std::optional<int64_t> attempts;
  std::vector<std::string> retry_reasons;
  std::optional<double> latency_seconds;
  std::optional<double> total_seconds;
  std::optional<double> ttft_seconds;
  std::optional<int64_t> request_bytes;
  std::optional<std::string> server_request_id;
  std::optional<int64_t> too_long_prompt_tokens;
  std::optional<int64_t> too_long_output_tokens;
  std::optional<int64_t> too_long_context_length;
  // From the job's prices, for every answer the request received (also one that failed its
  // prompt kind's check and was asked again).
  std::optional<double> cost;
  // The server's usage summed over every answer the request received, the refused ones too
  // (requests.prompt_tokens ...; unset: none reported). FinishSend takes the stored answer's
  // usage when these are all unset.
  std::optional<int64_t> prompt_tokens;
  std::optional<int64_t> completion_tokens;
  std::optional<int64_t> cached_tokens;
  std::optional<int64_t> reasoning_tokens;
};

// The answer of a succeeded send (responses row).
struct AnswerRecord {
  std::string content;
  std::optional<std::string> reasoning;
  std::optional<std::string> finish_reason;
  std::optional<int64_t> prompt_tokens;
  std::optional<int64_t> completion_tokens;
  std::optional<int64_t> cached_tokens;
  std::optional<int64_t> reasoning_tokens;
  std::optional<std::string> json_answer;   // compact JSON, checked against the prompt's schema
  bool truncated = false;                   // finish_reason "length"
  std::optional<std::string> response_uid;  // the body's id
};

// A stored context row, as the model stage reads it back.
struct ContextRow {
  int64_t id = 0;
  std::string context_hash;
  int64_t segment_index = 0;
  int64_t segment_count = 1;
  int64_t total_tokens = 0;
  std::optional<double> start_seconds;  // the manifest's time_range_s
  std::optional<double> end_seconds;
};

// Sums over sends, for run reports.
struct SendTotals {
  int64_t sends = 0;
  int64_t succeeded = 0;
  int64_t failed = 0;
  int64_t cancelled = 0;  // sends stopped by the run stopping (the task waits again)
  int64_t retries = 0;    // HTTP retries inside sends (attempts - 1 - rechecked)
  int64_t rechecked = 0;  // answers that failed their kind's check and were asked again
  int64_t resent = 0;     // sends of a task that had been sent before
  int64_t too_long = 0;
  int64_t truncated = 0;      // answers cut by max_completion_tokens
  int64_t prompt_tokens = 0;  // the server's usage: every answer of every send (refused too)
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t reasoning_tokens = 0;
  int64_t local_prompt_tokens = 0;     // Reel's counts of the same (succeeded sends with usage)
  int64_t compared = 0;                // succeeded sends with both counts
  int64_t compared_server_tokens = 0;  // the server's counts of those
  int64_t max_abs_token_difference = 0;
  double latency_sum = 0;
  double first_sent_unix = 0;  // wall clock span of the sends (seconds since the epoch)
  double last_finished_unix = 0;
  std::vector<double> ttft_seconds;  // streaming sends that saw a first token
  std::vector<double> latencies;
  int64_t tokenize_compared = 0;        // tasks with a /tokenize count
  int64_t tokenize_difference_sum = 0;  // server - local, summed
  int64_t tokenize_max_abs_difference = 0;
};

struct TaskCounts {
  int64_t waiting = 0;
  int64_t sent = 0;
  int64_t succeeded = 0;
  int64_t failed = 0;
};

class TaskStore {
 public:
  explicit TaskStore(Database& db) : db_(db) {}

  // Inserts the task as waiting unless its custom_id exists; returns the stored row either way.
  Result<TaskRecord> EnsureTask(const TaskRecord& task);
  Result<std::optional<TaskRecord>> FindTask(const std::string& custom_id);
  Result<std::optional<TaskRecord>> GetTask(int64_t task_id);
  // The item's tasks, in id order.
  Result<std::vector<TaskRecord>> ListTasks(int64_t item_id);
  // Items (of `job_id`, or all) that have tasks in `status`, ascending.
  Result<std::vector<int64_t>> ItemsWithTasks(std::optional<int64_t> job_id, TaskStatus status);
  // The job's questions by state; retired ones (tasks.retired_at) are not counted.
  Result<TaskCounts> CountTasks(std::optional<int64_t> job_id);
  // The job's items that are done: (id, path as stored), by id.
  Result<std::vector<std::pair<int64_t, std::string>>> DoneItems(int64_t job_id);

  // Task -> sent, a 'sent' requests row; returns the request id. kInvalidArgument if the task
  // already succeeded (never ask twice).
  Result<int64_t> StartSend(int64_t task_id, const SendRecord& send);
  // The send succeeded: request succeeded, the answer stored, task succeeded.
  Status FinishSend(int64_t request_id, const SendOutcome& outcome, const AnswerRecord& answer);
  // The send received an answer that failed its check (`outcome.error` says why: the prompt's
  // JSON schema, or its kind's check): the request failed, the answer is kept as a responses row
  // with check_error (and no json_answer; never an item's answer: latest_answers leaves it out),
  // the task failed.
  Status RefuseAnswer(int64_t request_id, const SendOutcome& outcome, const AnswerRecord& answer);
  // The send failed: request failed; the task failed, or waiting again when `requeue` (the run
  // stopped it, or the server failed it: IsServerFailure; it was never answered).
  Status FailSend(int64_t request_id, const SendOutcome& outcome, bool requeue);

  // Requests left 'sent' by a process that ended: failed ("interrupted ..."), tasks waiting.
  // Only for a caller holding the run lock. Returns how many.
  Result<int64_t> RequeueInterrupted();
  // Failed tasks of `item_id` back to waiting (--retry-failed). Returns how many.
  Result<int64_t> RequeueFailed(int64_t item_id);

  Status SetServerCount(int64_t task_id, int64_t count);

  // Whether a batch result with this server id was imported for the task already.
  Result<bool> HasBatchSend(int64_t task_id, const std::string& server_request_id);

  // Contexts of (item, prompt) built from `settings_key`, in segment order.
  Result<std::vector<ContextRow>> ListContexts(int64_t item_id, const std::string& prompt_id,
                                               const std::string& settings_key);
  // The succeeded answer of a task, if any.
  Result<std::optional<AnswerRecord>> GetAnswer(int64_t task_id);

  // Totals over sends of run `run_id` (or, with nullopt, every send of `job_id`).
  Result<SendTotals> Totals(std::optional<int64_t> run_id, std::optional<int64_t> job_id);

  // runs.report_json; with `gpu_cost` (the run's cost by GPU time, when the job prices GPU time
  // but not tokens), that cost is also shared out over the run's requests without a cost, by
  // their tokens (prompt + completion), in the same transaction: requests.cost is the one
  // figure every report sums.
  Status SetRunReport(int64_t run_id, const std::string& report_json,
                      std::optional<double> gpu_cost = std::nullopt);
  // The newest run (of the job, if given) with a report: (run id, report JSON).
  Result<std::optional<std::pair<int64_t, std::string>>> LatestRunReport(
      std::optional<int64_t> job_id);

 private:
  Database& db_;
};

}  // namespace reel::storage
