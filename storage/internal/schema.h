// The database schema as an ordered list of migrations. Migration i (1-based) takes a database
// from `PRAGMA user_version` i-1 to i; each is applied in its own transaction together with the
// user_version bump, so a database is always at exactly one version. Never edit a released
// migration: append a new one (and document it in docs/database.md).
#pragma once

#include <span>

namespace reel::storage::internal {

struct Migration {
  int version;              // the user_version after this step
  const char* description;  // one line, for logs
  const char* sql;          // one or more statements
};

std::span<const Migration> Migrations();

// The user_version a fully migrated database has.
int LatestSchemaVersion();

// The SQL expression Reel uses for "now": ISO-8601 UTC with milliseconds, e.g.
// 2024-05-01T12:00:00.123Z. Text so that sqlite3 and Datasette show it readably; it sorts in time
// order.
inline constexpr const char* kNowSql = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

}  // namespace reel::storage::internal
