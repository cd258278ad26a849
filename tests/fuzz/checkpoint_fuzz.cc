// libFuzzer target for model.safetensors.index.json (vision/checkpoint.*): the index of a
// downloaded checkpoint comes from outside. The bytes are written as the index of a scratch
// directory holding one small valid shard ("a.safetensors" with tensor "t"); the checkpoint is
// opened and a few names looked up. Checks: no crash; a shard name never leaves the directory.
//
//   cmake -S . -B build-fuzz -G Ninja -DREEL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
//     -DCMAKE_C_COMPILER=clang && cmake --build build-fuzz --target checkpoint_fuzz
//   build-fuzz/tests/checkpoint_fuzz -max_total_time=300 -max_len=4096
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "vision/checkpoint.h"

namespace {

const std::string& Dir() {
  static const std::string dir = [] {
    std::string d = std::filesystem::temp_directory_path().string() + "/reel-checkpoint-fuzz-" +
                    std::to_string(getpid());
    std::filesystem::create_directories(d);
    const uint8_t one[4] = {0, 0, 0x80, 0x3f};
    if (!reel::vision::WriteSafetensors(d + "/a.safetensors",
                                        {{"t", reel::vision::DType::kF32, {1}, one}})
             .ok()) {
      std::abort();
    }
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string index = Dir() + "/model.safetensors.index.json";
  {
    std::ofstream out(index, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto checkpoint = reel::vision::Checkpoint::Open(Dir());
  if (!checkpoint.ok()) return 0;
  for (const char* name : {"t", "a", "", "vision_tower.vision_model.pre_layrnorm.weight"}) {
    auto t = checkpoint->Find(name);
    if (t.ok() && t->file->path().find("/../") != std::string::npos) std::abort();
  }
  for (const std::string& shard : checkpoint->OpenedShards()) {
    if (shard.find('/') != std::string::npos) std::abort();
  }
  return 0;
}
