// Store: jobs, runs, the event log, and the status summary read from them.
#include <unistd.h>

#include "storage/internal/random_uid.h"
#include "storage/internal/rows.h"
#include "storage/internal/schema.h"
#include "storage/internal/sqlite.h"
#include "storage/internal/store_shared.h"
#include "storage/sha256.h"
#include "storage/store.h"

namespace reel::storage {

using internal::Statement;
using internal::Transaction;

using internal::ExpectChanged;
using internal::ParseStored;

namespace {

std::string HostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "unknown";
  return buffer;
}

constexpr const char* kRunColumns =
    "id, uid, job_id, spec_hash, host, pid, shard_index, shard_count, status, started_at, "
    "finished_at, items_seen, items_done, items_skipped, items_failed, frames, segments, "
    "requests, message";

RunRecord ReadRun(const Statement& stmt) {
  RunRecord run;
  run.id = stmt.ColumnInt(0);
  run.uid = stmt.ColumnText(1);
  run.job_id = stmt.ColumnInt(2);
  run.spec_hash = stmt.ColumnText(3);
  run.host = stmt.ColumnText(4);
  run.pid = stmt.ColumnInt(5);
  run.shard_index = stmt.ColumnInt(6);
  run.shard_count = stmt.ColumnInt(7);
  run.status = ParseStored(RunStatusNames(), stmt.ColumnText(8));
  run.started_at = stmt.ColumnText(9);
  run.finished_at = stmt.ColumnOptionalText(10);
  run.counters.items_seen = stmt.ColumnInt(11);
  run.counters.items_done = stmt.ColumnInt(12);
  run.counters.items_skipped = stmt.ColumnInt(13);
  run.counters.items_failed = stmt.ColumnInt(14);
  run.counters.frames = stmt.ColumnInt(15);
  run.counters.segments = stmt.ColumnInt(16);
  run.counters.requests = stmt.ColumnInt(17);
  run.message = stmt.ColumnOptionalText(18);
  return run;
}

// The run's counters as BindCounters binds them (?2 to ?8), for an UPDATE's SET.
constexpr const char* kSetCounters =
    "items_seen = ?2, items_done = ?3, items_skipped = ?4, items_failed = ?5, frames = ?6, "
    "segments = ?7, requests = ?8";

// Binds the counters to ?2..?8.
void BindCounters(Statement& stmt, const RunCounters& c) {
  stmt.Bind(2, c.items_seen)
      .Bind(3, c.items_done)
      .Bind(4, c.items_skipped)
      .Bind(5, c.items_failed)
      .Bind(6, c.frames)
      .Bind(7, c.segments)
      .Bind(8, c.requests);
}

}  // namespace

Result<int64_t> Store::UpsertJob(const JobRecord& job) {
  if (job.name.empty()) return InvalidArgument("job name is empty");
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         "INSERT INTO jobs(name, spec_text, spec_hash) VALUES (?1, ?2, ?3) "
                         "ON CONFLICT(name) DO UPDATE SET spec_text = excluded.spec_text, "
                         "spec_hash = excluded.spec_hash, updated_at = " +
                             std::string(internal::kNowSql) +
                             " WHERE spec_hash != excluded.spec_hash "
                             "RETURNING id"));
  stmt.Bind(1, job.name)
      .Bind(2, job.spec_text)
      .Bind(3, job.spec_hash.empty() ? Sha256Hex(job.spec_text) : job.spec_hash);
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
  int64_t id = 0;
  if (row) {
    id = stmt.ColumnInt(0);
    REEL_RETURN_IF_ERROR(stmt.Run());
  } else {  // unchanged spec: the DO UPDATE's WHERE skipped the row, so nothing was returned
    REEL_ASSIGN_OR_RETURN(Statement find,
                          Statement::Prepare(db, "SELECT id FROM jobs WHERE name = ?1"));
    REEL_ASSIGN_OR_RETURN(bool found, find.Bind(1, job.name).Step());
    if (!found) return Internal("job '" + job.name + "' vanished during upsert");
    id = find.ColumnInt(0);
  }
  REEL_RETURN_IF_ERROR(txn.Commit());
  return id;
}

Result<std::optional<JobRecord>> Store::FindJob(const std::string& name) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(),
                         "SELECT id, name, spec_text, spec_hash FROM jobs WHERE name = ?1"));
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Bind(1, name).Step());
  if (!row) return std::optional<JobRecord>();
  JobRecord job;
  job.id = stmt.ColumnInt(0);
  job.name = stmt.ColumnText(1);
  job.spec_text = stmt.ColumnText(2);
  job.spec_hash = stmt.ColumnText(3);
  return std::optional<JobRecord>(std::move(job));
}

