// Merging shard databases into one: rows matched on natural keys, row ids remapped, the more
// finished copy of an item wins; duplicate-free and idempotent. Each shard in its own transaction:
// an error stops at that shard, earlier ones kept. Shards are opened read-only.
// Keys and rules: storage/README.md, "Merge".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/database.h"

namespace reel::storage {

// Rows inserted or updated in the output, summed over shards.
struct MergeStats {
  int64_t shards = 0;
  int64_t jobs = 0;
  int64_t runs = 0;
  int64_t items = 0;
  int64_t frames = 0;
  int64_t segments = 0;
  int64_t features = 0;
  int64_t contexts = 0;
  int64_t tasks = 0;
  int64_t requests = 0;
  int64_t responses = 0;
  int64_t events = 0;
  int64_t blobs = 0;
};

// Errors: kNotFound for a missing shard; kInvalidArgument if a shard is the output itself;
// kUnsupported for a shard at another schema version; storage errors otherwise, prefixed with
// the shard's path.
Result<MergeStats> Merge(const std::string& out_path, const std::vector<std::string>& shard_paths,
                         const DatabaseOptions& options = {});

}  // namespace reel::storage
