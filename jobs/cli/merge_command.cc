// reel merge OUT.db SHARD.db...
#include <cstdio>

#include "jobs/cli/commands.h"
#include "jobs/run_lock.h"
#include "storage/merge.h"

namespace reel::cli {
namespace {

struct MergeFlags {
  std::string out;
  std::vector<std::string> shards;
};

int RunMerge(const MergeFlags& flags) {
  // The output must not be written by a run at the same time: take its run lock.
  Result<jobs::RunLock> lock = jobs::RunLock::TryAcquire(flags.out);
  if (!lock.ok()) {
    std::fprintf(stderr, "reel merge: %s\n", lock.status().message().c_str());
    return lock.status().code() == ErrorCode::kUnavailable ? kExitLocked : kExitFailed;
  }
  Result<storage::MergeStats> stats = storage::Merge(flags.out, flags.shards);
  if (!stats.ok()) {
    std::fprintf(stderr, "reel merge: %s\n", stats.status().message().c_str());
    return stats.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  const storage::MergeStats& s = *stats;
  std::fprintf(stderr,
               "reel merge: %lld shards into %s: %lld jobs, %lld runs, %lld items, %lld frames, "
               "%lld segments, %lld blobs, %lld tasks, %lld requests, %lld responses, %lld events "
               "added or "
               "updated\n",
               static_cast<long long>(s.shards), flags.out.c_str(), static_cast<long long>(s.jobs),
               static_cast<long long>(s.runs), static_cast<long long>(s.items),
               static_cast<long long>(s.frames), static_cast<long long>(s.segments),
               static_cast<long long>(s.blobs), static_cast<long long>(s.tasks),
               static_cast<long long>(s.requests), static_cast<long long>(s.responses),
               static_cast<long long>(s.events));
  return kExitOk;
}

}  // namespace

void AddMergeCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<MergeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge shard databases (from reel run --shard) into one, without duplicates");
  cmd->footer(
      "Rows are matched by natural keys (jobs by name, items by job and path, runs by uid);\n"
      "merging the same shard twice changes nothing. Shards are opened read-only; OUT is\n"
      "created if missing, and locked like `reel run` does (<OUT>.lock).\n"
      "Exit status: 0 merged, 1 a shard could not be merged (earlier ones are), 2 bad usage,\n"
      "4 a run holds OUT.");
  cmd->add_option("OUT", flags->out, "Database to merge into (created if missing)")->required();
  cmd->add_option("SHARD", flags->shards, "Shard databases")->required();
  cmd->callback([flags, &exit_code] { exit_code = RunMerge(*flags); });
}

}  // namespace reel::cli
