#include "storage/store.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <set>

#include "storage/internal/answer_times.h"
#include "storage/internal/json_string_array.h"
#include "storage/internal/random_uid.h"
#include "storage/internal/schema.h"
#include "storage/internal/sqlite.h"
#include "storage/sha256.h"

namespace reel::storage {

using internal::Statement;
using internal::Transaction;

const EnumNames<RunStatus>& RunStatusNames() {
  using S = RunStatus;
  static const EnumNames<S> names{{{"running", S::kRunning},
                                   {"succeeded", S::kSucceeded},
                                   {"failed", S::kFailed},
                                   {"interrupted", S::kInterrupted}}};
  return names;
}

const EnumNames<ItemKind>& ItemKindNames() {
  using K = ItemKind;
  static const EnumNames<K> names{{{"video", K::kVideo},
                                   {"image", K::kImage},
                                   {"document", K::kDocument},
                                   {"subtitle", K::kSubtitle}}};
  return names;
}

const EnumNames<ItemStatus>& ItemStatusNames() {
  using S = ItemStatus;
  static const EnumNames<S> names{{{"pending", S::kPending},
                                   {"running", S::kRunning},
                                   {"done", S::kDone},
                                   {"failed", S::kFailed}}};
  return names;
}

const EnumNames<EventLevel>& EventLevelNames() {
  using L = EventLevel;
  static const EnumNames<L> names{
      {{"debug", L::kDebug}, {"info", L::kInfo}, {"warning", L::kWarning}, {"error", L::kError}}};
  return names;
}

const char* RunStatusName(RunStatus status) { return RunStatusNames().Name(status).c_str(); }
const char* ItemKindName(ItemKind kind) { return ItemKindNames().Name(kind).c_str(); }
const char* ItemStatusName(ItemStatus status) { return ItemStatusNames().Name(status).c_str(); }
const char* EventLevelName(EventLevel level) { return EventLevelNames().Name(level).c_str(); }

namespace {

// A name the database holds; an unknown one reads as the first (the default).
template <typename E>
E ParseStored(const EnumNames<E>& names, const std::string& s) {
  return names.Parse(s).value_or(names.entries.front().second);
}

std::string HostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "unknown";
  return buffer;
}

// Fails with kNotFound unless the last UPDATE changed a row.
Status ExpectChanged(sqlite3* db, const char* what, int64_t id) {
  if (sqlite3_changes(db) == 0) return NotFound(std::string(what) + " " + std::to_string(id));
  return Status::Ok();
}

Result<std::string> PutBlobInTransaction(sqlite3* db, std::string_view bytes) {
  std::string hash = Sha256Hex(bytes);
  REEL_ASSIGN_OR_RETURN(
      Statement stmt, Statement::Prepare(db,
                                         "INSERT INTO blobs(hash, size, data) VALUES (?1, ?2, ?3) "
                                         "ON CONFLICT(hash) DO NOTHING"));
  stmt.Bind(1, hash).Bind(2, static_cast<int64_t>(bytes.size())).BindBlob(3, bytes);
  REEL_RETURN_IF_ERROR(stmt.Run());
  return hash;
}

Status WriteFrames(sqlite3* db, int64_t item_id, const std::vector<FrameRecord>& frames) {
  REEL_ASSIGN_OR_RETURN(Statement del,
                        Statement::Prepare(db, "DELETE FROM frames WHERE item_id = ?1"));
  REEL_RETURN_IF_ERROR(del.Bind(1, item_id).Run());
  REEL_ASSIGN_OR_RETURN(
      Statement insert,
      Statement::Prepare(db,
                         "INSERT INTO frames(item_id, sample_index, source_frame, pts_seconds, "
                         "time_seconds, width, height, thumbnail_hash, phash, duplicate_of) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
  for (const FrameRecord& frame : frames) {
    std::optional<std::string> thumbnail = frame.thumbnail_hash;
    if (!frame.thumbnail_jpeg.empty()) {
      REEL_ASSIGN_OR_RETURN(thumbnail, PutBlobInTransaction(db, frame.thumbnail_jpeg));
    }
    std::optional<int64_t> phash;
    if (frame.phash) phash = static_cast<int64_t>(*frame.phash);  // same 64 bits
    insert.Reset();
    insert.Bind(1, item_id)
        .Bind(2, frame.sample_index)
        .Bind(3, frame.source_frame)
        .Bind(4, frame.pts_seconds)
        .Bind(5, frame.time_seconds)
        .Bind(6, frame.width)
        .Bind(7, frame.height)
        .Bind(8, thumbnail)
        .Bind(9, phash)
        .Bind(10, frame.duplicate_of);
    Status s = insert.Run();
    if (!s.ok()) {
      return s.WithPrefix("item " + std::to_string(item_id) + " frame " +
                          std::to_string(frame.sample_index));
    }
  }
  return Status::Ok();
}

std::string DimsJson(const std::vector<int64_t>& dims) {
  std::string json = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) json += ",";
    json += std::to_string(dims[i]);
  }
  return json + "]";
}

// Inserts (or replaces) one feature of frame `frame_id`; its bytes go to blobs. Returns its id.
Result<int64_t> WriteFeature(sqlite3* db, int64_t frame_id, const FeatureRecord& feature) {
  REEL_ASSIGN_OR_RETURN(std::string hash, PutBlobInTransaction(db, feature.data));
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         "INSERT INTO features(frame_id, model, dtype, dims_json, blob_hash, "
                         "input_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
                         "ON CONFLICT(frame_id, model) DO UPDATE "
                         "SET dtype = excluded.dtype, dims_json = excluded.dims_json, "
                         "blob_hash = excluded.blob_hash, input_hash = excluded.input_hash, "
                         "created_at = " +
                             std::string(internal::kNowSql) + " RETURNING id"));
  stmt.Bind(1, frame_id)
      .Bind(2, feature.model)
      .Bind(3, feature.dtype)
      .Bind(4, DimsJson(feature.dims))
      .Bind(5, hash)
      .Bind(6, feature.input_hash);
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Internal("feature upsert returned no row");
  int64_t id = stmt.ColumnInt(0);
  REEL_RETURN_IF_ERROR(stmt.Run());
  return id;
}

