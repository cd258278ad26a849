// Store: items (the input files), and their frames and segments.
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
using internal::PutBlobInTransaction;
using internal::WriteFeature;

namespace {

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
                        Statement::Prepare(db,
                                           "DELETE FROM segments WHERE item_id = ?1 AND "
                                           "source != 'speech'"));
  REEL_RETURN_IF_ERROR(del.Bind(1, item_id).Run());
  REEL_ASSIGN_OR_RETURN(
      Statement insert,
      Statement::Prepare(db,
                         "INSERT INTO segments(item_id, source, start_seconds, end_seconds, text, "
                         "text_hash, language, confidence, words_json) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  for (const SegmentRecord& segment : segments) {
    insert.Reset();
    insert.Bind(1, item_id)
        .Bind(2, segment.source)
        .Bind(3, segment.start_seconds)
        .Bind(4, segment.end_seconds)
        .Bind(5, segment.text)
        .Bind(6, Sha256Hex(segment.text))
        .Bind(7, segment.language)
        .Bind(8, segment.confidence)
        .Bind(9, segment.words_json);
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

}  // namespace

bool IsUpToDate(const ItemRecord& stored, const std::optional<std::string>& content_hash,
                const std::string& settings_hash) {
  return stored.status == ItemStatus::kDone && stored.content_hash.has_value() &&
         content_hash.has_value() && *stored.content_hash == *content_hash &&
         stored.settings_hash == settings_hash;
}

Result<std::optional<ItemRecord>> Store::FindItem(int64_t job_id, const std::string& path) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(), "SELECT " + std::string(kItemColumns) +
                                           " FROM items WHERE job_id = ?1 AND path = ?2"));
  stmt.Bind(1, job_id).Bind(2, path);
  return internal::ReadRow(stmt, ReadItem);
}

Result<std::optional<ItemRecord>> Store::GetItem(int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db_.handle(), "SELECT " + std::string(kItemColumns) +
                                                             " FROM items WHERE id = ?1"));
  stmt.Bind(1, item_id);
  return internal::ReadRow(stmt, ReadItem);
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
                                           "media_json = coalesce(?2, media_json), "
                                           "kind = coalesce(?3, kind), finished_at = " +
                                               now + ", updated_at = " + now + " WHERE id = ?1"));
  std::optional<std::string> kind;
  if (outputs.kind) kind = ItemKindName(*outputs.kind);
  REEL_RETURN_IF_ERROR(stmt.Bind(1, item_id).Bind(2, outputs.media_json).Bind(3, kind).Run());
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
  return internal::ReadRows(stmt, [](const Statement& row) {
    FrameRecord frame;
    frame.sample_index = row.ColumnInt(0);
    frame.source_frame = row.ColumnOptionalInt(1);
    frame.pts_seconds = row.ColumnOptionalDouble(2);
    frame.time_seconds = row.ColumnDouble(3);
    frame.width = static_cast<int>(row.ColumnInt(4));
    frame.height = static_cast<int>(row.ColumnInt(5));
    frame.thumbnail_hash = row.ColumnOptionalText(6);
    if (!row.IsNull(7)) frame.phash = static_cast<uint64_t>(row.ColumnInt(7));
    frame.duplicate_of = row.ColumnOptionalInt(8);
    return frame;
  });
}

Result<std::vector<int64_t>> Store::ListFrameIds(int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(),
                         "SELECT id FROM frames WHERE item_id = ?1 ORDER BY sample_index"));
  stmt.Bind(1, item_id);
  return internal::ReadRows(stmt, [](const Statement& row) { return row.ColumnInt(0); });
}

namespace internal {

Result<std::vector<SegmentRecord>> ReadSegments(sqlite3* db, int64_t item_id, bool speech_columns) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db, std::string("SELECT source, start_seconds, end_seconds, text, "
                                         "language, ") +
                                 (speech_columns ? "confidence, words_json" : "NULL, NULL") +
                                 " FROM segments WHERE item_id = ?1 "
                                 "ORDER BY start_seconds, source, id"));
  stmt.Bind(1, item_id);
  return ReadRows(stmt, [](const Statement& row) {
    SegmentRecord segment;
    segment.source = row.ColumnText(0);
    segment.start_seconds = row.ColumnDouble(1);
    segment.end_seconds = row.ColumnDouble(2);
    segment.text = row.ColumnText(3);
    segment.language = row.ColumnOptionalText(4);
    segment.confidence = row.ColumnOptionalDouble(5);
    segment.words_json = row.ColumnOptionalText(6);
    return segment;
  });
}

}  // namespace internal

Result<std::vector<SegmentRecord>> Store::ListSegments(int64_t item_id) {
  return internal::ReadSegments(db_.handle(), item_id);
}

}  // namespace reel::storage
