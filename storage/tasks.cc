#include "storage/tasks.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "storage/internal/json_string_array.h"
#include "storage/internal/random_uid.h"
#include "storage/internal/rows.h"
#include "storage/internal/schema.h"
#include "storage/internal/sqlite.h"

namespace reel::storage {
namespace {

using internal::Statement;
using internal::Transaction;

std::string Now() { return internal::kNowSql; }

// ISO-8601 text column -> seconds since the epoch, in SQL.
std::string UnixSeconds(const std::string& column) {
  return "((julianday(" + column + ") - 2440587.5) * 86400.0)";
}

const EnumNames<TaskStep>& TaskStepNames() {
  static const EnumNames<TaskStep> names{
      {{"ask", TaskStep::kAsk}, {"map", TaskStep::kMap}, {"reduce", TaskStep::kReduce}}};
  return names;
}

const EnumNames<TaskStatus>& TaskStatusNames() {
  using S = TaskStatus;
  static const EnumNames<S> names{{{"waiting", S::kWaiting},
                                   {"sent", S::kSent},
                                   {"succeeded", S::kSucceeded},
                                   {"failed", S::kFailed}}};
  return names;
}

Result<TaskStep> ParseStep(const std::string& s) {
  if (std::optional<TaskStep> step = TaskStepNames().Parse(s)) return *step;
  return CorruptData("tasks.step '" + s + "'");
}

Result<TaskStatus> ParseStatus(const std::string& s) {
  if (std::optional<TaskStatus> status = TaskStatusNames().Parse(s)) return *status;
  return CorruptData("tasks.status '" + s + "'");
}

constexpr const char* kTaskColumns =
    "t.id, t.custom_id, t.item_id, t.prompt_id, t.context_id, t.step, t.segment_index, "
    "t.segment_count, t.start_seconds, t.end_seconds, t.local_prompt_tokens, t.status, "
    "t.server_count_tokens, t.request_id, r.outcome, r.too_long_prompt_tokens, "
    "(SELECT uid FROM runs WHERE runs.id = r.run_id), t.json_schema, r.too_long_output_tokens, "
    "r.too_long_context_length";

std::string SelectTasks(const std::string& where) {
  return std::string("SELECT ") + kTaskColumns +
         " FROM tasks t LEFT JOIN requests r ON r.id = t.request_id WHERE " + where;
}

Result<TaskRecord> ReadTask(const Statement& s) {
  TaskRecord t;
  t.id = s.ColumnInt(0);
  t.custom_id = s.ColumnText(1);
  t.item_id = s.ColumnInt(2);
  t.prompt_id = s.ColumnText(3);
  t.context_id = s.ColumnOptionalInt(4);
  REEL_ASSIGN_OR_RETURN(t.step, ParseStep(s.ColumnText(5)));
  t.segment_index = s.ColumnInt(6);
  t.segment_count = s.ColumnInt(7);
  t.start_seconds = s.ColumnOptionalDouble(8);
  t.end_seconds = s.ColumnOptionalDouble(9);
  t.local_prompt_tokens = s.ColumnOptionalInt(10);
  REEL_ASSIGN_OR_RETURN(t.status, ParseStatus(s.ColumnText(11)));
  t.server_count_tokens = s.ColumnOptionalInt(12);
  t.request_id = s.ColumnOptionalInt(13);
  t.last_outcome = s.ColumnOptionalText(14);
  t.last_too_long_tokens = s.ColumnOptionalInt(15);
  t.last_run_uid = s.ColumnOptionalText(16);
  t.json_schema = s.ColumnOptionalText(17);
  t.last_too_long_output = s.ColumnOptionalInt(18);
  t.last_too_long_window = s.ColumnOptionalInt(19);
  return t;
}

// Writes the outcome columns of request `request_id` with `status`.
Status UpdateRequest(sqlite3* db, int64_t request_id, const char* status, const SendOutcome& o) {
  REEL_ASSIGN_OR_RETURN(
      Statement update,
      Statement::Prepare(
          db,
          "UPDATE requests SET status = ?2, error = ?3, outcome = ?4, http_status = ?5, "
          "attempts = ?6, retry_reasons = ?7, latency_seconds = ?8, total_seconds = ?9, "
          "ttft_seconds = ?10, request_bytes = ?11, server_request_id = ?12, "
          "too_long_prompt_tokens = ?13, too_long_output_tokens = ?14, "
          "too_long_context_length = ?15, cost = ?16, prompt_tokens = ?17, "
          "completion_tokens = ?18, cached_tokens = ?19, reasoning_tokens = ?20, finished_at = " +
              Now() + " WHERE id = ?1 AND status = 'sent'"));
  std::optional<std::string> error;
  if (!o.error.empty()) error = o.error;
  std::optional<int64_t> http;
  if (o.http_status) http = *o.http_status;
  std::optional<std::string> reasons;
  if (!o.retry_reasons.empty()) reasons = internal::JsonStringArray(o.retry_reasons);
  update.Bind(1, request_id)
      .Bind(2, status)
      .Bind(3, error)
      .Bind(4, o.outcome)
      .Bind(5, http)
      .Bind(6, o.attempts)
      .Bind(7, reasons)
      .Bind(8, o.latency_seconds)
      .Bind(9, o.total_seconds)
      .Bind(10, o.ttft_seconds)
      .Bind(11, o.request_bytes)
      .Bind(12, o.server_request_id)
      .Bind(13, o.too_long_prompt_tokens)
      .Bind(14, o.too_long_output_tokens)
      .Bind(15, o.too_long_context_length)
      .Bind(16, o.cost)
      .Bind(17, o.prompt_tokens)
      .Bind(18, o.completion_tokens)
      .Bind(19, o.cached_tokens)
      .Bind(20, o.reasoning_tokens);
  REEL_RETURN_IF_ERROR(update.Run());
  if (sqlite3_changes(db) == 0) {
    return NotFound("request " + std::to_string(request_id) + " is not waiting for an answer");
  }
  return Status::Ok();
}

// The answer of request `request_id` (a responses row); `check_error` when it failed its check.
Status InsertResponse(sqlite3* db, int64_t request_id, const AnswerRecord& answer,
                      const std::optional<std::string>& check_error) {
  REEL_ASSIGN_OR_RETURN(
      Statement insert,
      Statement::Prepare(db,
                         "INSERT INTO responses(request_id, content, reasoning, finish_reason, "
                         "prompt_tokens, completion_tokens, cached_tokens, json_answer, truncated, "
                         "reasoning_tokens, response_uid, check_error) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"));
  insert.Bind(1, request_id)
      .Bind(2, answer.content)
      .Bind(3, answer.reasoning)
      .Bind(4, answer.finish_reason)
      .Bind(5, answer.prompt_tokens)
      .Bind(6, answer.completion_tokens)
      .Bind(7, answer.cached_tokens)
      .Bind(8, answer.json_answer)
      .Bind(9, answer.truncated ? 1 : 0)
      .Bind(10, answer.reasoning_tokens)
      .Bind(11, answer.response_uid)
      .Bind(12, check_error);
  return insert.Run();
}

Status SetTaskStatus(sqlite3* db, int64_t request_id, const char* status) {
  REEL_ASSIGN_OR_RETURN(Statement update,
                        Statement::Prepare(db, "UPDATE tasks SET status = ?2, updated_at = " +
                                                   Now() + " WHERE request_id = ?1"));
  return update.Bind(1, request_id).Bind(2, status).Run();
}

}  // namespace

bool IsServerFailure(std::string_view outcome, std::optional<int> http_status) {
  if (outcome == "server down" || outcome == "connection error" || outcome == "timeout") {
    return true;
  }
  const int status = http_status.value_or(0);
  if (outcome == "server error") {
    return status == 429 || status == 502 || status == 503 || status == 504;
  }
  return outcome == "rejected" && (status == 401 || status == 403);
}

const char* TaskStepName(TaskStep step) { return TaskStepNames().Name(step).c_str(); }
const char* TaskStatusName(TaskStatus status) { return TaskStatusNames().Name(status).c_str(); }

Result<TaskRecord> TaskStore::EnsureTask(const TaskRecord& task) {
  sqlite3* db = db_.handle();
  {
    REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
    REEL_ASSIGN_OR_RETURN(
        Statement insert,
        Statement::Prepare(db,
                           "INSERT INTO tasks(custom_id, item_id, prompt_id, context_id, step, "
                           "segment_index, segment_count, start_seconds, end_seconds, "
                           "local_prompt_tokens, json_schema, question) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
                           "ON CONFLICT(custom_id) DO NOTHING"));
    insert.Bind(1, task.custom_id)
        .Bind(2, task.item_id)
        .Bind(3, task.prompt_id)
        .Bind(4, task.context_id)
        .Bind(5, TaskStepName(task.step))
        .Bind(6, task.segment_index)
        .Bind(7, task.segment_count)
        .Bind(8, task.start_seconds)
        .Bind(9, task.end_seconds)
        .Bind(10, task.local_prompt_tokens)
        .Bind(11, task.json_schema)
        .Bind(12, task.question);
    REEL_RETURN_IF_ERROR(insert.Run());
    REEL_RETURN_IF_ERROR(txn.Commit());
  }
  REEL_ASSIGN_OR_RETURN(std::optional<TaskRecord> stored, FindTask(task.custom_id));
  if (!stored) return Internal("task " + task.custom_id + " vanished after its insert");
  return *stored;
}

Result<std::optional<TaskRecord>> TaskStore::FindTask(const std::string& custom_id) {
  REEL_ASSIGN_OR_RETURN(Statement s,
                        Statement::Prepare(db_.handle(), SelectTasks("t.custom_id = ?1")));
  s.Bind(1, custom_id);
  return internal::ReadRow(s, ReadTask);
}

Result<std::optional<TaskRecord>> TaskStore::GetTask(int64_t task_id) {
  REEL_ASSIGN_OR_RETURN(Statement s, Statement::Prepare(db_.handle(), SelectTasks("t.id = ?1")));
  s.Bind(1, task_id);
  return internal::ReadRow(s, ReadTask);
}

Result<std::vector<TaskRecord>> TaskStore::ListTasks(int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement s, Statement::Prepare(db_.handle(), SelectTasks("t.item_id = ?1 ORDER BY t.id")));
  s.Bind(1, item_id);
  return internal::ReadRows(s, ReadTask);
}