// The features of an item's frames, which WriteFrames has just written.
Status WriteItemFeatures(sqlite3* db, int64_t item_id, const std::vector<ItemFeature>& features) {
  if (features.empty()) return Status::Ok();
  REEL_ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(db, "SELECT id FROM frames WHERE item_id = ?1 AND sample_index = ?2"));
  for (const ItemFeature& f : features) {
    find.Reset();
    REEL_ASSIGN_OR_RETURN(bool row, find.Bind(1, item_id).Bind(2, f.sample_index).Step());
    if (!row) {
      return InvalidArgument("item " + std::to_string(item_id) + ": a feature names frame " +
                             std::to_string(f.sample_index) + ", which the item does not have");
    }
    const int64_t frame_id = find.ColumnInt(0);
    REEL_RETURN_IF_ERROR(WriteFeature(db, frame_id, f.feature).status());
  }
  return Status::Ok();
}

Status WriteSegments(sqlite3* db, int64_t item_id, const std::vector<SegmentRecord>& segments) {
  REEL_ASSIGN_OR_RETURN(Statement del,
                        Statement::Prepare(db, "DELETE FROM segments WHERE item_id = ?1"));
  REEL_RETURN_IF_ERROR(del.Bind(1, item_id).Run());
  REEL_ASSIGN_OR_RETURN(
      Statement insert,
      Statement::Prepare(db,
                         "INSERT INTO segments(item_id, source, start_seconds, end_seconds, text, "
                         "text_hash, language) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  for (const SegmentRecord& segment : segments) {
    insert.Reset();
    insert.Bind(1, item_id)
        .Bind(2, segment.source)
        .Bind(3, segment.start_seconds)
        .Bind(4, segment.end_seconds)
        .Bind(5, segment.text)
        .Bind(6, Sha256Hex(segment.text))
        .Bind(7, segment.language);
    Status s = insert.Run();
    if (!s.ok()) {
      return s.WithPrefix("item " + std::to_string(item_id) + " segment at " +
                          std::to_string(segment.start_seconds) + " s");
    }
  }
  return Status::Ok();
}

constexpr const char* kItemColumns =
    "id, job_id, path, kind, content_hash, size_bytes, mtime_ns, inode, media_json, "
    "settings_hash, status, error, attempts, last_run_id, updated_at";

ItemRecord ReadItem(const Statement& stmt) {
  ItemRecord item;
  item.id = stmt.ColumnInt(0);
  item.job_id = stmt.ColumnInt(1);
  item.path = stmt.ColumnText(2);
  item.kind = ParseStored(ItemKindNames(), stmt.ColumnText(3));
  item.content_hash = stmt.ColumnOptionalText(4);
  item.size_bytes = stmt.ColumnInt(5);
  item.mtime_ns = stmt.ColumnOptionalInt(6);
  item.inode = stmt.ColumnOptionalInt(7);
  item.media_json = stmt.ColumnOptionalText(8);
  item.settings_hash = stmt.ColumnText(9);
  item.status = ParseStored(ItemStatusNames(), stmt.ColumnText(10));
  item.error = stmt.ColumnOptionalText(11);
  item.attempts = stmt.ColumnInt(12);
  item.last_run_id = stmt.ColumnOptionalInt(13);
  item.updated_at = stmt.ColumnText(14);
  return item;
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

// Plain words -> an FTS5 query where every word must occur, each quoted as a string.
std::string QuoteWords(const std::string& query) {
  std::string out;
  size_t i = 0;
  while (i < query.size()) {
    while (i < query.size() && std::isspace(static_cast<unsigned char>(query[i]))) ++i;
    if (i >= query.size()) break;
    std::string word = "\"";
    while (i < query.size() && !std::isspace(static_cast<unsigned char>(query[i]))) {
      if (query[i] == '"') word += '"';
      word += query[i++];
    }
    word += '"';
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

}  // namespace

bool IsUpToDate(const ItemRecord& stored, const std::optional<std::string>& content_hash,
                const std::string& settings_hash) {
  return stored.status == ItemStatus::kDone && stored.content_hash.has_value() &&
         content_hash.has_value() && *stored.content_hash == *content_hash &&
         stored.settings_hash == settings_hash;
}

Result<Store> Store::Open(const std::string& path, const DatabaseOptions& options) {
  REEL_ASSIGN_OR_RETURN(Database db, Database::Open(path, options));
  return Store(std::move(db));
}

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
      Statement::Prepare(db,
                         "UPDATE runs SET items_seen = ?2, items_done = ?3, "
                         "items_skipped = ?4, items_failed = ?5, frames = ?6, segments = ?7, "
                         "requests = ?8 WHERE id = ?1"));
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
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         "UPDATE runs SET items_seen = ?2, items_done = ?3, "
                         "items_skipped = ?4, items_failed = ?5, frames = ?6, segments = ?7, "
                         "requests = ?8, status = ?9, message = ?10, finished_at = " +
                             std::string(internal::kNowSql) + " WHERE id = ?1"));
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
    while (true) {
      REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      runs.push_back(ReadRun(stmt));
    }
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

