// The one place Reel includes sqlite3.h: RAII owners for SQLite handles, a Statement with typed
// Bind/Column, a Transaction that rolls back unless committed. Private to storage/. Errors are
// values ("<what we were doing>: <sqlite message>"). Not thread-safe: one thread per object.
// How SQLite's codes map to ours: storage/README.md, "SQLite wrappers".
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace reel::storage::internal {

// Finalizes the connection's cached statements (see Statement), then closes it.
void CloseConnection(sqlite3* db);

struct ConnectionCloser {
  void operator()(sqlite3* db) const { CloseConnection(db); }
};
struct StatementFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using UniqueConnection = std::unique_ptr<sqlite3, ConnectionCloser>;
using UniqueStatement = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// Maps a SQLite result code to a Status (OK for SQLITE_OK/ROW/DONE). The message is
// "context: sqlite3_errmsg(db)" when `db` is given, else "context: sqlite3_errstr(rc)".
Status SqliteStatus(int rc, sqlite3* db, std::string_view context);

// Runs one or more statements that return no rows we need (DDL, pragmas that set).
Status Exec(sqlite3* db, std::string_view sql);

// A prepared statement. Bind indexes are 1-based, Column indexes 0-based (as in SQLite).
//
// Preparing costs more than running most of Reel's statements, so a statement is not finalized
// when its Statement dies: it is reset, its bindings cleared, and it waits in a per-connection
// cache for the next Prepare of the same SQL text on the same connection. CloseConnection
// finalizes what waits. The cache is process-wide and locked; a statement is only ever handed to
// one Statement at a time.
class Statement {
 public:
  // Prepares exactly one statement; trailing text other than whitespace, ';' and comments is
  // rejected with kInvalidArgument.
  static Result<Statement> Prepare(sqlite3* db, std::string_view sql);

  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&& other) noexcept {
    if (this != &other) {
      Release();
      db_ = other.db_;
      sql_ = std::move(other.sql_);
      stmt_ = std::move(other.stmt_);
      bind_error_ = other.bind_error_;
      bind_error_detail_ = std::move(other.bind_error_detail_);
    }
    return *this;
  }
  ~Statement() { Release(); }

  // Binding. Null optionals bind NULL. BindBlob copies nothing: `bytes` must outlive Step().
  // Text is always stored as valid UTF-8: text that is not is bound as SafeUtf8(text)
  // (base/utf8.h: bad bytes as `\xHH`), so nothing outside text carries can corrupt a TEXT
  // column. Callers that need a reversible key (item paths) pass DisplayPath(path) themselves.
  Statement& BindNull(int index);
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);
  Statement& Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Statement& Bind(int index, const std::string& text) {
    return Bind(index, std::string_view(text));
  }
  Statement& BindBlob(int index, std::string_view bytes);
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value ? Bind(index, *value) : BindNull(index);
  }

  // Advances: true when a row is ready, false when done. The first binding error (if any) is
  // reported here.
  Result<bool> Step();
  // Steps to completion, expecting no rows of interest.
  Status Run();
  // Resets for re-execution and clears bindings.
  void Reset();

  int ColumnCount() const;
  std::string ColumnName(int col) const;
  bool IsNull(int col) const;
  // The SQLite storage class: SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL.
  int ColumnType(int col) const;
  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;  // "" for NULL
  std::string ColumnBlob(int col) const;  // bytes; "" for NULL
  std::optional<int64_t> ColumnOptionalInt(int col) const;
  std::optional<double> ColumnOptionalDouble(int col) const;
  std::optional<std::string> ColumnOptionalText(int col) const;

  // True if the statement cannot modify the database (sqlite3_stmt_readonly).
  bool ReadOnly() const;
  int ParameterCount() const;  // the highest parameter index (?N) in the statement
  sqlite3_stmt* get() const { return stmt_.get(); }

 private:
  Statement(sqlite3* db, std::string sql, UniqueStatement stmt)
      : db_(db), sql_(std::move(sql)), stmt_(std::move(stmt)) {}
  // Keeps the first failed binding: its code and what failed ("parameter 3 (2000000000 bytes)").
  // SQLite's own message is gone by Step(): every later bind call resets it to "not an error".
  void NoteBindError(int rc, int index, std::optional<size_t> bytes = std::nullopt);
  // Hands the statement back to the cache.
  void Release();

  sqlite3* db_ = nullptr;
  std::string sql_;
  UniqueStatement stmt_;
  int bind_error_ = SQLITE_OK;
  std::string bind_error_detail_;
};

// Prepares, binds nothing, and returns the first column of the first row as an integer
// (e.g. PRAGMA user_version). kNotFound when there is no row.
Result<int64_t> QueryInt(sqlite3* db, std::string_view sql);
Result<std::string> QueryText(sqlite3* db, std::string_view sql);

// A write transaction. Begin() issues BEGIN IMMEDIATE, so the write lock is taken (waiting up to
// the busy timeout) before any read: a deferred transaction that reads and then writes can fail
// with SQLITE_BUSY without waiting. The destructor rolls back unless Commit() succeeded.
class Transaction {
 public:
  static Result<Transaction> Begin(sqlite3* db);

  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  Status Commit();

 private:
  explicit Transaction(sqlite3* db) : db_(db) {}
  sqlite3* db_;  // not owned; null once committed or rolled back
};

}  // namespace reel::storage::internal
