#include "storage/internal/sqlite.h"

#include <cctype>
#include <cerrno>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "base/utf8.h"

namespace reel::storage::internal {

Status SqliteStatus(int rc, sqlite3* db, std::string_view context) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return Status::Ok();
  std::string message(context);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  // A full disk: the message names the file and says so plainly (SQLite says "database or disk
  // is full"; a write error whose errno is ENOSPC or EDQUOT is the same thing).
  const int system_error = db != nullptr ? sqlite3_system_errno(db) : 0;
  if ((rc & 0xff) == SQLITE_FULL ||
      ((rc & 0xff) == SQLITE_IOERR && (system_error == ENOSPC || system_error == EDQUOT))) {
    const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
    return DiskFull((file != nullptr && *file != '\0' ? std::string(file) + ": " : std::string()) +
                    "disk full: " + message);
  }
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Unavailable(std::move(message));
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
      return InvalidArgument(std::move(message));
    case SQLITE_TOOBIG:
      return LimitExceeded(std::move(message));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return CorruptData(std::move(message));
    case SQLITE_CANTOPEN:
      return NotFound(std::move(message));
    case SQLITE_READONLY:
    case SQLITE_AUTH:
    case SQLITE_PERM:
      return InvalidArgument(std::move(message));
    case SQLITE_ERROR:  // SQL error or missing database: usually the caller's SQL
      return InvalidArgument(std::move(message));
    default:
      return IoError(std::move(message));
  }
}

Status Exec(sqlite3* db, std::string_view sql) {
  std::string copy(sql);
  int rc = sqlite3_exec(db, copy.c_str(), nullptr, nullptr, nullptr);
  return SqliteStatus(rc, db, "sqlite");
}

