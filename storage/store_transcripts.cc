// Store: transcripts of speech (the transcripts and transcript_chunks tables, and the segments
// with source 'speech' they own).
#include "storage/internal/rows.h"
#include "storage/internal/schema.h"
#include "storage/internal/sqlite.h"
#include "storage/internal/store_shared.h"
#include "storage/sha256.h"
#include "storage/store.h"

namespace reel::storage {

using internal::ParseStored;
using internal::Statement;
using internal::Transaction;

namespace {

constexpr const char* kTranscriptColumns =
    "item_id, settings_key, backend, model, language, status, segments, chunks, failed_chunks, "
    "speech_seconds, note, error, updated_at";

TranscriptRecord ReadTranscriptRow(const Statement& row) {
  TranscriptRecord t;
  t.item_id = row.ColumnInt(0);
  t.settings_key = row.ColumnText(1);
  t.backend = row.ColumnText(2);
  t.model = row.ColumnText(3);
  t.language = row.ColumnOptionalText(4);
  t.status = ParseStored(TranscriptStatusNames(), row.ColumnText(5));
  t.segments = row.ColumnInt(6);
  t.chunks = row.ColumnInt(7);
  t.failed_chunks = row.ColumnInt(8);
  t.speech_seconds = row.ColumnDouble(9);
  t.note = row.ColumnOptionalText(10);
  t.error = row.ColumnOptionalText(11);
  t.updated_at = row.ColumnText(12);
  return t;
}

Status DeleteSpeechSegments(sqlite3* db, int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement del,
      Statement::Prepare(db, "DELETE FROM segments WHERE item_id = ?1 AND source = 'speech'"));
  return del.Bind(1, item_id).Run();
}

}  // namespace

namespace internal {

Result<std::optional<TranscriptRecord>> ReadTranscript(sqlite3* db, int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db, std::string("SELECT ") + kTranscriptColumns +
                                                   " FROM transcripts WHERE item_id = ?1"));
  stmt.Bind(1, item_id);
  return ReadRow(stmt, ReadTranscriptRow);
}

}  // namespace internal

Result<std::optional<TranscriptRecord>> Store::GetTranscript(int64_t item_id) {
  return internal::ReadTranscript(db_.handle(), item_id);
}

Result<std::vector<TranscriptChunkRecord>> Store::ListTranscriptChunks(int64_t item_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt, Statement::Prepare(db_.handle(),
                                         "SELECT chunk, start_seconds, end_seconds, segments FROM "
                                         "transcript_chunks WHERE item_id = ?1 ORDER BY chunk"));
  stmt.Bind(1, item_id);
  return internal::ReadRows(stmt, [](const Statement& row) {
    TranscriptChunkRecord c;
    c.chunk = row.ColumnInt(0);
    c.start_seconds = row.ColumnDouble(1);
    c.end_seconds = row.ColumnDouble(2);
    c.segments = row.ColumnInt(3);
    return c;
  });
}

Status Store::StartTranscript(const TranscriptRecord& transcript) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement same,
      Statement::Prepare(db, "SELECT settings_key = ?2 FROM transcripts WHERE item_id = ?1"));
  same.Bind(1, transcript.item_id).Bind(2, transcript.settings_key);
  REEL_ASSIGN_OR_RETURN(std::optional<bool> kept, internal::ReadRow(same, [](const Statement& row) {
                          return row.ColumnInt(0) != 0;
                        }));
  if (!kept.value_or(false)) {  // new, or made from other settings: start from nothing
    REEL_RETURN_IF_ERROR(DeleteSpeechSegments(db, transcript.item_id));
    REEL_ASSIGN_OR_RETURN(
        Statement chunks,
        Statement::Prepare(db, "DELETE FROM transcript_chunks WHERE item_id = ?1"));
    REEL_RETURN_IF_ERROR(chunks.Bind(1, transcript.item_id).Run());
  }
  REEL_ASSIGN_OR_RETURN(
      Statement upsert,
      Statement::Prepare(
          db,
          "INSERT INTO transcripts(item_id, settings_key, backend, model, language, status, "
          "segments, chunks, failed_chunks, speech_seconds, note, error) "
          "VALUES (?1, ?2, ?3, ?4, ?5, 'running', "
          "  (SELECT count(*) FROM segments WHERE item_id = ?1 AND source = 'speech'), "
          "  0, 0, 0, NULL, NULL) "
          "ON CONFLICT(item_id) DO UPDATE SET settings_key = excluded.settings_key, "
          "  backend = excluded.backend, model = excluded.model, language = excluded.language, "
          "  status = 'running', segments = excluded.segments, error = NULL, "
          "  updated_at = " +
              std::string(internal::kNowSql)));
  upsert.Bind(1, transcript.item_id)
      .Bind(2, transcript.settings_key)
      .Bind(3, transcript.backend)
      .Bind(4, transcript.model)
      .Bind(5, transcript.language);
  REEL_RETURN_IF_ERROR(upsert.Run());
  return txn.Commit();
}

