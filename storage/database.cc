#include "storage/database.h"

#include "storage/internal/rows.h"
#include "storage/internal/schema.h"
#include "storage/internal/sqlite.h"

namespace reel::storage {

using internal::Exec;
using internal::QueryInt;
using internal::QueryText;
using internal::SqliteStatus;
using internal::Statement;
using internal::Transaction;

void Database::Closer::operator()(sqlite3* db) const { internal::CloseConnection(db); }

Database::Database(std::string path, std::unique_ptr<sqlite3, Closer> db, bool read_only)
    : path_(std::move(path)), db_(std::move(db)), read_only_(read_only) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

namespace {

// Opens the connection with extended result codes and the busy timeout set.
Result<std::unique_ptr<sqlite3, internal::ConnectionCloser>> OpenConnection(const std::string& path,
                                                                            int flags,
                                                                            int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  internal::UniqueConnection db(raw);  // owns the handle even when open failed
  if (rc != SQLITE_OK) return SqliteStatus(rc, db.get(), path);
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), busy_timeout_ms);
  return db;
}

// A file written by a newer reel: its tables may mean something this build does not know.
Status CheckNotNewer(int64_t version, const std::string& path) {
  const int latest = internal::LatestSchemaVersion();
  if (version <= latest) return Status::Ok();
  return Unsupported(path + ": schema version " + std::to_string(version) +
                     " is newer than this build of reel understands (" + std::to_string(latest) +
                     "); upgrade reel to read it");
}

Status Migrate(sqlite3* db, const std::string& path) {
  REEL_ASSIGN_OR_RETURN(int64_t version, QueryInt(db, "PRAGMA user_version"));
  REEL_RETURN_IF_ERROR(CheckNotNewer(version, path));
  for (const internal::Migration& step : internal::Migrations()) {
    if (step.version <= version) continue;
    REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
    // Another process may have migrated while we waited for the write lock.
    REEL_ASSIGN_OR_RETURN(int64_t current, QueryInt(db, "PRAGMA user_version"));
    if (current >= step.version) {
      version = current;
      continue;  // txn rolls back (nothing to undo)
    }
    Status s = Exec(db, step.sql);
    if (!s.ok()) {
      return s.WithPrefix(path + ": migration " + std::to_string(step.version) + " (" +
                          step.description + ")");
    }
    REEL_RETURN_IF_ERROR(Exec(db, "PRAGMA user_version = " + std::to_string(step.version)));
    REEL_RETURN_IF_ERROR(txn.Commit());
    version = step.version;
  }
  return Status::Ok();
}

}  // namespace

Result<Database> Database::Open(const std::string& path, const DatabaseOptions& options) {
  int flags = SQLITE_OPEN_READWRITE | (options.create_if_missing ? SQLITE_OPEN_CREATE : 0);
  auto conn = OpenConnection(path, flags, options.busy_timeout_ms);
  if (!conn.ok()) return conn.status();
  sqlite3* db = conn->get();
  // Fail early, with the file name, if this is not a database at all.
  Result<int64_t> probe = QueryInt(db, "PRAGMA user_version");
  if (!probe.ok()) return probe.status().WithPrefix(path);
  REEL_ASSIGN_OR_RETURN(std::string mode, QueryText(db, "PRAGMA journal_mode = WAL"));
  if (mode != "wal" && mode != "memory") {
    return IoError(path + ": could not switch to WAL journal mode (got '" + mode + "')");
  }
  // NORMAL is durable across application crashes in WAL mode; only a power loss may drop the
  // last transactions, never corrupt the file.
  REEL_RETURN_IF_ERROR(Exec(db, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;"));
  REEL_RETURN_IF_ERROR(Migrate(db, path));
  return Database(path, std::unique_ptr<sqlite3, Closer>(conn->release()), false);
}

Result<Database> Database::OpenReadOnly(const std::string& path, int busy_timeout_ms) {
  auto conn = OpenConnection(path, SQLITE_OPEN_READONLY, busy_timeout_ms);
  if (!conn.ok()) return conn.status();
  sqlite3* db = conn->get();
  Result<int64_t> version = QueryInt(db, "PRAGMA user_version");
  if (!version.ok()) return version.status().WithPrefix(path);
  REEL_RETURN_IF_ERROR(CheckNotNewer(*version, path));
  if (*version == 0) {
    // Migrations commit the tables together with the version, so 0 means no tables of ours:
    // an empty file, another program's database, or a run creating this one at this moment.
    return NotFound(path +
                    ": not a Reel results database yet (no tables: the file is empty, belongs to "
                    "another program, or a run is creating it right now; try again once the run "
                    "has started)");
  }
  REEL_RETURN_IF_ERROR(Exec(db, "PRAGMA query_only = ON; PRAGMA foreign_keys = ON;"));
  return Database(path, std::unique_ptr<sqlite3, Closer>(conn->release()), true);
}

Result<int> Database::SchemaVersion() const {
  REEL_ASSIGN_OR_RETURN(int64_t version, QueryInt(handle(), "PRAGMA user_version"));
  return static_cast<int>(version);
}

int Database::LatestSchemaVersion() { return internal::LatestSchemaVersion(); }

Status Database::Execute(std::string_view sql) { return Exec(handle(), sql); }

Status Database::CheckIntegrity() {
  std::string problems;
  {
    REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(handle(), "PRAGMA integrity_check"));
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      std::string line = row.ColumnText(0);
      if (line != "ok") problems += line + "; ";
    }));
  }
  {
    REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(handle(), "PRAGMA foreign_key_check"));
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& violation) {
      problems += "foreign key violation in " + violation.ColumnText(0) + " row " +
                  std::to_string(violation.ColumnInt(1)) + " -> " + violation.ColumnText(2) + "; ";
    }));
  }
  if (!problems.empty()) return CorruptData(path_ + ": " + problems);
  return Status::Ok();
}

}  // namespace reel::storage