Result<std::vector<int64_t>> TaskStore::ItemsWithTasks(std::optional<int64_t> job_id,
                                                       TaskStatus status) {
  REEL_ASSIGN_OR_RETURN(
      Statement s,
      Statement::Prepare(
          db_.handle(),
          "SELECT DISTINCT t.item_id FROM tasks t JOIN items i ON i.id = t.item_id "
          "WHERE t.status = ?1 AND (?2 IS NULL OR i.job_id = ?2) AND t.retired_at IS NULL "
          "ORDER BY t.item_id"));
  s.Bind(1, TaskStatusName(status)).Bind(2, job_id);
  return internal::ReadRows(s, [](const Statement& row) { return row.ColumnInt(0); });
}

Result<TaskCounts> TaskStore::CountTasks(std::optional<int64_t> job_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement s,
      Statement::Prepare(db_.handle(),
                         "SELECT t.status, count(*) FROM tasks t JOIN items i ON i.id = t.item_id "
                         "WHERE (?1 IS NULL OR i.job_id = ?1) AND t.retired_at IS NULL "
                         "GROUP BY t.status"));
  s.Bind(1, job_id);
  TaskCounts counts;
  REEL_RETURN_IF_ERROR(internal::ForEachRow(s, [&](const Statement& row) -> Status {
    REEL_ASSIGN_OR_RETURN(TaskStatus status, ParseStatus(row.ColumnText(0)));
    const int64_t n = row.ColumnInt(1);
    switch (status) {
      case TaskStatus::kWaiting:
        counts.waiting = n;
        break;
      case TaskStatus::kSent:
        counts.sent = n;
        break;
      case TaskStatus::kSucceeded:
        counts.succeeded = n;
        break;
      case TaskStatus::kFailed:
        counts.failed = n;
        break;
    }
    return Status::Ok();
  }));
  return counts;
}

