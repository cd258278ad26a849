#include "vision/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/file_util.h"

namespace reel::vision {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxIndexBytes = 64ull << 20;
constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A shard name from an index must stay inside the checkpoint's directory.
bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name.size() < 1024 && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name != "." && name != ".." &&
         name.find('\0') == std::string::npos;
}

}  // namespace

Result<Checkpoint> Checkpoint::Open(const std::string& path, const SafetensorsLimits& limits) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return NotFound(path + ": no such file or directory");

  Checkpoint checkpoint;
  checkpoint.limits_ = limits;
  std::string index_path;
  std::vector<std::string> single_files;
  if (fs::is_directory(status)) {
    checkpoint.directory_ = path;
    if (fs::exists(fs::path(path) / kIndexName, ec)) {
      index_path = (fs::path(path) / kIndexName).string();
    } else if (fs::exists(fs::path(path) / kSingleName, ec)) {
      single_files.push_back(kSingleName);
    } else {
      for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) {
        std::string name = entry.path().filename().string();
        if (EndsWith(name, ".safetensors") && entry.is_regular_file(ec)) {
          single_files.push_back(name);
        }
      }
      std::sort(single_files.begin(), single_files.end());
      if (single_files.empty()) {
        return NotFound(path + ": no " + kIndexName + " and no .safetensors file in it");
      }
    }
  } else {
    checkpoint.directory_ = fs::path(path).parent_path().string();
    if (checkpoint.directory_.empty()) checkpoint.directory_ = ".";
    if (EndsWith(path, ".json")) {
      index_path = path;
    } else {
      single_files.push_back(fs::path(path).filename().string());
    }
  }

  if (!index_path.empty()) {
    checkpoint.description_ = index_path;
    REEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(index_path, kMaxIndexBytes));
    nlohmann::json index = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (index.is_discarded() || !index.is_object()) {
      return CorruptData(index_path + ": not a JSON object");
    }
    auto it = index.find("weight_map");
    if (it == index.end() || !it->is_object()) {
      return CorruptData(index_path + ": no \"weight_map\" object");
    }
    for (auto& [name, shard] : it->items()) {
      if (!shard.is_string()) {
        return CorruptData(index_path + ": weight_map entry '" + name + "' is not a file name");
      }
      std::string shard_name = shard.get<std::string>();
      if (!IsPlainFileName(shard_name)) {
        return CorruptData(index_path + ": weight_map entry '" + name + "' names '" + shard_name +
                           "', which is not a file beside the index");
      }
      checkpoint.weight_map_[name] = std::move(shard_name);
    }
    return checkpoint;
  }

  // No index: every tensor of the given file(s), read from their headers.
  checkpoint.description_ = single_files.size() == 1
                                ? (fs::path(checkpoint.directory_) / single_files[0]).string()
                                : checkpoint.directory_;
  for (const std::string& file : single_files) {
    REEL_ASSIGN_OR_RETURN(const SafetensorsFile* shard, checkpoint.Shard(file));
    for (const TensorInfo& t : shard->tensors()) {
      auto [pos, inserted] = checkpoint.weight_map_.emplace(t.name, file);
      if (!inserted) {
        return CorruptData(checkpoint.directory_ + ": tensor '" + t.name + "' is in both " +
                           pos->second + " and " + file);
      }
    }
  }
  return checkpoint;
}

std::vector<std::string> Checkpoint::OpenedShards() const {
  std::vector<std::string> names;
  for (const auto& [name, file] : shards_) names.push_back(name);
  return names;
}

Result<const SafetensorsFile*> Checkpoint::Shard(const std::string& file_name) {
  auto it = shards_.find(file_name);
  if (it != shards_.end()) return it->second.get();
  std::string path = (fs::path(directory_) / file_name).string();
  REEL_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::Open(path, limits_));
  auto owned = std::make_unique<SafetensorsFile>(std::move(file));
  const SafetensorsFile* raw = owned.get();
  shards_.emplace(file_name, std::move(owned));
  return raw;
}

Result<TensorRef> Checkpoint::Find(const std::string& name) {
  auto it = weight_map_.find(name);
  if (it == weight_map_.end()) {
    return NotFound(description_ + ": no tensor '" + name + "' in the checkpoint");
  }
  REEL_ASSIGN_OR_RETURN(const SafetensorsFile* shard, Shard(it->second));
  const TensorInfo* info = shard->Find(name);
  if (info == nullptr) {
    return CorruptData(description_ + ": the index puts tensor '" + name + "' in " + it->second +
                       ", which does not hold it");
  }
  return TensorRef{info, shard->Bytes(*info), shard};
}

std::string CheckpointIdentity(const std::string& path) {
  std::error_code ec;
  fs::path dir = fs::is_directory(path, ec) ? fs::path(path) : fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "config.json" || EndsWith(name, ".safetensors") ||
        EndsWith(name, ".safetensors.index.json")) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  std::string identity;
  for (const std::string& name : names) {
    const fs::path file = dir / name;
    const auto size = fs::file_size(file, ec);
    if (ec) continue;
    const auto time = fs::last_write_time(file, ec);
    if (ec) continue;
    identity += name + " " + std::to_string(size) + " " +
                std::to_string(time.time_since_epoch().count()) + "\n";
  }
  return identity;
}

}  // namespace reel::vision
