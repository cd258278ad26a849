#include "storage/query.h"

#include <charconv>

#include "storage/database.h"
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

}  // namespace

Result<Table> Query(const std::string& db_path, const std::string& sql,
                    const QueryOptions& options) {
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
  Table table;
  for (int c = 0; c < stmt.ColumnCount(); ++c) table.columns.push_back(stmt.ColumnName(c));
  while (true) {
    auto row = stmt.Step();
    if (!row.ok()) return row.status().WithPrefix("query");
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

}  // namespace reel::storage