Result<std::vector<std::pair<int64_t, std::string>>> TaskStore::DoneItems(int64_t job_id) {
  REEL_ASSIGN_OR_RETURN(Statement s, Statement::Prepare(db_.handle(),
                                                        "SELECT id, path FROM items WHERE job_id = "
                                                        "?1 AND status = 'done' ORDER BY id"));
  s.Bind(1, job_id);
  std::vector<std::pair<int64_t, std::string>> out;
  REEL_RETURN_IF_ERROR(internal::ForEachRow(
      s, [&](const Statement& row) { out.emplace_back(row.ColumnInt(0), row.ColumnText(1)); }));
  return out;
}

Result<int64_t> TaskStore::StartSend(int64_t task_id, const SendRecord& send) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement find, Statement::Prepare(db,
                                         "SELECT item_id, prompt_id, context_id, status FROM tasks "
                                         "WHERE id = ?1"));
  find.Bind(1, task_id);
  REEL_ASSIGN_OR_RETURN(bool row, find.Step());
  if (!row) return NotFound("task " + std::to_string(task_id));
  const int64_t item_id = find.ColumnInt(0);
  const std::string prompt_id = find.ColumnText(1);
  const std::optional<int64_t> context_id = find.ColumnOptionalInt(2);
  const std::string status = find.ColumnText(3);
  find.Reset();
  if (status == "succeeded") {
    return InvalidArgument("task " + std::to_string(task_id) + " is answered already");
  }
  REEL_ASSIGN_OR_RETURN(
      Statement insert,
      Statement::Prepare(db,
                         "INSERT INTO requests(uid, item_id, context_id, run_id, prompt_id, model, "
                         "task_id, via, local_prompt_tokens) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  insert.Bind(1, internal::RandomUid())
      .Bind(2, item_id)
      .Bind(3, context_id)
      .Bind(4, send.run_id)
      .Bind(5, prompt_id)
      .Bind(6, send.model)
      .Bind(7, task_id)
      .Bind(8, send.via)
      .Bind(9, send.local_prompt_tokens);
  REEL_RETURN_IF_ERROR(insert.Run());
  const int64_t request_id = sqlite3_last_insert_rowid(db);
  REEL_ASSIGN_OR_RETURN(Statement update,
                        Statement::Prepare(db,
                                           "UPDATE tasks SET status = 'sent', request_id = ?2, "
                                           "updated_at = " +
                                               Now() + " WHERE id = ?1"));
  REEL_RETURN_IF_ERROR(update.Bind(1, task_id).Bind(2, request_id).Run());
  REEL_RETURN_IF_ERROR(txn.Commit());
  return request_id;
}

Status TaskStore::FinishSend(int64_t request_id, const SendOutcome& outcome,
                             const AnswerRecord& answer) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  SendOutcome with_usage = outcome;
  if (!outcome.prompt_tokens && !outcome.completion_tokens && !outcome.cached_tokens &&
      !outcome.reasoning_tokens) {  // one answer: its usage is the request's
    with_usage.prompt_tokens = answer.prompt_tokens;
    with_usage.completion_tokens = answer.completion_tokens;
    with_usage.cached_tokens = answer.cached_tokens;
    with_usage.reasoning_tokens = answer.reasoning_tokens;
  }
  REEL_RETURN_IF_ERROR(UpdateRequest(db, request_id, "succeeded", with_usage));
  REEL_RETURN_IF_ERROR(InsertResponse(db, request_id, answer, std::nullopt));
  REEL_RETURN_IF_ERROR(SetTaskStatus(db, request_id, "succeeded"));
  return txn.Commit();
}

