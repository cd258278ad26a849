// Random checkpoints with the released tensor names and a config.json, so the encoder can be
// run (demo, tests, benchmarks) without the real 400 GB checkpoint. The numbers mean nothing;
// their scale is chosen so activations stay in a sane range through every layer.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "vision/model_config.h"

namespace reel::vision {

// A tiny configuration of M3's shape (head size 32: 30 rotary dims + 2), for tests and demos.
VisionModelConfig TinyTestConfig();

// Writes `directory`/config.json and `directory`/model.safetensors: linear, norm and bias
// weights in BF16 and the patch embedding in F32, as the released checkpoint stores them
// (`all_f32`: everything F32). Deterministic for a `seed`. The tensors are generated and
// written one at a time (the full configuration is a 1.7 GB file, never all in memory).
Status WriteRandomCheckpoint(const std::string& directory, const VisionModelConfig& config,
                             uint64_t seed = 1, bool all_f32 = false);

}  // namespace reel::vision
