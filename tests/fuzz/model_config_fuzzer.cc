// A checkpoint's config.json (vision/model_config.h, ParseVisionConfig): it comes from outside.
// Invariants: an accepted config passes its own validation (positive sizes, heads dividing the
// width, rotary dims inside a head), so the encoder never sees impossible shapes; a refusal names
// the file.
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_support.h"
#include "vision/model_config.h"

using reel::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = reel::vision::ParseVisionConfig(text, "config.json");
  if (!config.ok()) {
    Require(config.status().message().find("config.json") != std::string::npos,
            "a refusal names the file", config.status().message());
    return 0;
  }
  Require(config->Validate("config.json").ok(), "an accepted config validates");
  Require(config->head_dim() * config->num_heads == config->hidden_size, "heads divide the width");
  Require(config->rope_half() * 2 <= config->head_dim(), "rotary dims fit in a head");
  return 0;
}
