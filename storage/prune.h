// Items whose input file is gone: finding them (the mark `reel results`, `reel show`, `reel status`
// and the report show) and dropping them with everything stored for them (`reel prune`).
//
// An item's row keeps its path as Reel stored it (DisplayPath); the file is looked for at the
// path it stands for. Dropping deletes the items (frames, segments, contexts, questions, requests,
// answers and events follow by the schema's cascades; the search index by its triggers) and then
// the stored pictures and features no remaining row names, in one transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/database.h"

namespace reel::storage {

// True when the file an item's stored path stands for does not exist (a path that cannot be
// checked, e.g. a folder without permission, counts as present).
bool InputFileGone(const std::string& stored_path);

struct GoneItem {
  int64_t id = 0;
  std::string job;
  std::string path;  // as stored
  std::string kind;
  int64_t answers = 0;  // answered questions that would be dropped with it
};

// The items of `job` (every job when unset) whose input file is gone, by job and path.
Result<std::vector<GoneItem>> ListGoneItems(Database& db, const std::optional<std::string>& job);

struct DropCounts {
  int64_t items = 0;
  int64_t answers = 0;
  int64_t blobs = 0;       // stored pictures and features no longer named by any row
  int64_t blob_bytes = 0;  // their size
};

// Deletes the items `ids` and what only they used, in one transaction. Errors: the database's.
Result<DropCounts> DropItems(Database& db, const std::vector<int64_t>& ids);

}  // namespace reel::storage