Result<std::optional<ItemRecord>> Store::FindItem(int64_t job_id, const std::string& path) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(), "SELECT " + std::string(kItemColumns) +
                                           " FROM items WHERE job_id = ?1 AND path = ?2"));
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Bind(1, job_id).Bind(2, path).Step());
  if (!row) return std::optional<ItemRecord>();
  return std::optional<ItemRecord>(ReadItem(stmt));
}

Result<std::optional<ItemRecord>> Store::GetItem(int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db_.handle(), "SELECT " + std::string(kItemColumns) +
                                                             " FROM items WHERE id = ?1"));
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Bind(1, item_id).Step());
  if (!row) return std::optional<ItemRecord>();
  return std::optional<ItemRecord>(ReadItem(stmt));
}

Result<int64_t> Store::UpsertItem(const ItemRecord& item) {
  if (item.path.empty()) return InvalidArgument("item path is empty");
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  const std::string now = internal::kNowSql;
  // A changed content or settings hash makes the stored outputs stale: back to pending.
  const std::string stale =
      "(items.content_hash IS NOT excluded.content_hash OR "
      "items.settings_hash != excluded.settings_hash)";
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(
          db,
          "INSERT INTO items(job_id, path, kind, content_hash, size_bytes, mtime_ns, inode, "
          "media_json, settings_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
          "ON CONFLICT(job_id, path) DO UPDATE SET "
          "status = CASE WHEN " +
              stale +
              " THEN 'pending' ELSE items.status END, "
              "error = CASE WHEN " +
              stale +
              " THEN NULL ELSE items.error END, "
              "attempts = CASE WHEN " +
              stale +
              " THEN 0 ELSE items.attempts END, "
              "kind = excluded.kind, content_hash = excluded.content_hash, "
              "size_bytes = excluded.size_bytes, mtime_ns = excluded.mtime_ns, "
              "inode = excluded.inode, "
              "media_json = coalesce(excluded.media_json, items.media_json), "
              "settings_hash = excluded.settings_hash, updated_at = " +
              now + " RETURNING id"));
  stmt.Bind(1, item.job_id)
      .Bind(2, item.path)
      .Bind(3, ItemKindName(item.kind))
      .Bind(4, item.content_hash)
      .Bind(5, item.size_bytes)
      .Bind(6, item.mtime_ns)
      .Bind(7, item.inode)
      .Bind(8, item.media_json)
      .Bind(9, item.settings_hash);
  auto row = stmt.Step();
  if (!row.ok()) return row.status().WithPrefix(item.path);
  if (!*row) return Internal("item upsert returned no row");
  int64_t id = stmt.ColumnInt(0);
  REEL_RETURN_IF_ERROR(stmt.Run());
  REEL_RETURN_IF_ERROR(txn.Commit());
  return id;
}

Status Store::MarkItemRunning(int64_t item_id, std::optional<int64_t> run_id) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  const std::string now = internal::kNowSql;
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         "UPDATE items SET status = 'running', attempts = attempts + 1, "
                         "last_run_id = coalesce(?2, last_run_id), started_at = " +
                             now + ", finished_at = NULL, updated_at = " + now + " WHERE id = ?1"));
  REEL_RETURN_IF_ERROR(stmt.Bind(1, item_id).Bind(2, run_id).Run());
  REEL_RETURN_IF_ERROR(ExpectChanged(db, "item", item_id));
  return txn.Commit();
}

Status Store::MarkItemDone(int64_t item_id, const ItemOutputs& outputs) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  const std::string now = internal::kNowSql;
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db,
                                           "UPDATE items SET status = 'done', error = NULL, "
                                           "media_json = coalesce(?2, media_json), finished_at = " +
                                               now + ", updated_at = " + now + " WHERE id = ?1"));
  REEL_RETURN_IF_ERROR(stmt.Bind(1, item_id).Bind(2, outputs.media_json).Run());
  REEL_RETURN_IF_ERROR(ExpectChanged(db, "item", item_id));
  REEL_RETURN_IF_ERROR(WriteFrames(db, item_id, outputs.frames));
  REEL_RETURN_IF_ERROR(WriteItemFeatures(db, item_id, outputs.features));
  REEL_RETURN_IF_ERROR(WriteSegments(db, item_id, outputs.segments));
  return txn.Commit();
}

