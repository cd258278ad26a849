// Store: content-addressed blobs, and the features of frames (their bytes are blobs).
#include "storage/internal/rows.h"
#include "storage/internal/schema.h"
#include "storage/internal/sqlite.h"
#include "storage/internal/store_shared.h"
#include "storage/sha256.h"
#include "storage/store.h"

namespace reel::storage {

using internal::Statement;
using internal::Transaction;

namespace internal {

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

namespace {

std::string DimsJson(const std::vector<int64_t>& dims) {
  std::string json = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) json += ",";
    json += std::to_string(dims[i]);
  }
  return json + "]";
}

}  // namespace

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

}  // namespace internal

using internal::PutBlobInTransaction;
using internal::WriteFeature;

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
  stmt.Bind(1, hash);
  return internal::ReadRow(stmt, [](const Statement& row) { return row.ColumnBlob(0); });
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
  stmt.Bind(1, model).Bind(2, input_hash);
  return internal::ReadRow(stmt, [](const Statement& row) { return row.ColumnBlob(0); });
}

namespace {

constexpr const char* kFeatureRowSql =
    "SELECT f.id, f.frame_id, fr.item_id, j.name, i.path, fr.sample_index, fr.time_seconds, "
    "fr.duplicate_of, f.model, f.dtype, f.dims_json, b.data "
    "FROM features f JOIN frames fr ON fr.id = f.frame_id JOIN items i ON i.id = fr.item_id "
    "JOIN jobs j ON j.id = i.job_id JOIN blobs b ON b.hash = f.blob_hash ";

FeatureRow ReadFeatureRow(const Statement& stmt) {
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
  stmt.Bind(1, frame_id).Bind(2, model);
  return internal::ReadRow(stmt, ReadFeatureRow);
}

Status Store::ForEachFeature(const std::string& model, const std::optional<std::string>& job,
                             const std::function<Status(const FeatureRow&)>& fn) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(), std::string(kFeatureRowSql) +
                                           "WHERE f.model = ?1 AND (?2 IS NULL OR j.name = ?2) "
                                           "ORDER BY f.frame_id"));
  stmt.Bind(1, model).Bind(2, job);
  return internal::ForEachRow(stmt, [&](const Statement& row) { return fn(ReadFeatureRow(row)); });
}

Result<std::vector<std::pair<std::string, int64_t>>> Store::FeatureModels() {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt, Statement::Prepare(db_.handle(),
                                         "SELECT model, count(*) AS n FROM features GROUP BY model "
                                         "ORDER BY n DESC, model"));
  return internal::ReadRows(stmt, [](const Statement& row) {
    return std::pair<std::string, int64_t>(row.ColumnText(0), row.ColumnInt(1));
  });
}

}  // namespace reel::storage