Status TaskStore::RefuseAnswer(int64_t request_id, const SendOutcome& outcome,
                               const AnswerRecord& answer) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_RETURN_IF_ERROR(UpdateRequest(db, request_id, "failed", outcome));
  AnswerRecord refused = answer;
  refused.json_answer.reset();  // only a checked answer has one
  REEL_RETURN_IF_ERROR(InsertResponse(db, request_id, refused,
                                      outcome.error.empty() ? outcome.outcome : outcome.error));
  REEL_RETURN_IF_ERROR(SetTaskStatus(db, request_id, "failed"));
  return txn.Commit();
}

Status TaskStore::FailSend(int64_t request_id, const SendOutcome& outcome, bool requeue) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_RETURN_IF_ERROR(UpdateRequest(db, request_id, "failed", outcome));
  REEL_RETURN_IF_ERROR(SetTaskStatus(db, request_id, requeue ? "waiting" : "failed"));
  return txn.Commit();
}

Result<int64_t> TaskStore::RequeueInterrupted() {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_RETURN_IF_ERROR(internal::Exec(
      db,
      "UPDATE requests SET status = 'failed', outcome = 'interrupted', error = "
      "'interrupted: the process ended before the answer arrived; the request is sent again', "
      "finished_at = " +
          Now() + " WHERE status = 'sent' AND task_id IS NOT NULL"));
  const int64_t n = sqlite3_changes(db);
  REEL_RETURN_IF_ERROR(internal::Exec(
      db, "UPDATE tasks SET status = 'waiting', updated_at = " + Now() + " WHERE status = 'sent'"));
  REEL_RETURN_IF_ERROR(txn.Commit());
  return n;
}