Status Store::MarkItemFailed(int64_t item_id, const std::string& error) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  const std::string now = internal::kNowSql;
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db, "UPDATE items SET status = 'failed', error = ?2, finished_at = " +
                                 now + ", updated_at = " + now + " WHERE id = ?1"));
  REEL_RETURN_IF_ERROR(stmt.Bind(1, item_id).Bind(2, error).Run());
  REEL_RETURN_IF_ERROR(ExpectChanged(db, "item", item_id));
  return txn.Commit();
}

Status Store::ReplaceItemFrames(int64_t item_id, const std::vector<FrameRecord>& frames) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_RETURN_IF_ERROR(WriteFrames(db, item_id, frames));
  return txn.Commit();
}

Status Store::ReplaceItemSegments(int64_t item_id, const std::vector<SegmentRecord>& segments) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_RETURN_IF_ERROR(WriteSegments(db, item_id, segments));
  return txn.Commit();
}

Result<std::vector<FrameRecord>> Store::ListFrames(int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(),
                         "SELECT sample_index, source_frame, pts_seconds, time_seconds, width, "
                         "height, thumbnail_hash, phash, duplicate_of FROM frames "
                         "WHERE item_id = ?1 ORDER BY sample_index"));
  stmt.Bind(1, item_id);
  std::vector<FrameRecord> frames;
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    FrameRecord frame;
    frame.sample_index = stmt.ColumnInt(0);
    frame.source_frame = stmt.ColumnOptionalInt(1);
    frame.pts_seconds = stmt.ColumnOptionalDouble(2);
    frame.time_seconds = stmt.ColumnDouble(3);
    frame.width = static_cast<int>(stmt.ColumnInt(4));
    frame.height = static_cast<int>(stmt.ColumnInt(5));
    frame.thumbnail_hash = stmt.ColumnOptionalText(6);
    if (!stmt.IsNull(7)) frame.phash = static_cast<uint64_t>(stmt.ColumnInt(7));
    frame.duplicate_of = stmt.ColumnOptionalInt(8);
    frames.push_back(std::move(frame));
  }
  return frames;
}

Result<std::vector<int64_t>> Store::ListFrameIds(int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(),
                         "SELECT id FROM frames WHERE item_id = ?1 ORDER BY sample_index"));
  stmt.Bind(1, item_id);
  std::vector<int64_t> ids;
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ids.push_back(stmt.ColumnInt(0));
  }
  return ids;
}

Result<std::vector<SegmentRecord>> Store::ListSegments(int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(),
                         "SELECT source, start_seconds, end_seconds, text, language FROM segments "
                         "WHERE item_id = ?1 ORDER BY start_seconds, source, id"));
  stmt.Bind(1, item_id);
  std::vector<SegmentRecord> segments;
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    SegmentRecord segment;
    segment.source = stmt.ColumnText(0);
    segment.start_seconds = stmt.ColumnDouble(1);
    segment.end_seconds = stmt.ColumnDouble(2);
    segment.text = stmt.ColumnText(3);
    segment.language = stmt.ColumnOptionalText(4);
    segments.push_back(std::move(segment));
  }
  return segments;
}

Result<std::string> Store::PutBlob(std::string_view bytes) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(std::string hash, PutBlobInTransaction(db, bytes));
  REEL_RETURN_IF_ERROR(txn.Commit());
  return hash;
}

Result<std::optional<std::string>> Store::GetBlob(const std::string& hash) {
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db_.handle(), "SELECT data FROM blobs WHERE hash = ?1"));
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Bind(1, hash).Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(stmt.ColumnBlob(0));
}

Result<int64_t> Store::PutFeature(const FeatureRecord& feature) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(int64_t id, WriteFeature(db, feature.frame_id, feature));
  REEL_RETURN_IF_ERROR(txn.Commit());
  return id;
}

Result<std::optional<std::string>> Store::FindFeatureData(const std::string& model,
                                                          const std::string& input_hash) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(),
                         "SELECT b.data FROM features f JOIN blobs b ON b.hash = f.blob_hash "
                         "WHERE f.model = ?1 AND f.input_hash = ?2 LIMIT 1"));
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Bind(1, model).Bind(2, input_hash).Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(stmt.ColumnBlob(0));
}

namespace {

constexpr const char* kFeatureRowSql =
    "SELECT f.id, f.frame_id, fr.item_id, j.name, i.path, fr.sample_index, fr.time_seconds, "
    "fr.duplicate_of, f.model, f.dtype, f.dims_json, b.data "
    "FROM features f JOIN frames fr ON fr.id = f.frame_id JOIN items i ON i.id = fr.item_id "
    "JOIN jobs j ON j.id = i.job_id JOIN blobs b ON b.hash = f.blob_hash ";

FeatureRow ReadFeatureRow(Statement& stmt) {
  FeatureRow r;
  r.feature_id = stmt.ColumnInt(0);
  r.frame_id = stmt.ColumnInt(1);
  r.item_id = stmt.ColumnInt(2);
  r.job = stmt.ColumnText(3);
  r.path = stmt.ColumnText(4);
  r.sample_index = stmt.ColumnInt(5);
  r.time_seconds = stmt.ColumnDouble(6);
  r.duplicate_of = stmt.ColumnOptionalInt(7);
  r.model = stmt.ColumnText(8);
  r.dtype = stmt.ColumnText(9);
  r.dims_json = stmt.ColumnText(10);
  r.data = stmt.ColumnBlob(11);
  return r;
}

}  // namespace

