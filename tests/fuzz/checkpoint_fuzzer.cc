// model.safetensors.index.json (vision/checkpoint.h, Checkpoint::Open and Find): the index of a
// downloaded checkpoint comes from outside. The bytes are written as the index of a scratch
// directory holding one small valid shard ("a.safetensors" with tensor "t"); the checkpoint is
// opened and a few names looked up. Invariants: a shard name never leaves the directory; a
// refusal names the index file.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/fuzz/fuzz_support.h"
#include "vision/checkpoint.h"
#include "vision/safetensors.h"

using reel::fuzz::Require;

namespace {

const std::string& Dir() {
  static const std::string dir = [] {
    const std::string d = reel::fuzz::ScratchDir() + "/checkpoint";
    std::filesystem::create_directories(d);
    const uint8_t one[4] = {0, 0, 0x80, 0x3f};
    Require(reel::vision::WriteSafetensors(d + "/a.safetensors",
                                           {{"t", reel::vision::DType::kF32, {1}, one}})
                .ok(),
            "the scratch shard is written");
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = Dir();
  reel::fuzz::WriteScratchFile("checkpoint/model.safetensors.index.json",
                               std::string_view(reinterpret_cast<const char*>(data), size));
  auto checkpoint = reel::vision::Checkpoint::Open(dir);
  if (!checkpoint.ok()) {
    Require(checkpoint.status().message().find("model.safetensors.index.json") != std::string::npos,
            "a refusal names the index", checkpoint.status().message());
    return 0;
  }
  for (const char* name : {"t", "a", "", "vision_tower.vision_model.pre_layrnorm.weight"}) {
    auto t = checkpoint->Find(name);
    if (t.ok()) {
      Require(t->file->path().find("/../") == std::string::npos, "a shard stays in the directory",
              t->file->path());
    }
  }
  for (const std::string& shard : checkpoint->OpenedShards()) {
    Require(shard.find('/') == std::string::npos, "a shard name has no directory", shard);
  }
  return 0;
}
