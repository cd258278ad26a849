#include "storage/prune.h"

#include <sys/stat.h>

#include <cerrno>

#include "base/utf8.h"
#include "storage/internal/sqlite.h"

namespace reel::storage {

using internal::Statement;
using internal::Transaction;

bool InputFileGone(const std::string& stored_path) {
  struct stat st {};
  const std::string path = UnescapeInvalidUtf8(stored_path);
  return ::stat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

Result<std::vector<GoneItem>> ListGoneItems(Database& db, const std::optional<std::string>& job) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db.handle(),
                         "SELECT i.id, j.name, i.path, i.kind, "
                         "  (SELECT count(*) FROM responses r JOIN requests q "
                         "   ON q.id = r.request_id WHERE q.item_id = i.id) "
                         "FROM items i JOIN jobs j ON j.id = i.job_id "
                         "WHERE ?1 IS NULL OR j.name = ?1 ORDER BY j.name, i.path"));
  stmt.Bind(1, job);
  std::vector<GoneItem> gone;
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    GoneItem item;
    item.path = stmt.ColumnText(2);
    if (!InputFileGone(item.path)) continue;
    item.id = stmt.ColumnInt(0);
    item.job = stmt.ColumnText(1);
    item.kind = stmt.ColumnText(3);
    item.answers = stmt.ColumnInt(4);
    gone.push_back(std::move(item));
  }
  return gone;
}

Result<DropCounts> DropItems(Database& db, const std::vector<int64_t>& ids) {
  DropCounts counts;
  REEL_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db.handle()));
  {
    REEL_ASSIGN_OR_RETURN(Statement answers,
                          Statement::Prepare(db.handle(),
                                             "SELECT count(*) FROM responses r JOIN requests q "
                                             "ON q.id = r.request_id WHERE q.item_id = ?1"));
    REEL_ASSIGN_OR_RETURN(Statement drop,
                          Statement::Prepare(db.handle(), "DELETE FROM items WHERE id = ?1"));
    for (int64_t id : ids) {
      answers.Reset();
      answers.Bind(1, id);
      REEL_ASSIGN_OR_RETURN(bool row, answers.Step());
      if (row) counts.answers += answers.ColumnInt(0);
      drop.Reset();
      drop.Bind(1, id);
      REEL_RETURN_IF_ERROR(drop.Run());
      counts.items += sqlite3_changes(db.handle());
    }
  }
  // Pictures and features are shared between items (by content): only those no row names go.
  constexpr const char* kUnused =
      "FROM blobs WHERE NOT EXISTS (SELECT 1 FROM frames WHERE thumbnail_hash = blobs.hash) "
      "AND NOT EXISTS (SELECT 1 FROM features WHERE blob_hash = blobs.hash)";
  {
    REEL_ASSIGN_OR_RETURN(
        Statement unused,
        Statement::Prepare(db.handle(),
                           std::string("SELECT count(*), coalesce(sum(size), 0) ") + kUnused));
    REEL_ASSIGN_OR_RETURN(bool row, unused.Step());
    if (row) {
      counts.blobs = unused.ColumnInt(0);
      counts.blob_bytes = unused.ColumnInt(1);
    }
  }
  REEL_RETURN_IF_ERROR(internal::Exec(db.handle(), std::string("DELETE ") + kUnused));
  REEL_RETURN_IF_ERROR(tx.Commit());
  return counts;
}

}  // namespace reel::storage
