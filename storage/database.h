// Database: one open connection to a Reel results file (SQLite), with the schema migrated.
//
// Open() creates the file if needed, switches it to WAL (readers never block the writer and one
// writer at a time waits for another up to `busy_timeout_ms`), enables foreign keys, and applies
// every pending migration from storage/internal/schema.cc, each in its own transaction that also
// bumps `PRAGMA user_version`. Opening is idempotent and safe when several processes open the
// same new file at once. A file whose user_version is newer than this build knows is refused
// (kUnsupported) rather than guessed at.
//
// OpenReadOnly() opens with SQLITE_OPEN_READONLY and `PRAGMA query_only` and migrates nothing. It
// fails with kNotFound, naming the file, if the file does not exist or has no Reel schema yet
// (user_version 0: empty, another program's, or being created by a run right now), and with
// kUnsupported if its schema is newer than this build knows (as Open does).
//
// Ownership and threads: a Database owns its connection and closes it on destruction; it is
// movable, not copyable. Use one Database per thread (SQLite connections are not meant to be
// shared); several Database objects, in one process or many, may use the same file at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

struct sqlite3;  // opaque here: sqlite3.h is included only by storage/internal/sqlite.h

namespace reel::storage {

struct DatabaseOptions {
  // How long a writer waits for another connection's write lock before giving up (kUnavailable).
  int busy_timeout_ms = 10000;
  // If false, a missing file is kNotFound instead of being created.
  bool create_if_missing = true;
};

class Database {
 public:
  static Result<Database> Open(const std::string& path, const DatabaseOptions& options = {});
  static Result<Database> OpenReadOnly(const std::string& path, int busy_timeout_ms = 10000);

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }

  // The file's `PRAGMA user_version` (0 for an empty file).
  Result<int> SchemaVersion() const;
  // The version Open() migrates to.
  static int LatestSchemaVersion();

  // Runs one or more SQL statements, discarding any rows. For maintenance and tests; the typed
  // operations live in Store.
  Status Execute(std::string_view sql);

  // `PRAGMA integrity_check` and `PRAGMA foreign_key_check`: OK, or kCorruptData listing problems.
  Status CheckIntegrity();

  // The raw connection, for storage/ internals only. Never null for a live object.
  sqlite3* handle() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  Database(std::string path, std::unique_ptr<sqlite3, Closer> db, bool read_only);

  std::string path_;
  std::unique_ptr<sqlite3, Closer> db_;
  bool read_only_ = false;
};

}  // namespace reel::storage