Result<int64_t> TaskStore::RequeueFailed(int64_t item_id) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement update,
      Statement::Prepare(db, "UPDATE tasks SET status = 'waiting', updated_at = " + Now() +
                                 " WHERE item_id = ?1 AND status = 'failed'"));
  REEL_RETURN_IF_ERROR(update.Bind(1, item_id).Run());
  const int64_t n = sqlite3_changes(db);
  REEL_RETURN_IF_ERROR(txn.Commit());
  return n;
}

Status TaskStore::SetServerCount(int64_t task_id, int64_t count) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement update,
      Statement::Prepare(db, "UPDATE tasks SET server_count_tokens = ?2 WHERE id = ?1"));
  REEL_RETURN_IF_ERROR(update.Bind(1, task_id).Bind(2, count).Run());
  return txn.Commit();
}

Result<bool> TaskStore::HasBatchSend(int64_t task_id, const std::string& server_request_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement s,
      Statement::Prepare(db_.handle(),
                         "SELECT 1 FROM requests WHERE task_id = ?1 AND via = 'batch' AND "
                         "server_request_id = ?2 LIMIT 1"));
  return s.Bind(1, task_id).Bind(2, server_request_id).Step();
}

Result<std::vector<ContextRow>> TaskStore::ListContexts(int64_t item_id,
                                                        const std::string& prompt_id,
                                                        const std::string& settings_key) {
  REEL_ASSIGN_OR_RETURN(
      Statement s,
      Statement::Prepare(db_.handle(),
                         "SELECT id, context_hash, segment_index, segment_count, total_tokens, "
                         "json_extract(manifest_json, '$.time_range_s[0]'), "
                         "json_extract(manifest_json, '$.time_range_s[1]') FROM contexts WHERE "
                         "item_id = ?1 AND prompt_id = ?2 AND "
                         "settings_key = ?3 ORDER BY segment_index, id"));
  s.Bind(1, item_id).Bind(2, prompt_id).Bind(3, settings_key);
  std::vector<ContextRow> out;
  REEL_RETURN_IF_ERROR(internal::ForEachRow(s, [&](const Statement& row) {
    ContextRow c;
    c.id = row.ColumnInt(0);
    c.context_hash = row.ColumnText(1);
    c.segment_index = row.ColumnInt(2);
    c.segment_count = row.ColumnInt(3);
    c.total_tokens = row.ColumnInt(4);
    c.start_seconds = row.ColumnOptionalDouble(5);
    c.end_seconds = row.ColumnOptionalDouble(6);
    out.push_back(std::move(c));
  }));
  return out;
}

