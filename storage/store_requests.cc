// Store: requests to the model, their responses, and the time references found in answers.
#include <algorithm>

#include "storage/internal/answer_times.h"
#include "storage/internal/random_uid.h"
#include "storage/internal/schema.h"
#include "storage/internal/sqlite.h"
#include "storage/internal/store_shared.h"
#include "storage/store.h"

namespace reel::storage {

using internal::Statement;
using internal::Transaction;

using internal::ExpectChanged;

Result<int64_t> Store::BeginRequest(const RequestRecord& request) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         "INSERT INTO requests(uid, item_id, context_id, run_id, prompt_id, "
                         "model) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  stmt.Bind(1, internal::RandomUid())
      .Bind(2, request.item_id)
      .Bind(3, request.context_id)
      .Bind(4, request.run_id)
      .Bind(5, request.prompt_id)
      .Bind(6, request.model);
  REEL_RETURN_IF_ERROR(stmt.Run());
  int64_t id = sqlite3_last_insert_rowid(db);
  REEL_RETURN_IF_ERROR(txn.Commit());
  return id;
}

Status Store::FinishRequest(int64_t request_id, const ResponseRecord& response) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement update,
      Statement::Prepare(db,
                         "UPDATE requests SET status = 'succeeded', error = NULL, "
                         "latency_seconds = ?2, prompt_tokens = ?3, completion_tokens = ?4, "
                         "cached_tokens = ?5, finished_at = " +
                             std::string(internal::kNowSql) + " WHERE id = ?1"));
  REEL_RETURN_IF_ERROR(update.Bind(1, request_id)
                           .Bind(2, response.latency_seconds)
                           .Bind(3, response.prompt_tokens)
                           .Bind(4, response.completion_tokens)
                           .Bind(5, response.cached_tokens)
                           .Run());
  REEL_RETURN_IF_ERROR(ExpectChanged(db, "request", request_id));
  REEL_ASSIGN_OR_RETURN(
      Statement insert,
      Statement::Prepare(db,
                         "INSERT INTO responses(request_id, content, reasoning, finish_reason, "
                         "prompt_tokens, completion_tokens, cached_tokens) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  insert.Bind(1, request_id)
      .Bind(2, response.content)
      .Bind(3, response.reasoning)
      .Bind(4, response.finish_reason)
      .Bind(5, response.prompt_tokens)
      .Bind(6, response.completion_tokens)
      .Bind(7, response.cached_tokens);
  REEL_RETURN_IF_ERROR(insert.Run());
  REEL_RETURN_IF_ERROR(
      internal::IndexResponseTimes(db, sqlite3_last_insert_rowid(db), response.content));
  return txn.Commit();
}

Status Store::FailRequest(int64_t request_id, const std::string& error,
                          std::optional<double> latency_seconds) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(Statement update,
                        Statement::Prepare(db,
                                           "UPDATE requests SET status = 'failed', error = ?2, "
                                           "latency_seconds = ?3, finished_at = " +
                                               std::string(internal::kNowSql) + " WHERE id = ?1"));
  REEL_RETURN_IF_ERROR(update.Bind(1, request_id).Bind(2, error).Bind(3, latency_seconds).Run());
  REEL_RETURN_IF_ERROR(ExpectChanged(db, "request", request_id));
  return txn.Commit();
}

Result<int64_t> Store::IndexAnswerTimes(int batch_size) {
  return internal::IndexStaleResponseTimes(db_.handle(), std::max(1, batch_size));
}

Result<std::vector<AnswerTimeRecord>> Store::ListAnswerTimes(int64_t response_id) {
  return internal::ListResponseTimes(db_.handle(), response_id);
}

}  // namespace reel::storage
