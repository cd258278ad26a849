// libFuzzer target for config.json (vision/model_config.*): a checkpoint's config comes from
// outside. Checks: no crash; an accepted config passes its own validation (positive sizes, heads
// dividing the width, rotary dims present), so the encoder never sees impossible shapes.
//
//   cmake -S . -B build-fuzz -G Ninja -DREEL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
//     -DCMAKE_C_COMPILER=clang && cmake --build build-fuzz --target model_config_fuzz
//   build-fuzz/tests/model_config_fuzz -max_total_time=300 -max_len=4096
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vision/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = reel::vision::ParseVisionConfig(text, "config.json");
  if (!config.ok()) return 0;
  if (!config->Validate("config.json").ok()) std::abort();
  if (config->head_dim() * config->num_heads != config->hidden_size) std::abort();
  if (config->rope_half() * 2 > config->head_dim()) std::abort();
  return 0;
}
