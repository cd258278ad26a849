// A model checkpoint on disk: one safetensors file, or shards listed in
// `model.safetensors.index.json`. Tensors are found by name and only the shards that hold a
// requested tensor are opened (memory-mapped; only the requested bytes are read), so the vision
// tower can be read out of a full 400 GB checkpoint without touching the rest.
//
// Not thread-safe: load from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "vision/safetensors.h"

namespace reel::vision {

// Where one tensor's bytes are. Valid while its Checkpoint lives.
struct TensorRef {
  const TensorInfo* info = nullptr;
  std::span<const uint8_t> bytes;
  const SafetensorsFile* file = nullptr;
};

class Checkpoint {
 public:
  // `path` is a directory (holding `model.safetensors.index.json`, else `model.safetensors`,
  // else every `*.safetensors` in it), an index `.json` file, or one `.safetensors` file.
  // Shard names in an index must be plain file names beside it (no `/`, no `..`).
  // Errors: kNotFound (nothing to read there), kCorruptData (a malformed index or header),
  // kLimitExceeded (an index or header past its size cap), kIoError.
  static Result<Checkpoint> Open(const std::string& path, const SafetensorsLimits& limits = {});

  Checkpoint(Checkpoint&&) = default;
  Checkpoint& operator=(Checkpoint&&) = default;

  // The directory of the checkpoint (where `config.json` is looked for).
  const std::string& directory() const { return directory_; }

  bool Contains(std::string_view name) const { return weight_map_.count(std::string(name)) > 0; }
  size_t tensor_count() const { return weight_map_.size(); }
  // Shards opened so far (for tests: loading the vision tower opens only its shards).
  std::vector<std::string> OpenedShards() const;

  // The tensor named `name`, opening its shard on first use. Errors: kNotFound naming the
  // tensor (and the checkpoint) when it is absent; kCorruptData when the index names a shard
  // that does not hold it; the shard's own header errors.
  Result<TensorRef> Find(const std::string& name);

  // Unmaps every opened shard (tensors already copied out stay valid in their copies).
  void CloseShards() { shards_.clear(); }

 private:
  Checkpoint() = default;
  Result<const SafetensorsFile*> Shard(const std::string& file_name);

  std::string directory_;
  std::string description_;                        // for messages: the index or the file
  std::map<std::string, std::string> weight_map_;  // tensor name -> shard file name
  std::map<std::string, std::unique_ptr<SafetensorsFile>> shards_;
  SafetensorsLimits limits_;
};

// A cheap identity of the checkpoint at `path` for deciding whether work is up to date: the
// names, sizes and modification times of its config.json, index and .safetensors files (no
// content is read). "" when nothing is there.
std::string CheckpointIdentity(const std::string& path);

}  // namespace reel::vision