Result<std::optional<AnswerRecord>> TaskStore::GetAnswer(int64_t task_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement s,
      Statement::Prepare(db_.handle(),
                         "SELECT p.content, p.reasoning, p.finish_reason, p.prompt_tokens, "
                         "p.completion_tokens, p.cached_tokens, p.json_answer, p.truncated, "
                         "p.reasoning_tokens, p.response_uid "
                         "FROM tasks t JOIN responses p ON p.request_id = t.request_id "
                         "WHERE t.id = ?1 AND t.status = 'succeeded'"));
  s.Bind(1, task_id);
  REEL_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<AnswerRecord>();
  AnswerRecord a;
  a.content = s.ColumnText(0);
  a.reasoning = s.ColumnOptionalText(1);
  a.finish_reason = s.ColumnOptionalText(2);
  a.prompt_tokens = s.ColumnOptionalInt(3);
  a.completion_tokens = s.ColumnOptionalInt(4);
  a.cached_tokens = s.ColumnOptionalInt(5);
  a.json_answer = s.ColumnOptionalText(6);
  a.truncated = s.ColumnInt(7) != 0;
  a.reasoning_tokens = s.ColumnOptionalInt(8);
  a.response_uid = s.ColumnOptionalText(9);
  return std::optional<AnswerRecord>(std::move(a));
}

Result<SendTotals> TaskStore::Totals(std::optional<int64_t> run_id, std::optional<int64_t> job_id) {
  const std::string where =
      run_id ? "r.run_id = ?1"
             : "(?2 IS NULL OR r.item_id IN (SELECT id FROM items WHERE job_id = ?2))";
  REEL_ASSIGN_OR_RETURN(
      Statement s,
      Statement::Prepare(
          db_.handle(),
          "SELECT r.status, r.outcome, coalesce(r.attempts, 1), r.latency_seconds, "
          "r.ttft_seconds, r.local_prompt_tokens, p.prompt_tokens, r.completion_tokens, "
          "r.cached_tokens, r.reasoning_tokens, coalesce(p.truncated, 0), " +
              UnixSeconds("r.sent_at") + ", " + UnixSeconds("r.finished_at") +
              ", (SELECT count(*) FROM requests o WHERE o.task_id = r.task_id AND o.id < r.id), "
              "CASE WHEN json_valid(r.retry_reasons) THEN (SELECT count(*) FROM "
              "json_each(r.retry_reasons) WHERE substr(value, 1, length(?3)) = ?3) ELSE 0 END, "
              "r.prompt_tokens FROM requests r LEFT JOIN responses p ON p.request_id = r.id "
              "WHERE r.task_id IS NOT NULL AND r.status != 'sent' AND " +
              where));
  if (run_id) {
    s.Bind(1, *run_id);
  } else {
    s.Bind(2, job_id);
  }
  s.Bind(3, std::string(kAnswerCheckRetry));
  SendTotals t;
  t.first_sent_unix = 0;
  REEL_RETURN_IF_ERROR(internal::ForEachRow(s, [&](const Statement& row) {
    const std::string status = row.ColumnText(0);
    const std::string outcome = row.ColumnText(1);
    ++t.sends;
    if (outcome == "cancelled") {
      ++t.cancelled;
    } else if (status == "succeeded") {
      ++t.succeeded;
    } else {
      ++t.failed;
    }
    if (outcome == "prompt too long") ++t.too_long;
    const int64_t rechecked = row.ColumnInt(14);
    t.rechecked += rechecked;
    t.retries += std::max<int64_t>(0, row.ColumnInt(2) - 1 - rechecked);
    if (row.ColumnInt(13) > 0) ++t.resent;
    if (std::optional<double> latency = row.ColumnOptionalDouble(3)) {
      if (status == "succeeded") {
        t.latency_sum += *latency;
        t.latencies.push_back(*latency);
      }
    }
    if (std::optional<double> ttft = row.ColumnOptionalDouble(4); ttft && status == "succeeded") {
      t.ttft_seconds.push_back(*ttft);
    }
    // Usage: every answer the server gave, whatever became of the request (a refused answer
    // was billed too).
    t.prompt_tokens += row.ColumnOptionalInt(15).value_or(0);
    t.completion_tokens += row.ColumnOptionalInt(7).value_or(0);
    t.cached_tokens += row.ColumnOptionalInt(8).value_or(0);
    t.reasoning_tokens += row.ColumnOptionalInt(9).value_or(0);
    if (status == "succeeded") {
      // Reel'row count against the server'row count of the stored answer'row prompt.
      const std::optional<int64_t> local = row.ColumnOptionalInt(5);
      const std::optional<int64_t> server = row.ColumnOptionalInt(6);
      if (row.ColumnInt(10) != 0) ++t.truncated;
      if (local && server) {
        ++t.compared;
        t.local_prompt_tokens += *local;
        t.compared_server_tokens += *server;
        t.max_abs_token_difference =
            std::max<int64_t>(t.max_abs_token_difference, std::llabs(*server - *local));
      }
    }
    const std::optional<double> sent = row.ColumnOptionalDouble(11);
    const std::optional<double> finished = row.ColumnOptionalDouble(12);
    if (sent && (t.first_sent_unix == 0 || *sent < t.first_sent_unix)) t.first_sent_unix = *sent;
    if (finished && *finished > t.last_finished_unix) t.last_finished_unix = *finished;
  }));
  // /tokenize comparisons of the tasks those sends belong to.
  REEL_ASSIGN_OR_RETURN(
      Statement k,
      Statement::Prepare(db_.handle(),
                         "SELECT t.server_count_tokens - t.local_prompt_tokens FROM tasks t "
                         "WHERE t.server_count_tokens IS NOT NULL AND "
                         "t.local_prompt_tokens IS NOT NULL AND t.id IN "
                         "(SELECT r.task_id FROM requests r WHERE r.task_id IS NOT NULL AND " +
                             where + ")"));
  if (run_id) {
    k.Bind(1, *run_id);
  } else {
    k.Bind(2, job_id);
  }
  REEL_RETURN_IF_ERROR(internal::ForEachRow(k, [&](const Statement& row) {
    const int64_t d = row.ColumnInt(0);
    ++t.tokenize_compared;
    t.tokenize_difference_sum += d;
    t.tokenize_max_abs_difference = std::max<int64_t>(t.tokenize_max_abs_difference, std::llabs(d));
  }));
  return t;
}

