// Read-only SQL over a results database, for `reel query`: one statement, refused unless SQLite
// reports it read-only; rows, time and memory bounded. Errors: kNotFound, kInvalidArgument (bad,
// several or writing statements, too many parameters), kCorruptData, kLimitExceeded.
// The limits: storage/README.md, "Query".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"

namespace reel::storage {

struct Blob {
  std::string bytes;
  bool operator==(const Blob&) const = default;
};

// One SQL value: NULL, INTEGER, REAL, TEXT or BLOB.
using Value = std::variant<std::monostate, int64_t, double, std::string, Blob>;

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Value>> rows;
  bool truncated = false;  // more rows existed than max_rows
};

struct QueryOptions {
  size_t max_rows = 100000;
  int busy_timeout_ms = 10000;
  double timeout_s = 0;          // 0 = no time limit
  int64_t max_memory_bytes = 0;  // 0 = no memory limit
  // Values bound to the statement's parameters ?1, ?2, ... (text and blobs as they are, so no
  // caller quotes a literal by hand). Parameters left unbound are NULL, as SQLite has them.
  std::vector<Value> parameters = {};
};

Result<Table> Query(const std::string& db_path, const std::string& sql,
                    const QueryOptions& options = {});

// The tables and views a results database of this build has (the latest schema, made in memory),
// each as {"table" or "view", name}, tables first, in the order the schema creates them; SQLite's
// own and the full-text indexes' shadow tables left out. For `reel query --help`.
Result<std::vector<std::pair<std::string, std::string>>> SchemaTablesAndViews();

// A value as text for display: "NULL", integers and reals in shortest form, text as is, and
// blobs as "<blob N bytes>".
std::string FormatValue(const Value& value);

}  // namespace reel::storage
