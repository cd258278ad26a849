// The encoder's weights in memory, read out of a checkpoint by their released names
// (docs/m3-reference.md "Tensor names") and laid out for one kernel backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "vision/checkpoint.h"
#include "vision/internal/kernels.h"
#include "vision/model_config.h"

namespace reel::vision::internal {

struct LayerWeights {
  std::vector<float> norm1_weight, norm1_bias, norm2_weight, norm2_bias;
  PackedWeights qkv;  // q, k and v projections stacked: [3 * hidden, hidden]
  std::vector<float> qkv_bias;
  PackedWeights out;
  std::vector<float> out_bias;
  PackedWeights fc1;
  std::vector<float> fc1_bias;
  PackedWeights fc2;
  std::vector<float> fc2_bias;
};

struct ModelWeights {
  PackedWeights patch;  // [hidden, patch_values], always f32 (the released checkpoint's own)
  std::vector<float> pre_norm_weight, pre_norm_bias;
  std::vector<LayerWeights> layers;
  bool has_projector = false;
  PackedWeights projector1, projector2, merge1, merge2;
  std::vector<float> projector1_bias, projector2_bias, merge1_bias, merge2_bias;  // empty: none
  uint64_t bytes = 0;                                                             // memory held
  uint64_t fingerprint = 0;  // hash of the tower's tensors: names, dtypes, shapes and bytes
};

// Loads every tensor of the tower (and of the projector when `projector`), checking each one's
// dtype (F32, F16, BF16) and shape against `config`; linear weights are held as `type`.
// Errors name the checkpoint and the tensor: kNotFound (missing), kCorruptData (mis-shaped,
// not a float tensor), and the checkpoint's own.
Result<ModelWeights> LoadModelWeights(Checkpoint& checkpoint, const VisionModelConfig& config,
                                      const Kernels& kernels, WeightType type, bool projector);

// The names the released checkpoint uses.
std::string TowerPrefix();  // "vision_tower.vision_model."
std::string LayerPrefix(int layer);

}  // namespace reel::vision::internal
