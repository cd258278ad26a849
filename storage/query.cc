#include "storage/query.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <type_traits>
#include <variant>

#include "storage/database.h"
#include "storage/internal/rows.h"
#include "storage/internal/sqlite.h"

namespace reel::storage {
namespace {

int DenyGuardPragmas(void*, int action, const char* arg1, const char* arg2, const char*,
                     const char*) {
  if (action != SQLITE_PRAGMA || arg2 == nullptr || arg1 == nullptr) return SQLITE_OK;
  std::string_view pragma(arg1);
  if (pragma == "query_only" || pragma == "writable_schema" || pragma == "journal_mode") {
    return SQLITE_DENY;
  }
  return SQLITE_OK;
}

// What the progress handler watches; it stops the statement (SQLITE_INTERRUPT) past a limit.
struct Watch {
  std::chrono::steady_clock::time_point deadline;
  bool has_deadline = false;
  bool timed_out = false;
};

int OnProgress(void* arg) {
  Watch& watch = *static_cast<Watch*>(arg);
  if (watch.has_deadline && std::chrono::steady_clock::now() >= watch.deadline) {
    watch.timed_out = true;
    return 1;
  }
  return 0;
}

// SQLite's process-wide hard heap limit for one scope; the previous one comes back after.
class HeapLimit {
 public:
  explicit HeapLimit(int64_t extra_bytes) {
    if (extra_bytes <= 0) return;
    previous_ = sqlite3_hard_heap_limit64(-1);
    int64_t limit = sqlite3_memory_used() + extra_bytes;
    if (previous_ > 0) limit = std::min(limit, previous_);
    sqlite3_hard_heap_limit64(limit);
    active_ = true;
  }
  ~HeapLimit() {
    if (active_) sqlite3_hard_heap_limit64(previous_);
  }
  HeapLimit(const HeapLimit&) = delete;
  HeapLimit& operator=(const HeapLimit&) = delete;

 private:
  int64_t previous_ = 0;
  bool active_ = false;
};

size_t ValueBytes(const Value& value) {
  size_t bytes = sizeof(Value);
  if (const auto* s = std::get_if<std::string>(&value)) bytes += s->size();
  if (const auto* b = std::get_if<Blob>(&value)) bytes += b->bytes.size();
  return bytes;
}

std::string Seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", s);
  return buffer;
}

}  // namespace

Result<Table> Query(const std::string& db_path, const std::string& sql,
                    const QueryOptions& options) {
  Watch watch;  // before the connection, which holds a pointer to it until it closes
  REEL_ASSIGN_OR_RETURN(Database db, Database::OpenReadOnly(db_path, options.busy_timeout_ms));
  // No ATTACH: a read-only connection could still attach (and so create) another file.
  sqlite3_limit(db.handle(), SQLITE_LIMIT_ATTACHED, 0);
  // The connection cannot write anyway (SQLITE_OPEN_READONLY); this also keeps it from
  // switching off its own guards, so the refusal reads clearly.
  sqlite3_set_authorizer(db.handle(), &DenyGuardPragmas, nullptr);
  auto prepared = internal::Statement::Prepare(db.handle(), sql);
  if (!prepared.ok()) return prepared.status().WithPrefix("query");
  internal::Statement& stmt = *prepared;
  if (!stmt.ReadOnly()) {
    return InvalidArgument(
        "query: only read-only statements (SELECT, read-only PRAGMA, "
        "EXPLAIN) are allowed on " +
        db_path);
  }
  if (static_cast<int>(options.parameters.size()) > stmt.ParameterCount()) {
    return InvalidArgument("query: " + std::to_string(options.parameters.size()) +
                           " values for a statement with " + std::to_string(stmt.ParameterCount()) +
                           " parameters");
  }
  for (size_t i = 0; i < options.parameters.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::monostate>) {
            stmt.BindNull(index);
          } else if constexpr (std::is_same_v<V, Blob>) {
            stmt.BindBlob(index, v.bytes);
          } else {
            stmt.Bind(index, v);
          }
        },
        options.parameters[i]);
  }
  if (options.timeout_s > 0) {
    watch.has_deadline = true;
    watch.deadline = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(options.timeout_s));
  }
  sqlite3_progress_handler(db.handle(), 4096, &OnProgress, &watch);
  HeapLimit heap_limit(options.max_memory_bytes);
  const std::string memory_limit =
      "query: stopped: it needs more than " + std::to_string(options.max_memory_bytes) +
      " bytes of memory (the memory limit; raise it with --max-memory, 0 for none)";
  Table table;
  size_t table_bytes = 0;
  for (int c = 0; c < stmt.ColumnCount(); ++c) table.columns.push_back(stmt.ColumnName(c));
  while (true) {
    auto row = stmt.Step();
    if (!row.ok()) {
      if (watch.timed_out) {
        return LimitExceeded("query: stopped after " + Seconds(options.timeout_s) +
                             " s (the time limit; raise it with --timeout, 0 for none)");
      }
      if (options.max_memory_bytes > 0 && sqlite3_errcode(db.handle()) == SQLITE_NOMEM) {
        return LimitExceeded(memory_limit);
      }
      return row.status().WithPrefix("query");
    }
    if (!*row) break;
    if (table.rows.size() >= options.max_rows) {
      table.truncated = true;
      break;
    }
    std::vector<Value> values;
    values.reserve(table.columns.size());
    for (int c = 0; c < stmt.ColumnCount(); ++c) {
      switch (stmt.ColumnType(c)) {
        case SQLITE_INTEGER:
          values.emplace_back(stmt.ColumnInt(c));
          break;
        case SQLITE_FLOAT:
          values.emplace_back(stmt.ColumnDouble(c));
          break;
        case SQLITE_TEXT:
          values.emplace_back(stmt.ColumnText(c));
          break;
        case SQLITE_BLOB:
          values.emplace_back(Blob{stmt.ColumnBlob(c)});
          break;
        default:
          values.emplace_back(std::monostate());
      }
    }
    for (const Value& v : values) table_bytes += ValueBytes(v);
    if (options.max_memory_bytes > 0 &&
        table_bytes > static_cast<uint64_t>(options.max_memory_bytes)) {
      return LimitExceeded(memory_limit);
    }
    table.rows.push_back(std::move(values));
  }
  return table;
}

std::string FormatValue(const Value& value) {
  if (std::holds_alternative<std::monostate>(value)) return "NULL";
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), *d);
    return std::string(buffer, end);
  }
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return "<blob " + std::to_string(std::get<Blob>(value).bytes.size()) + " bytes>";
}

Result<std::vector<std::pair<std::string, std::string>>> SchemaTablesAndViews() {
  REEL_ASSIGN_OR_RETURN(Database db, Database::Open(":memory:"));
  // Shadow tables of an FTS5 table are named after it (responses_fts_data, ...).
  REEL_ASSIGN_OR_RETURN(
      internal::Statement stmt,
      internal::Statement::Prepare(
          db.handle(),
          "SELECT type, name FROM sqlite_schema s WHERE type IN ('table', 'view') "
          "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND NOT EXISTS (SELECT 1 FROM "
          "sqlite_schema v WHERE v.type = 'table' AND v.sql LIKE 'CREATE VIRTUAL TABLE%' "
          "AND s.name LIKE v.name || '\\_%' ESCAPE '\\') "
          "ORDER BY type = 'view', rowid"));
  std::vector<std::pair<std::string, std::string>> names;
  REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const internal::Statement& row) {
    names.emplace_back(row.ColumnText(0), row.ColumnText(1));
  }));
  return names;
}

}  // namespace reel::storage
