// Database: one open connection to a Reel results file (SQLite, WAL), with the schema migrated.
// Open() creates and migrates; OpenReadOnly() migrates nothing; a schema newer than this build is
// kUnsupported. Ownership and threads: owns its connection; movable, not copyable; one per thread,
// any number on one file. Details: storage/README.md, "Database".
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