Result<std::optional<FeatureRow>> Store::GetFrameFeature(int64_t frame_id,
                                                         const std::optional<std::string>& model) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(), std::string(kFeatureRowSql) +
                                           "WHERE f.frame_id = ?1 AND (?2 IS NULL OR f.model = ?2) "
                                           "ORDER BY f.created_at DESC, f.id DESC LIMIT 1"));
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Bind(1, frame_id).Bind(2, model).Step());
  if (!row) return std::optional<FeatureRow>();
  return std::optional<FeatureRow>(ReadFeatureRow(stmt));
}

Status Store::ForEachFeature(const std::string& model, const std::optional<std::string>& job,
                             const std::function<Status(const FeatureRow&)>& fn) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(), std::string(kFeatureRowSql) +
                                           "WHERE f.model = ?1 AND (?2 IS NULL OR j.name = ?2) "
                                           "ORDER BY f.frame_id"));
  stmt.Bind(1, model).Bind(2, job);
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    REEL_RETURN_IF_ERROR(fn(ReadFeatureRow(stmt)));
  }
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, int64_t>>> Store::FeatureModels() {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt, Statement::Prepare(db_.handle(),
                                         "SELECT model, count(*) AS n FROM features GROUP BY model "
                                         "ORDER BY n DESC, model"));
  std::vector<std::pair<std::string, int64_t>> models;
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    models.emplace_back(stmt.ColumnText(0), stmt.ColumnInt(1));
  }
  return models;
}

namespace {

// Inserts (or finds) one contexts row inside the caller's transaction; returns its id.
Result<int64_t> InsertContext(sqlite3* db, const ContextRecord& context) {
  std::string hash = Sha256Hex(context.manifest_json);
  REEL_ASSIGN_OR_RETURN(
      Statement insert,
      Statement::Prepare(db,
                         "INSERT INTO contexts(item_id, prompt_id, context_hash, text_tokens, "
                         "image_tokens, video_tokens, audio_tokens, total_tokens, manifest_json, "
                         "settings_key, count_method, transport, segment_index, segment_count, "
                         "base_key, frame_source) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?4 + ?5 + ?6 + ?7, ?8, ?9, ?10, "
                         "?11, ?12, ?13, coalesce(?14, ?9), ?15) "
                         "ON CONFLICT(item_id, prompt_id, context_hash) DO UPDATE SET "
                         "settings_key = coalesce(excluded.settings_key, settings_key), "
                         "base_key = coalesce(excluded.base_key, base_key), "
                         "frame_source = coalesce(excluded.frame_source, frame_source), "
                         "superseded_at = NULL"));
  insert.Bind(1, context.item_id)
      .Bind(2, context.prompt_id)
      .Bind(3, hash)
      .Bind(4, context.text_tokens)
      .Bind(5, context.image_tokens)
      .Bind(6, context.video_tokens)
      .Bind(7, context.audio_tokens)
      .Bind(8, context.manifest_json)
      .Bind(9, context.settings_key)
      .Bind(10, context.count_method)
      .Bind(11, context.transport)
      .Bind(12, context.segment_index)
      .Bind(13, context.segment_count)
      .Bind(14, context.base_key)
      .Bind(15, context.frame_source);
  REEL_RETURN_IF_ERROR(insert.Run());
  REEL_ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(db,
                         "SELECT id FROM contexts WHERE item_id = ?1 AND prompt_id = ?2 AND "
                         "context_hash = ?3"));
  REEL_ASSIGN_OR_RETURN(
      bool row, find.Bind(1, context.item_id).Bind(2, context.prompt_id).Bind(3, hash).Step());
  if (!row) return Internal("context vanished after insert");
  return find.ColumnInt(0);
}

}  // namespace

Result<int64_t> Store::PutContext(const ContextRecord& context) {
  REEL_ASSIGN_OR_RETURN(std::vector<int64_t> ids, PutContexts({context}));
  return ids.front();
}

Result<std::vector<int64_t>> Store::PutContexts(const std::vector<ContextRecord>& segments) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  std::vector<int64_t> ids;
  ids.reserve(segments.size());
  for (const ContextRecord& segment : segments) {
    REEL_ASSIGN_OR_RETURN(int64_t id, InsertContext(db, segment));
    ids.push_back(id);
  }
  REEL_RETURN_IF_ERROR(txn.Commit());
  return ids;
}

