// Sharding: splitting one job's inputs over N independent runs (a Slurm array, a Kubernetes
// Indexed Job, several machines), each writing its own database, merged afterwards with
// `reel merge`.
//
// An input belongs to shard I of N when FNV-1a-64(its path relative to the job's base
// directory) mod N == I. Hashing the relative path (not the position in the sorted list) keeps
// the split stable when files are added, and the same on every machine that sees the same tree
// at a different absolute location. Pure functions; no I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace reel::jobs {

struct ShardSpec {
  int index = 0;  // 0-based
  int count = 1;  // 1: not sharded
  bool sharded() const { return count > 1; }
  std::string ToString() const;  // "I/N"
};

// "I/N" with 0 <= I < N. Errors: kInvalidArgument with the reason.
Result<ShardSpec> ParseShard(std::string_view text);

// The shard to run, from the first source that gives one:
//   1. `--shard I/N` (`shard_flag`);
//   2. Slurm: SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN (0 if unset), of
//      SLURM_ARRAY_TASK_COUNT;
//   3. Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX, of `--shards N` (`count_flag`) or else
//      REEL_SHARD_COUNT.
// None: not sharded (0/1). `lookup_env` returns nullopt for an unset variable (default: the
// process environment). Errors: kInvalidArgument naming the variable or option that is wrong
// (including an index without a count).
Result<ShardSpec> ResolveShard(
    const std::optional<std::string>& shard_flag, const std::optional<int>& count_flag,
    const std::function<std::optional<std::string>(const std::string&)>& lookup_env = {});

// True if `path` (relative to `base_dir` when under it) belongs to `shard`.
bool InShard(const ShardSpec& shard, const std::string& base_dir, const std::string& path);

// `dir/stem.shard-I-of-N.ext` for `dir/stem.ext` (the database a shard writes by default);
// `database` itself when not sharded.
std::string ShardDatabasePath(const std::string& database, const ShardSpec& shard);

}  // namespace reel::jobs
