// A results database read with SQLite itself, for tests: cheaper than a `reel query` process for
// each look (tests poll databases while runs write them), and a reader independent of Reel's own.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace reel::testing {

// The rows of `sql` on the database file `db`, opened read-only (waiting up to 10 s on a lock),
// as `reel query --format json` gives them: an array of objects {column: value}, integers and
// reals as numbers, text as strings (invalid UTF-8 replaced), NULL as null, blobs as base64.
// nullopt, with `error` set, when the file cannot be opened or the statement fails.
std::optional<nlohmann::json> SqliteRows(const std::string& db, const std::string& sql,
                                         std::string* error);

}  // namespace reel::testing