Result<RunRecord> Store::BeginRun(const RunRecord& run) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         "INSERT INTO runs(uid, job_id, spec_hash, host, pid, shard_index, "
                         "shard_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING " +
                             std::string(kRunColumns)));
  stmt.Bind(1, internal::RandomUid())
      .Bind(2, run.job_id)
      .Bind(3, run.spec_hash)
      .Bind(4, run.host.empty() ? HostName() : run.host)
      .Bind(5, run.pid != 0 ? run.pid : static_cast<int64_t>(getpid()))
      .Bind(6, run.shard_index)
      .Bind(7, run.shard_count);
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Internal("insert into runs returned no row");
  RunRecord stored = ReadRun(stmt);
  REEL_RETURN_IF_ERROR(stmt.Run());
  REEL_RETURN_IF_ERROR(txn.Commit());
  return stored;
}

Status Store::UpdateRunCounters(int64_t run_id, const RunCounters& counters) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db, std::string("UPDATE runs SET ") + kSetCounters + " WHERE id = ?1"));
  stmt.Bind(1, run_id);
  BindCounters(stmt, counters);
  REEL_RETURN_IF_ERROR(stmt.Run());
  REEL_RETURN_IF_ERROR(ExpectChanged(db, "run", run_id));
  return txn.Commit();
}

Status Store::FinishRun(int64_t run_id, RunStatus status, const RunCounters& counters,
                        const std::optional<std::string>& message) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db, std::string("UPDATE runs SET ") + kSetCounters +
                                                   ", status = ?9, message = ?10, finished_at = " +
                                                   internal::kNowSql + " WHERE id = ?1"));
  stmt.Bind(1, run_id);
  BindCounters(stmt, counters);
  stmt.Bind(9, RunStatusName(status)).Bind(10, message);
  REEL_RETURN_IF_ERROR(stmt.Run());
  REEL_RETURN_IF_ERROR(ExpectChanged(db, "run", run_id));
  return txn.Commit();
}

Result<std::vector<RunRecord>> Store::InterruptAbandonedRuns(const std::string& message) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  std::vector<RunRecord> runs;
  {
    REEL_ASSIGN_OR_RETURN(Statement stmt,
                          Statement::Prepare(db, "SELECT " + std::string(kRunColumns) +
                                                     " FROM runs WHERE status = 'running' "
                                                     "ORDER BY id"));
    REEL_RETURN_IF_ERROR(
        internal::ForEachRow(stmt, [&](const Statement& row) { runs.push_back(ReadRun(row)); }));
  }
  if (runs.empty()) return runs;
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         // It ended at its last recorded activity (an event, an item, a
                         // request), not when this run noticed: its wall time is its own.
                         "UPDATE runs SET status = 'interrupted', finished_at = "
                         "coalesce(finished_at, (SELECT max(t) FROM (SELECT runs.started_at AS t "
                         "UNION ALL SELECT max(time) FROM events WHERE run_id = runs.id "
                         "UNION ALL SELECT max(coalesce(finished_at, updated_at)) FROM items "
                         "WHERE last_run_id = runs.id "
                         "UNION ALL SELECT max(coalesce(finished_at, sent_at)) FROM requests "
                         "WHERE run_id = runs.id))), message = coalesce(message, ?1) "
                         "WHERE status = 'running'"));
  REEL_RETURN_IF_ERROR(stmt.Bind(1, message).Run());
  REEL_RETURN_IF_ERROR(txn.Commit());
  return runs;
}

Status Store::LogEvent(const EventRecord& event) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement stmt, Statement::Prepare(db,
                                         "INSERT INTO events(uid, run_id, item_id, level, message) "
                                         "VALUES (?1, ?2, ?3, ?4, ?5)"));
  stmt.Bind(1, internal::RandomUid())
      .Bind(2, event.run_id)
      .Bind(3, event.item_id)
      .Bind(4, EventLevelName(event.level))
      .Bind(5, event.message);
  REEL_RETURN_IF_ERROR(stmt.Run());
  return txn.Commit();
}