namespace {

struct ContextState {
  int64_t id = 0;
  bool current = false;
  bool superseded = false;
};

// The item's context rows, each with whether it is one of `current` and whether it is marked.
Result<std::vector<ContextState>> ContextStates(
    sqlite3* db, int64_t item_id, const std::set<std::pair<std::string, std::string>>& current) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         "SELECT id, prompt_id, coalesce(base_key, settings_key, ''), "
                         "superseded_at IS NOT NULL FROM contexts WHERE item_id = ?1 ORDER BY id"));
  stmt.Bind(1, item_id);
  std::vector<ContextState> states;
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ContextState s;
    s.id = stmt.ColumnInt(0);
    s.current = current.count({stmt.ColumnText(1), stmt.ColumnText(2)}) > 0;
    s.superseded = stmt.ColumnInt(3) != 0;
    states.push_back(s);
  }
  return states;
}

// The questions of item ?1 the job no longer asks: waiting, and either of a prompt that is not
// one of ?2 (a JSON array of the prompts asked about the item now; a prompt that no longer
// applies to it, e.g. chapters of a document, is not) or about a superseded context. (Over
// tasks t.)
constexpr const char* kStaleTask =
    "t.item_id = ?1 AND t.status = 'waiting' AND (t.prompt_id NOT IN (SELECT value FROM "
    "json_each(?2)) OR t.context_id IN (SELECT id FROM contexts WHERE item_id = ?1 AND "
    "superseded_at IS NOT NULL))";
// Retired questions the job asks again (their prompt applies, their context is current).
constexpr const char* kRestoredTask =
    "t.item_id = ?1 AND t.retired_at IS NOT NULL AND t.prompt_id IN (SELECT value FROM "
    "json_each(?2)) AND t.context_id IN (SELECT id FROM contexts WHERE item_id = ?1 AND "
    "superseded_at IS NULL)";
constexpr const char* kSentBefore =
    "(t.request_id IS NOT NULL OR EXISTS (SELECT 1 FROM requests r WHERE r.task_id = t.id))";

Result<bool> StaleTasksOrRestored(sqlite3* db, int64_t item_id, const std::string& prompts) {
  REEL_ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(db, std::string("SELECT 1 FROM tasks t WHERE (") + kStaleTask +
                                 " AND t.retired_at IS NULL) OR (" + kRestoredTask + ") LIMIT 1"));
  return find.Bind(1, item_id).Bind(2, prompts).Step();
}

// Questions the job no longer asks (kStaleTask): deleted when never sent (as the unsent questions
// of a retired context are), else kept for their requests' history and marked retired_at, so
// they no longer count as waiting for a model. Retired ones asked again lose the mark.
Status RetireStaleTasks(sqlite3* db, int64_t item_id, const std::string& prompts,
                        RetiredContexts* out) {
  REEL_ASSIGN_OR_RETURN(Statement remove,
                        Statement::Prepare(db, std::string("DELETE FROM tasks AS t WHERE ") +
                                                   kStaleTask + " AND NOT " + kSentBefore));
  REEL_RETURN_IF_ERROR(remove.Bind(1, item_id).Bind(2, prompts).Run());
  out->tasks_deleted += sqlite3_changes(db);
  REEL_ASSIGN_OR_RETURN(Statement mark,
                        Statement::Prepare(db, std::string("UPDATE tasks AS t SET retired_at = ") +
                                                   internal::kNowSql + ", updated_at = " +
                                                   internal::kNowSql + " WHERE " + kStaleTask +
                                                   " AND t.retired_at IS NULL AND " + kSentBefore));
  REEL_RETURN_IF_ERROR(mark.Bind(1, item_id).Bind(2, prompts).Run());
  out->tasks_retired += sqlite3_changes(db);
  REEL_ASSIGN_OR_RETURN(
      Statement unmark,
      Statement::Prepare(db, std::string("UPDATE tasks AS t SET retired_at = NULL, updated_at = ") +
                                 internal::kNowSql + " WHERE " + kRestoredTask));
  return unmark.Bind(1, item_id).Bind(2, prompts).Run();
}

bool AnythingToRetire(const std::vector<ContextState>& states) {
  for (const ContextState& s : states) {
    if (s.current == s.superseded) return true;  // stale and unmarked, or current and marked
  }
  return false;
}

}  // namespace

