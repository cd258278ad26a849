#include "tests/support/sqlite_rows.h"

#include <sqlite3.h>

#include <cstdint>
#include <memory>

namespace reel::testing {
namespace {

struct CloseDatabase {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct FinalizeStatement {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};

std::string Base64(const unsigned char* bytes, size_t size) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < size; i += 3) {
    uint32_t n = static_cast<uint32_t>(bytes[i]) << 16;
    if (i + 1 < size) n |= static_cast<uint32_t>(bytes[i + 1]) << 8;
    if (i + 2 < size) n |= bytes[i + 2];
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < size ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < size ? kAlphabet[n & 63] : '=';
  }
  return out;
}

}  // namespace

std::optional<nlohmann::json> SqliteRows(const std::string& db, const std::string& sql,
                                         std::string* error) {
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, CloseDatabase> connection(raw);
  if (opened != SQLITE_OK) {
    *error = db + ": " + (raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(opened));
    return std::nullopt;
  }
  sqlite3_busy_timeout(raw, 10000);
  sqlite3_stmt* prepared = nullptr;
  if (sqlite3_prepare_v2(raw, sql.c_str(), -1, &prepared, nullptr) != SQLITE_OK) {
    *error = db + ": " + sqlite3_errmsg(raw);
    return std::nullopt;
  }
  std::unique_ptr<sqlite3_stmt, FinalizeStatement> stmt(prepared);
  nlohmann::json rows = nlohmann::json::array();
  for (;;) {
    const int step = sqlite3_step(prepared);
    if (step == SQLITE_DONE) break;
    if (step != SQLITE_ROW) {
      *error = db + ": " + sqlite3_errmsg(raw);
      return std::nullopt;
    }
    nlohmann::json row = nlohmann::json::object();
    for (int c = 0; c < sqlite3_column_count(prepared); ++c) {
      nlohmann::json& value = row[sqlite3_column_name(prepared, c)];
      switch (sqlite3_column_type(prepared, c)) {
        case SQLITE_INTEGER:
          value = static_cast<int64_t>(sqlite3_column_int64(prepared, c));
          break;
        case SQLITE_FLOAT:
          value = sqlite3_column_double(prepared, c);
          break;
        case SQLITE_TEXT:
          value = std::string(reinterpret_cast<const char*>(sqlite3_column_text(prepared, c)),
                              static_cast<size_t>(sqlite3_column_bytes(prepared, c)));
          break;
        case SQLITE_BLOB:
          value = Base64(static_cast<const unsigned char*>(sqlite3_column_blob(prepared, c)),
                         static_cast<size_t>(sqlite3_column_bytes(prepared, c)));
          break;
        default:
          value = nullptr;
      }
    }
    rows.push_back(std::move(row));
  }
  try {
    (void)rows.dump();
  } catch (const nlohmann::json::type_error&) {  // invalid UTF-8 in a text value
    rows =
        nlohmann::json::parse(rows.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return rows;
}

}  // namespace reel::testing