Status TaskStore::SetRunReport(int64_t run_id, const std::string& report_json,
                               std::optional<double> gpu_cost) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(Statement update,
                        Statement::Prepare(db, "UPDATE runs SET report_json = ?2 WHERE id = ?1"));
  REEL_RETURN_IF_ERROR(update.Bind(1, run_id).Bind(2, report_json).Run());
  if (gpu_cost && *gpu_cost > 0) {
    REEL_ASSIGN_OR_RETURN(
        Statement share,
        Statement::Prepare(
            db,
            "WITH total AS (SELECT sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, "
            "0)) AS tokens FROM requests WHERE run_id = ?1 AND cost IS NULL) "
            "UPDATE requests SET cost = ?2 * (coalesce(prompt_tokens, 0) + "
            "coalesce(completion_tokens, 0)) / (SELECT tokens FROM total) "
            "WHERE run_id = ?1 AND cost IS NULL AND (SELECT tokens FROM total) > 0"));
    REEL_RETURN_IF_ERROR(share.Bind(1, run_id).Bind(2, *gpu_cost).Run());
  }
  return txn.Commit();
}

Result<std::optional<std::pair<int64_t, std::string>>> TaskStore::LatestRunReport(
    std::optional<int64_t> job_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement s,
      Statement::Prepare(db_.handle(),
                         "SELECT id, report_json FROM runs WHERE report_json IS NOT NULL AND "
                         "(?1 IS NULL OR job_id = ?1) ORDER BY "
                         "coalesce(json_extract(report_json, '$.requests'), 0) > 0 DESC, "
                         "started_at DESC, id DESC LIMIT 1"));
  s.Bind(1, job_id);
  REEL_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::pair<int64_t, std::string>>();
  return std::optional<std::pair<int64_t, std::string>>(
      std::make_pair(s.ColumnInt(0), s.ColumnText(1)));
}

}  // namespace reel::storage