Result<RetiredContexts> Store::RetireContexts(
    int64_t item_id, const std::vector<std::pair<std::string, std::string>>& current_list) {
  sqlite3* db = db_.handle();
  const std::set<std::pair<std::string, std::string>> current(current_list.begin(),
                                                              current_list.end());
  RetiredContexts out;
  std::vector<std::string> prompt_list;
  for (const auto& [prompt, key] : current) prompt_list.push_back(prompt);
  const std::string prompts = internal::JsonStringArray(prompt_list);
  // Most runs change nothing: look before taking the write lock.
  REEL_ASSIGN_OR_RETURN(std::vector<ContextState> states, ContextStates(db, item_id, current));
  REEL_ASSIGN_OR_RETURN(bool stale_tasks, StaleTasksOrRestored(db, item_id, prompts));
  if (!AnythingToRetire(states) && !stale_tasks) return out;
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(states, ContextStates(db, item_id, current));
  REEL_ASSIGN_OR_RETURN(
      Statement unsent,
      Statement::Prepare(db,
                         "DELETE FROM tasks WHERE context_id = ?1 AND status = 'waiting' AND "
                         "request_id IS NULL AND NOT EXISTS (SELECT 1 FROM requests r WHERE "
                         "r.task_id = tasks.id)"));
  REEL_ASSIGN_OR_RETURN(
      Statement referenced,
      Statement::Prepare(db,
                         "SELECT c.prompt_id, c.manifest_json, c.frame_source, "
                         "EXISTS (SELECT 1 FROM tasks t WHERE t.context_id = c.id) OR "
                         "EXISTS (SELECT 1 FROM requests r WHERE r.context_id = c.id) "
                         "FROM contexts c WHERE c.id = ?1"));
  REEL_ASSIGN_OR_RETURN(Statement remove,
                        Statement::Prepare(db, "DELETE FROM contexts WHERE id = ?1"));
  REEL_ASSIGN_OR_RETURN(
      Statement mark,
      Statement::Prepare(db, "UPDATE contexts SET superseded_at = " +
                                 std::string(internal::kNowSql) + " WHERE id = ?1"));
  REEL_ASSIGN_OR_RETURN(
      Statement unmark,
      Statement::Prepare(db, "UPDATE contexts SET superseded_at = NULL WHERE id = ?1"));
  std::set<std::string> sources;
  for (const ContextState& s : states) {
    if (s.current) {
      if (s.superseded) {
        unmark.Reset();
        REEL_RETURN_IF_ERROR(unmark.Bind(1, s.id).Run());
        ++out.restored;
      }
      continue;
    }
    if (s.superseded) continue;  // retired before
    unsent.Reset();
    REEL_RETURN_IF_ERROR(unsent.Bind(1, s.id).Run());
    out.tasks_deleted += sqlite3_changes(db);
    referenced.Reset();
    REEL_ASSIGN_OR_RETURN(bool row, referenced.Bind(1, s.id).Step());
    if (!row) continue;
    RetiredContext r;
    r.id = s.id;
    r.prompt_id = referenced.ColumnText(0);
    r.manifest_json = referenced.ColumnText(1);
    r.frame_source = referenced.ColumnOptionalText(2);
    const bool kept = referenced.ColumnInt(3) != 0;
    if (kept) {
      mark.Reset();
      REEL_RETURN_IF_ERROR(mark.Bind(1, s.id).Run());
      ++out.superseded;
    } else {
      remove.Reset();
      REEL_RETURN_IF_ERROR(remove.Bind(1, s.id).Run());
      r.deleted = true;
      ++out.deleted;
    }
    if (r.frame_source) sources.insert(*r.frame_source);
    out.retired.push_back(std::move(r));
  }
  REEL_RETURN_IF_ERROR(RetireStaleTasks(db, item_id, prompts, &out));
  if (!sources.empty()) {
    REEL_ASSIGN_OR_RETURN(
        Statement kept,
        Statement::Prepare(db,
                           "SELECT manifest_json FROM contexts WHERE frame_source = ?1 AND "
                           "superseded_at IS NULL"));
    for (const std::string& source : sources) {
      kept.Reset();
      kept.Bind(1, source);
      while (true) {
        REEL_ASSIGN_OR_RETURN(bool row, kept.Step());
        if (!row) break;
        out.kept_frames.emplace_back(source, kept.ColumnText(0));
      }
    }
  }
  REEL_RETURN_IF_ERROR(txn.Commit());
  return out;
}

Result<bool> Store::HasContexts(int64_t item_id, const std::string& prompt_id,
                                const std::string& settings_key) {
  REEL_ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(db_.handle(),
                         "SELECT 1 FROM contexts WHERE item_id = ?1 AND prompt_id = ?2 AND "
                         "settings_key = ?3 LIMIT 1"));
  return find.Bind(1, item_id).Bind(2, prompt_id).Bind(3, settings_key).Step();
}

Result<std::vector<int64_t>> Store::FindContexts(int64_t item_id, const std::string& prompt_id,
                                                 const std::string& settings_key) {
  REEL_ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(db_.handle(),
                         "SELECT id FROM contexts WHERE item_id = ?1 AND prompt_id = ?2 AND "
                         "settings_key = ?3 ORDER BY segment_index, id"));
  find.Bind(1, item_id).Bind(2, prompt_id).Bind(3, settings_key);
  std::vector<int64_t> ids;
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, find.Step());
    if (!row) break;
    ids.push_back(find.ColumnInt(0));
  }
  return ids;
}

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

Result<int64_t> Store::IndexAnswerTimes(int batch_size) {
  return internal::IndexStaleResponseTimes(db_.handle(), std::max(1, batch_size));
}

Result<std::vector<AnswerTimeRecord>> Store::ListAnswerTimes(int64_t response_id) {
  return internal::ListResponseTimes(db_.handle(), response_id);
}