namespace {

// True if `tail` holds only whitespace, semicolons and SQL comments.
bool OnlyTrivia(std::string_view tail) {
  size_t i = 0;
  while (i < tail.size()) {
    char c = tail[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ';') {
      ++i;
    } else if (tail.substr(i, 2) == "--") {
      size_t end = tail.find('\n', i);
      i = end == std::string_view::npos ? tail.size() : end + 1;
    } else if (tail.substr(i, 2) == "/*") {
      size_t end = tail.find("*/", i + 2);
      i = end == std::string_view::npos ? tail.size() : end + 2;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

namespace {

// Idle prepared statements by connection and SQL text.
struct StatementCache {
  std::mutex mutex;
  std::map<std::pair<sqlite3*, std::string>, std::vector<sqlite3_stmt*>, std::less<>> idle;
};

StatementCache& Cache() {
  static StatementCache* cache = new StatementCache;  // never destroyed: used until exit
  return *cache;
}

constexpr size_t kIdlePerKey = 4;

}  // namespace

void CloseConnection(sqlite3* db) {
  {
    StatementCache& cache = Cache();
    std::lock_guard lock(cache.mutex);
    for (auto it = cache.idle.begin(); it != cache.idle.end();) {
      if (it->first.first == db) {
        for (sqlite3_stmt* stmt : it->second) sqlite3_finalize(stmt);
        it = cache.idle.erase(it);
      } else {
        ++it;
      }
    }
  }
  sqlite3_close_v2(db);
}

void Statement::Release() {
  if (!stmt_) return;
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  StatementCache& cache = Cache();
  std::lock_guard lock(cache.mutex);
  std::vector<sqlite3_stmt*>& idle = cache.idle[{db_, sql_}];
  if (idle.size() < kIdlePerKey) idle.push_back(stmt_.release());
  stmt_.reset();
}

Result<Statement> Statement::Prepare(sqlite3* db, std::string_view sql) {
  {
    StatementCache& cache = Cache();
    std::lock_guard lock(cache.mutex);
    auto it = cache.idle.find(std::make_pair(db, std::string(sql)));
    if (it != cache.idle.end() && !it->second.empty()) {
      UniqueStatement stmt(it->second.back());
      it->second.pop_back();
      return Statement(db, std::string(sql), std::move(stmt));
    }
  }
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &raw, &tail);
  UniqueStatement stmt(raw);
  if (rc != SQLITE_OK) return SqliteStatus(rc, db, "prepare");
  if (stmt == nullptr) return InvalidArgument("prepare: empty SQL statement");
  std::string_view rest = sql.substr(static_cast<size_t>(tail - sql.data()));
  if (!OnlyTrivia(rest)) {
    return InvalidArgument("prepare: only one SQL statement is allowed; extra text: " +
                           std::string(rest.substr(0, 60)));
  }
  return Statement(db, std::string(sql), std::move(stmt));
}

void Statement::NoteBindError(int rc, int index, std::optional<size_t> bytes) {
  if (rc == SQLITE_OK || bind_error_ != SQLITE_OK) return;
  bind_error_ = rc;
  bind_error_detail_ = "parameter " + std::to_string(index);
  if (bytes) {
    bind_error_detail_ += " (" + std::to_string(*bytes) + " bytes";
    if ((rc & 0xff) == SQLITE_TOOBIG) {
      bind_error_detail_ += "; the limit is " +
                            std::to_string(sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, -1)) + " bytes";
    }
    bind_error_detail_ += ")";
  }
}

Statement& Statement::BindNull(int index) {
  NoteBindError(sqlite3_bind_null(stmt_.get(), index), index);
  return *this;
}
Statement& Statement::Bind(int index, int64_t value) {
  NoteBindError(sqlite3_bind_int64(stmt_.get(), index, value), index);
  return *this;
}
Statement& Statement::Bind(int index, double value) {
  NoteBindError(sqlite3_bind_double(stmt_.get(), index, value), index);
  return *this;
}
Statement& Statement::Bind(int index, std::string_view text) {
  if (!IsValidUtf8(text)) {
    // The database's last line of defence: TEXT is always valid UTF-8 (SQLite would store the
    // bytes as they are, and every reader that decodes them would fail).
    const std::string safe = SafeUtf8(text);
    NoteBindError(sqlite3_bind_text64(stmt_.get(), index, safe.data(), safe.size(),
                                      SQLITE_TRANSIENT, SQLITE_UTF8),
                  index, safe.size());
    return *this;
  }
  NoteBindError(sqlite3_bind_text64(stmt_.get(), index, text.data(), text.size(), SQLITE_TRANSIENT,
                                    SQLITE_UTF8),
                index, text.size());
  return *this;
}
Statement& Statement::BindBlob(int index, std::string_view bytes) {
  // A zero-length blob with a null pointer would bind NULL; give it a valid pointer.
  static const char kEmpty = 0;
  NoteBindError(sqlite3_bind_blob64(stmt_.get(), index, bytes.empty() ? &kEmpty : bytes.data(),
                                    bytes.size(), SQLITE_STATIC),
                index, bytes.size());
  return *this;
}

Result<bool> Statement::Step() {
  if (bind_error_ != SQLITE_OK) {
    // sqlite3_errmsg() would say "not an error" by now (see NoteBindError): use the code's text.
    return SqliteStatus(bind_error_, nullptr, "bind " + bind_error_detail_);
  }
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(rc, db_, "step");
}

Status Statement::Run() {
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_error_ = SQLITE_OK;
  bind_error_detail_.clear();
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_.get()); }
std::string Statement::ColumnName(int col) const {
  const char* name = sqlite3_column_name(stmt_.get(), col);
  return name != nullptr ? name : "";
}
bool Statement::IsNull(int col) const {
  return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL;
}
int Statement::ColumnType(int col) const { return sqlite3_column_type(stmt_.get(), col); }
int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_.get(), col); }
std::string Statement::ColumnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), col);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), col)));
}
std::string Statement::ColumnBlob(int col) const {
  const void* data = sqlite3_column_blob(stmt_.get(), col);
  if (data == nullptr) return "";
  return std::string(static_cast<const char*>(data),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), col)));
}
std::optional<int64_t> Statement::ColumnOptionalInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return ColumnInt(col);
}
std::optional<double> Statement::ColumnOptionalDouble(int col) const {
  if (IsNull(col)) return std::nullopt;
  return ColumnDouble(col);
}
std::optional<std::string> Statement::ColumnOptionalText(int col) const {
  if (IsNull(col)) return std::nullopt;
  return ColumnText(col);
}
bool Statement::ReadOnly() const { return sqlite3_stmt_readonly(stmt_.get()) != 0; }

Result<int64_t> QueryInt(sqlite3* db, std::string_view sql) {
  REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db, sql));
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return NotFound("no row for: " + std::string(sql));
  return stmt.ColumnInt(0);
}

Result<std::string> QueryText(sqlite3* db, std::string_view sql) {
  REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db, sql));
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return NotFound("no row for: " + std::string(sql));
  return stmt.ColumnText(0);
}

Result<Transaction> Transaction::Begin(sqlite3* db) {
  int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(rc, db, "begin transaction");
  return Transaction(db);
}

Transaction::~Transaction() {
  if (db_ != nullptr) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

Status Transaction::Commit() {
  if (db_ == nullptr) return Internal("commit: transaction already finished");
  int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(rc, db_, "commit");  // destructor rolls back
  db_ = nullptr;
  return Status::Ok();
}

}  // namespace reel::storage::internal
