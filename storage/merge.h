// Merging shard databases into one.
//
// `reel run --shard i/n` writes one database per shard; Merge() folds them into `out_path`
// (created and migrated if missing). Rows are matched on natural keys, never on row ids, which
// differ between files: jobs by name, runs / requests / events by their random uid, items by
// (job name, path), frames by (item, sample index), segments by (item, source, start, text hash),
// contexts by (item, prompt, context hash), tasks by custom_id, blobs by hash. Row ids are remapped
// on the way in.
//
// When both sides hold the same item, the more finished one wins: a 'done' item beats any other
// status, and otherwise the later updated_at wins; on a tie the output is kept. A winning item
// replaces the output's frames and segments (and their features) with its own; a losing item
// with the same content and settings hashes only fills in rows the output lacks. Requests,
// responses, contexts and events are history and are all kept (deduplicated by key).
//
// So merging is duplicate-free and idempotent: merging the same shard twice changes nothing the
// second time. Each shard is merged in its own transaction; an error stops at that shard, with
// the earlier shards merged and the failing one untouched. Shards are opened read-only (an
// SQLite URI with mode=ro) and must be at the same schema version as this build.
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
