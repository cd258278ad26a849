#include "jobs/run/shard.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>

namespace reel::jobs {
namespace {

std::optional<int64_t> ParseNonNegative(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

uint64_t Fnv1a64(std::string_view text) {
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

Result<ShardSpec> Checked(int64_t index, int64_t count, const std::string& source) {
  if (count < 1 || count > 1000000) {
    return InvalidArgument(source + ": the shard count must be between 1 and 1000000, got " +
                           std::to_string(count));
  }
  if (index < 0 || index >= count) {
    return InvalidArgument(source + ": the shard index must be in [0, " + std::to_string(count) +
                           "), got " + std::to_string(index));
  }
  return ShardSpec{static_cast<int>(index), static_cast<int>(count)};
}

}  // namespace

std::string ShardSpec::ToString() const {
  return std::to_string(index) + "/" + std::to_string(count);
}

Result<ShardSpec> ParseShard(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return InvalidArgument("--shard: expected I/N (e.g. 0/4), got '" + std::string(text) + "'");
  }
  std::optional<int64_t> index = ParseNonNegative(text.substr(0, slash));
  std::optional<int64_t> count = ParseNonNegative(text.substr(slash + 1));
  if (!index || !count) {
    return InvalidArgument("--shard: expected I/N with whole numbers (e.g. 0/4), got '" +
                           std::string(text) + "'");
  }
  return Checked(*index, *count, "--shard " + std::string(text));
}

Result<ShardSpec> ResolveShard(
    const std::optional<std::string>& shard_flag, const std::optional<int>& count_flag,
    const std::function<std::optional<std::string>(const std::string&)>& lookup_env) {
  auto env = lookup_env ? lookup_env : ProcessEnv;
  if (shard_flag) return ParseShard(*shard_flag);
  auto number = [&](const std::string& name) -> Result<std::optional<int64_t>> {
    std::optional<std::string> text = env(name);
    if (!text) return std::optional<int64_t>();
    std::optional<int64_t> value = ParseNonNegative(*text);
    if (!value) return InvalidArgument(name + ": expected a whole number, got '" + *text + "'");
    return value;
  };
  REEL_ASSIGN_OR_RETURN(std::optional<int64_t> slurm_id, number("SLURM_ARRAY_TASK_ID"));
  if (slurm_id) {
    REEL_ASSIGN_OR_RETURN(std::optional<int64_t> slurm_count, number("SLURM_ARRAY_TASK_COUNT"));
    REEL_ASSIGN_OR_RETURN(std::optional<int64_t> slurm_min, number("SLURM_ARRAY_TASK_MIN"));
    std::optional<int64_t> count = count_flag ? std::optional<int64_t>(*count_flag) : slurm_count;
    if (!count) {
      return InvalidArgument(
          "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not: pass --shards N");
    }
    return Checked(*slurm_id - slurm_min.value_or(0), *count, "SLURM_ARRAY_TASK_ID");
  }
  REEL_ASSIGN_OR_RETURN(std::optional<int64_t> k8s_index, number("JOB_COMPLETION_INDEX"));
  if (k8s_index) {
    std::optional<int64_t> count;
    if (count_flag) {
      count = *count_flag;
    } else {
      REEL_ASSIGN_OR_RETURN(count, number("REEL_SHARD_COUNT"));
    }
    if (!count) {
      return InvalidArgument(
          "JOB_COMPLETION_INDEX is set but the shard count is unknown: pass --shards N or set "
          "REEL_SHARD_COUNT (the Job's completions)");
    }
    return Checked(*k8s_index, *count, "JOB_COMPLETION_INDEX");
  }
  if (count_flag && *count_flag != 1) {
    return InvalidArgument(
        "--shards N needs an index: --shard I/N, SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX");
  }
  return ShardSpec{};
}

bool InShard(const ShardSpec& shard, const std::string& base_dir, const std::string& path) {
  if (!shard.sharded()) return true;
  std::string key = path;
  if (!base_dir.empty()) {
    std::filesystem::path relative =
        std::filesystem::path(path).lexically_relative(std::filesystem::path(base_dir));
    if (!relative.empty() && *relative.begin() != "..") key = relative.generic_string();
  }
  return Fnv1a64(key) % static_cast<uint64_t>(shard.count) == static_cast<uint64_t>(shard.index);
}

std::string ShardDatabasePath(const std::string& database, const ShardSpec& shard) {
  if (!shard.sharded()) return database;
  std::filesystem::path path(database);
  std::string name = path.stem().string() + ".shard-" + std::to_string(shard.index) + "-of-" +
                     std::to_string(shard.count) + path.extension().string();
  return (path.parent_path() / name).string();
}

}  // namespace reel::jobs
