#include "storage/internal/answer_times.h"

#include <string>

#include "base/time_references.h"
#include "storage/internal/rows.h"
#include "storage/internal/sqlite.h"

namespace reel::storage::internal {
namespace {

Result<bool> HasTimesTables(sqlite3* db) {
  REEL_ASSIGN_OR_RETURN(int64_t n,
                        QueryInt(db,
                                 "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND "
                                 "name = 'answer_time_frames'"));
  return n > 0;
}

}  // namespace

Status IndexResponseTimes(sqlite3* db, int64_t response_id, std::string_view content) {
  REEL_ASSIGN_OR_RETURN(Statement clear,
                        Statement::Prepare(db, "DELETE FROM answer_times WHERE response_id = ?1"));
  REEL_RETURN_IF_ERROR(clear.Bind(1, response_id).Run());
  REEL_ASSIGN_OR_RETURN(Statement insert,
                        Statement::Prepare(db,
                                           "INSERT INTO answer_times(response_id, char_start, "
                                           "char_end, text, form, seconds, end_seconds) "
                                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  // Code points are counted incrementally: one pass over the text for all references.
  size_t counted_bytes = 0;
  int64_t counted_points = 0;
  auto points_at = [&](size_t offset) {
    counted_points += CodePointOffset(content.substr(counted_bytes), offset - counted_bytes);
    counted_bytes = offset;
    return counted_points;
  };
  for (const TimeReference& ref : FindTimeReferences(content)) {
    const int64_t start = points_at(ref.begin);
    const int64_t end = points_at(ref.end);
    insert.Bind(1, response_id)
        .Bind(2, start)
        .Bind(3, end)
        .Bind(4, content.substr(ref.begin, ref.end - ref.begin))
        .Bind(5, TimeFormName(ref.form))
        .Bind(6, ref.seconds)
        .Bind(7, ref.end_seconds);
    REEL_RETURN_IF_ERROR(insert.Run());
    insert.Reset();
  }
  REEL_ASSIGN_OR_RETURN(
      Statement scanned,
      Statement::Prepare(db,
                         "INSERT INTO answer_time_scans(response_id, grammar_version) "
                         "VALUES (?1, ?2) ON CONFLICT(response_id) DO UPDATE SET "
                         "grammar_version = excluded.grammar_version, scanned_at = "
                         "excluded.scanned_at"));
  return scanned.Bind(1, response_id).Bind(2, kTimeReferenceGrammarVersion).Run();
}

Result<int64_t> IndexStaleResponseTimes(sqlite3* db, int batch_size) {
  int64_t total = 0;
  while (true) {
    REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
    REEL_ASSIGN_OR_RETURN(
        Statement stale,
        Statement::Prepare(db,
                           "SELECT r.id, r.content FROM responses r "
                           "LEFT JOIN answer_time_scans s ON s.response_id = r.id "
                           "WHERE (s.response_id IS NULL OR s.grammar_version != ?1) "
                           "AND r.check_error IS NULL "
                           "ORDER BY r.id LIMIT ?2"));
    stale.Bind(1, kTimeReferenceGrammarVersion).Bind(2, batch_size);
    std::vector<std::pair<int64_t, std::string>> batch;
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stale, [&](const Statement& row) {
      batch.emplace_back(row.ColumnInt(0), row.ColumnText(1));
    }));
    stale.Reset();
    for (const auto& [id, content] : batch) {
      REEL_RETURN_IF_ERROR(IndexResponseTimes(db, id, content));
    }
    REEL_RETURN_IF_ERROR(txn.Commit());
    total += static_cast<int64_t>(batch.size());
    if (static_cast<int>(batch.size()) < batch_size) return total;
  }
}

Result<std::vector<AnswerTimeRecord>> ListResponseTimes(sqlite3* db, int64_t response_id) {
  std::vector<AnswerTimeRecord> times;
  REEL_ASSIGN_OR_RETURN(bool has_tables, HasTimesTables(db));
  if (!has_tables) return times;
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         "SELECT response_id, char_start, char_end, text, form, seconds, "
                         "end_seconds, frame_id, frame_index, frame_seconds, end_frame_index "
                         "FROM answer_time_frames WHERE response_id = ?1 ORDER BY char_start"));
  stmt.Bind(1, response_id);
  REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
    AnswerTimeRecord t;
    t.response_id = row.ColumnInt(0);
    t.char_start = row.ColumnInt(1);
    t.char_end = row.ColumnInt(2);
    t.text = row.ColumnText(3);
    t.form = row.ColumnText(4);
    t.seconds = row.ColumnDouble(5);
    t.end_seconds = row.ColumnOptionalDouble(6);
    t.frame_id = row.ColumnOptionalInt(7);
    t.frame_index = row.ColumnOptionalInt(8);
    t.frame_seconds = row.ColumnOptionalDouble(9);
    t.end_frame_index = row.ColumnOptionalInt(10);
    times.push_back(std::move(t));
  }));
  return times;
}

}  // namespace reel::storage::internal