Result<std::vector<SearchHit>> Store::Search(const std::string& query,
                                             const SearchOptions& options) {
  std::string match = options.fts_syntax ? query : QuoteWords(query);
  if (match.find_first_not_of(" \t\r\n") == std::string::npos) {
    return InvalidArgument("search query is empty");
  }
  if (!options.answers && !options.segments) return std::vector<SearchHit>();
  // snippet(): column 0, matches in [ ], "..." where text is elided, about 12 tokens.
  const std::string answers =
      "SELECT 0 AS source, j.name, i.id, i.path, req.prompt_id, NULL AS start_s, NULL AS end_s, "
      "snippet(responses_fts, 0, '[', ']', '...', 12) AS snip, bm25(responses_fts) AS score, "
      "resp.id AS response_id "
      "FROM responses_fts JOIN responses resp ON resp.id = responses_fts.rowid "
      "JOIN requests req ON req.id = resp.request_id JOIN items i ON i.id = req.item_id "
      "JOIN jobs j ON j.id = i.job_id "
      "WHERE responses_fts MATCH ?1 AND (?3 IS NULL OR j.name = ?3) "
      "AND req.status = 'succeeded'";  // an answer that failed its check is none
  const std::string segments =
      "SELECT 1 AS source, j.name, i.id, i.path, s.source, s.start_seconds AS start_s, "
      "s.end_seconds AS end_s, snippet(segments_fts, 0, '[', ']', '...', 12) AS snip, "
      "bm25(segments_fts) AS score, NULL AS response_id "
      "FROM segments_fts JOIN segments s ON s.id = segments_fts.rowid "
      "JOIN items i ON i.id = s.item_id JOIN jobs j ON j.id = i.job_id "
      "WHERE segments_fts MATCH ?1 AND (?3 IS NULL OR j.name = ?3)";
  std::string sql;
  if (options.answers && options.segments) {
    sql = answers + " UNION ALL " + segments;
  } else {
    sql = options.answers ? answers : segments;
  }
  sql = "SELECT * FROM (" + sql + ") ORDER BY score, path, start_s LIMIT ?2";
  REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db_.handle(), sql));
  stmt.Bind(1, match).Bind(2, options.limit).Bind(3, options.job);
  std::vector<SearchHit> hits;
  while (true) {
    auto row = stmt.Step();
    if (!row.ok()) return InvalidArgument("search '" + query + "': " + row.status().message());
    if (!*row) break;
    SearchHit hit;
    hit.source = stmt.ColumnInt(0) == 0 ? SearchHit::Source::kAnswer : SearchHit::Source::kSegment;
    hit.job = stmt.ColumnText(1);
    hit.item_id = stmt.ColumnInt(2);
    hit.path = stmt.ColumnText(3);
    hit.origin = stmt.ColumnText(4);
    hit.start_seconds = stmt.ColumnOptionalDouble(5);
    hit.end_seconds = stmt.ColumnOptionalDouble(6);
    hit.snippet = stmt.ColumnText(7);
    hit.score = stmt.ColumnDouble(8);
    hit.response_id = stmt.ColumnOptionalInt(9);
    hits.push_back(std::move(hit));
  }
  // The frames the model meant: references whose text the snippet shows (matches unbracketed).
  for (SearchHit& hit : hits) {
    if (!hit.response_id) continue;
    std::string plain;
    for (char c : hit.snippet) {
      if (c != '[' && c != ']') plain += c;
    }
    REEL_ASSIGN_OR_RETURN(std::vector<AnswerTimeRecord> times, ListAnswerTimes(*hit.response_id));
    for (AnswerTimeRecord& t : times) {
      if (plain.find(t.text) != std::string::npos) hit.times.push_back(std::move(t));
    }
  }
  return hits;
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
    while (true) {
      REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      summary.recent_runs.push_back(ReadRun(stmt));
    }
  }
  {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(db,
                           "SELECT i.status, count(*) FROM items i JOIN jobs j ON "
                           "j.id = i.job_id WHERE ?1 IS NULL OR j.name = ?1 GROUP BY i.status"));
    stmt.Bind(1, options.job);
    while (true) {
      REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      int64_t n = stmt.ColumnInt(1);
      switch (ParseStored(ItemStatusNames(), stmt.ColumnText(0))) {
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
    }
  }
  {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(db,
                           "SELECT job, item_id, path, stage, prompt_id, error, time "
                           "FROM failures WHERE ?1 IS NULL OR job = ?1 "
                           "ORDER BY time DESC LIMIT ?2"));
    stmt.Bind(1, options.job).Bind(2, options.max_failures);
    while (true) {
      REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      FailureRecord failure;
      failure.job = stmt.ColumnText(0);
      failure.item_id = stmt.ColumnInt(1);
      failure.path = stmt.ColumnText(2);
      failure.stage = stmt.ColumnText(3);
      failure.prompt_id = stmt.ColumnOptionalText(4);
      failure.error = stmt.ColumnText(5);
      failure.time = stmt.ColumnText(6);
      summary.recent_failures.push_back(std::move(failure));
    }
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
    while (true) {
      REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      summary.recent_partial.push_back({.job = stmt.ColumnText(0),
                                        .item_id = stmt.ColumnInt(1),
                                        .path = stmt.ColumnText(2),
                                        .requested = stmt.ColumnInt(3),
                                        .returned = stmt.ColumnInt(4),
                                        .missing = stmt.ColumnInt(5),
                                        .decode_errors = stmt.ColumnInt(6),
                                        .truncation = stmt.ColumnText(7),
                                        .time = stmt.ColumnText(8)});
    }
  }
  return summary;
}

}  // namespace reel::storage