Result<StatusSummary> Store::Summarize(const SummaryOptions& options) {
  sqlite3* db = db_.handle();
  StatusSummary summary;
  {
    REEL_ASSIGN_OR_RETURN(Statement stmt,
                          Statement::Prepare(db, "SELECT " + std::string(kRunColumns) +
                                                     " FROM runs WHERE ?1 IS NULL OR job_id = "
                                                     "(SELECT id FROM jobs WHERE name = ?1) "
                                                     "ORDER BY started_at DESC, id DESC LIMIT ?2"));
    stmt.Bind(1, options.job).Bind(2, options.max_runs);
    REEL_RETURN_IF_ERROR(internal::ForEachRow(
        stmt, [&](const Statement& row) { summary.recent_runs.push_back(ReadRun(row)); }));
  }
  {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(db,
                           "SELECT i.status, count(*) FROM items i JOIN jobs j ON "
                           "j.id = i.job_id WHERE ?1 IS NULL OR j.name = ?1 GROUP BY i.status"));
    stmt.Bind(1, options.job);
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      int64_t n = row.ColumnInt(1);
      switch (ParseStored(ItemStatusNames(), row.ColumnText(0))) {
        case ItemStatus::kPending:
          summary.items.pending = n;
          break;
        case ItemStatus::kRunning:
          summary.items.running = n;
          break;
        case ItemStatus::kDone:
          summary.items.done = n;
          break;
        case ItemStatus::kFailed:
          summary.items.failed = n;
          break;
      }
    }));
  }
  {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(db,
                           "SELECT job, item_id, path, stage, prompt_id, error, time "
                           "FROM failures WHERE ?1 IS NULL OR job = ?1 "
                           "ORDER BY time DESC LIMIT ?2"));
    stmt.Bind(1, options.job).Bind(2, options.max_failures);
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      FailureRecord failure;
      failure.job = row.ColumnText(0);
      failure.item_id = row.ColumnInt(1);
      failure.path = row.ColumnText(2);
      failure.stage = row.ColumnText(3);
      failure.prompt_id = row.ColumnOptionalText(4);
      failure.error = row.ColumnText(5);
      failure.time = row.ColumnText(6);
      summary.recent_failures.push_back(std::move(failure));
    }));
  }
  {
    // "partial" is written by this version; older rows say it through missing / decode_errors.
    static constexpr const char* kPartial =
        "i.status = 'done' AND json_valid(i.media_json) AND "
        "(coalesce(json_extract(i.media_json, '$.sample.partial'), 0) = 1 OR "
        "coalesce(json_extract(i.media_json, '$.sample.truncated'), 0) = 1 OR "
        "coalesce(json_extract(i.media_json, '$.sample.missing'), 0) > 0 OR "
        "coalesce(json_extract(i.media_json, '$.sample.decode_errors'), 0) > 0)";
    REEL_ASSIGN_OR_RETURN(
        Statement count,
        Statement::Prepare(db, std::string("SELECT count(*) FROM items i JOIN jobs j ON j.id = "
                                           "i.job_id WHERE (?1 IS NULL OR j.name = ?1) AND ") +
                                   kPartial));
    count.Bind(1, options.job);
    REEL_ASSIGN_OR_RETURN(bool counted, count.Step());
    if (counted) summary.items.partial = count.ColumnInt(0);
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(
            db, std::string("SELECT j.name, i.id, i.path, "
                            "coalesce(json_extract(i.media_json, '$.sample.requested'), 0), "
                            "coalesce(json_extract(i.media_json, '$.sample.returned'), 0), "
                            "coalesce(json_extract(i.media_json, '$.sample.missing'), 0), "
                            "coalesce(json_extract(i.media_json, '$.sample.decode_errors'), 0), "
                            "coalesce(json_extract(i.media_json, '$.sample.truncation'), ''), "
                            "coalesce(i.finished_at, i.updated_at) "
                            "FROM items i JOIN jobs j ON j.id = i.job_id "
                            "WHERE (?1 IS NULL OR j.name = ?1) AND ") +
                    kPartial + " ORDER BY coalesce(i.finished_at, i.updated_at) DESC LIMIT ?2"));
    stmt.Bind(1, options.job).Bind(2, options.max_partial);
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      summary.recent_partial.push_back({.job = row.ColumnText(0),
                                        .item_id = row.ColumnInt(1),
                                        .path = row.ColumnText(2),
                                        .requested = row.ColumnInt(3),
                                        .returned = row.ColumnInt(4),
                                        .missing = row.ColumnInt(5),
                                        .decode_errors = row.ColumnInt(6),
                                        .truncation = row.ColumnText(7),
                                        .time = row.ColumnText(8)});
    }));
  }
  return summary;
}

}  // namespace reel::storage