Status Store::AddTranscriptChunk(int64_t item_id, const TranscriptChunkRecord& chunk,
                                 const std::vector<SegmentRecord>& segments) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement insert_chunk,
      Statement::Prepare(db,
                         "INSERT OR REPLACE INTO transcript_chunks(item_id, chunk, start_seconds, "
                         "end_seconds, segments) VALUES (?1, ?2, ?3, ?4, ?5)"));
  insert_chunk.Bind(1, item_id)
      .Bind(2, chunk.chunk)
      .Bind(3, chunk.start_seconds)
      .Bind(4, chunk.end_seconds)
      .Bind(5, static_cast<int64_t>(segments.size()));
  REEL_RETURN_IF_ERROR(insert_chunk.Run());
  REEL_ASSIGN_OR_RETURN(
      Statement insert,
      Statement::Prepare(db,
                         "INSERT INTO segments(item_id, source, start_seconds, end_seconds, text, "
                         "text_hash, language, confidence, words_json) "
                         "VALUES (?1, 'speech', ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                         "ON CONFLICT DO NOTHING"));
  for (const SegmentRecord& segment : segments) {
    insert.Reset();
    insert.Bind(1, item_id)
        .Bind(2, segment.start_seconds)
        .Bind(3, segment.end_seconds)
        .Bind(4, segment.text)
        .Bind(5, Sha256Hex(segment.text))
        .Bind(6, segment.language)
        .Bind(7, segment.confidence)
        .Bind(8, segment.words_json);
    Status s = insert.Run();
    if (!s.ok()) {
      return s.WithPrefix("item " + std::to_string(item_id) + " speech segment at " +
                          std::to_string(segment.start_seconds) + " s");
    }
  }
  REEL_ASSIGN_OR_RETURN(
      Statement count,
      Statement::Prepare(db,
                         "UPDATE transcripts SET segments = (SELECT count(*) FROM segments WHERE "
                         "item_id = ?1 AND source = 'speech'), updated_at = " +
                             std::string(internal::kNowSql) + " WHERE item_id = ?1"));
  REEL_RETURN_IF_ERROR(count.Bind(1, item_id).Run());
  REEL_RETURN_IF_ERROR(internal::ExpectChanged(db, "transcript of item", item_id));
  return txn.Commit();
}

Status Store::FinishTranscript(const TranscriptRecord& transcript) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(
          db,
          "UPDATE transcripts SET status = ?2, language = coalesce(?3, language), "
          "chunks = ?4, failed_chunks = ?5, speech_seconds = ?6, note = ?7, error = ?8, "
          "segments = (SELECT count(*) FROM segments WHERE item_id = ?1 AND source = 'speech'), "
          "updated_at = " +
              std::string(internal::kNowSql) + " WHERE item_id = ?1 AND settings_key = ?9"));
  stmt.Bind(1, transcript.item_id)
      .Bind(2, TranscriptStatusName(transcript.status))
      .Bind(3, transcript.language)
      .Bind(4, transcript.chunks)
      .Bind(5, transcript.failed_chunks)
      .Bind(6, transcript.speech_seconds)
      .Bind(7, transcript.note)
      .Bind(8, transcript.error)
      .Bind(9, transcript.settings_key);
  REEL_RETURN_IF_ERROR(stmt.Run());
  REEL_RETURN_IF_ERROR(internal::ExpectChanged(db, "transcript of item", transcript.item_id));
  return txn.Commit();
}

Result<int64_t> Store::CountUnfinishedTranscripts(int64_t job_id) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(),
                         "SELECT count(*) FROM transcripts t JOIN items i ON i.id = t.item_id "
                         "WHERE i.job_id = ?1 AND t.status IN ('running', 'partial')"));
  stmt.Bind(1, job_id);
  REEL_ASSIGN_OR_RETURN(std::optional<int64_t> n, internal::ReadRow(stmt, [](const Statement& row) {
                          return row.ColumnInt(0);
                        }));
  return n.value_or(0);
}

}  // namespace reel::storage
