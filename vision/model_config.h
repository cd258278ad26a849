// The architecture of an M3-family vision encoder, read from the checkpoint's `config.json`
// (`vision_config` plus the projector's sizes at the top level). Every field defaults to
// MiniMax-M3's value (docs/m3-reference.md "The vision encoder"), so a config that leaves a key out
// gets M3's number, and a smaller model of the same family loads from its own config.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace reel::vision {

enum class Activation {
  kGeluErf,   // "gelu": 0.5 x (1 + erf(x / sqrt 2)), what M3 uses
  kGeluTanh,  // "gelu_pytorch_tanh", "gelu_new", "gelu_fast": the tanh approximation
};

struct VisionModelConfig {
  // The ViT (`vision_config`).
  int hidden_size = 1280;
  int intermediate_size = 5120;
  int num_layers = 32;  // num_hidden_layers
  int num_heads = 16;   // num_attention_heads
  int num_channels = 3;
  int patch_size = 14;
  int temporal_patch_size = 2;  // img_token_compression_config.temporal_patch_size
  int spatial_merge_size = 2;   // img_token_compression_config.spatial_merge_size
  double layer_norm_eps = 1e-5;
  double rope_theta = 10000;
  int segment_max_pairs = 4;  // vision_segment_max_frames (temporal patches per attention segment)
  Activation hidden_act = Activation::kGeluErf;

  // The projector (top level): per patch hidden -> projector_hidden -> text_hidden; then the
  // patch-merge MLP: merge^2 * text_hidden -> projector_hidden -> text_hidden.
  int projector_hidden_size = 6144;
  int text_hidden_size = 6144;  // text_config.hidden_size
  Activation projector_act = Activation::kGeluErf;
  bool projector_bias = true;    // multimodal_projector_bias
  bool patch_merge_bias = true;  // patch_merge_bias

  int head_dim() const { return hidden_size / num_heads; }
  // Rotary dims per axis (time, row, column): 2 * floor(floor(2 * floor(head_dim / 2) / 3) / 2);
  // 26 for M3's 80. The rotated dims are the first 3 * rope_axis_dims(); the rest pass through.
  int rope_axis_dims() const { return 2 * ((2 * (head_dim() / 2) / 3) / 2); }
  int rope_half() const { return 3 * rope_axis_dims() / 2; }  // 39 for M3: dim i pairs with i+39
  int patch_values() const {                                  // 1176 for M3
    return num_channels * temporal_patch_size * patch_size * patch_size;
  }
  int merge_window() const { return spatial_merge_size * spatial_merge_size; }
  // Pixels per side of one output token (28 for M3).
  int pixel_factor() const { return patch_size * spatial_merge_size; }

  // Checks the numbers are positive, consistent (heads divide the width, rotary dims exist) and
  // within sane bounds. `name` starts the messages.
  Status Validate(const std::string& name) const;
};

// Parses a `config.json`. Keys are read where M3's config and the transformers port put them
// (e.g. `vision_config.img_token_compression_config.spatial_merge_size`, else
// `vision_config.spatial_merge_size`; `vision_config.rope_theta`, else
// `vision_config.rope_parameters.rope_theta`); absent keys keep M3's values. `name` (the file)
// starts error messages. Errors: kCorruptData for malformed JSON or a value of the wrong type,
// kUnsupported for an activation Reel does not implement, kInvalidArgument for inconsistent
// sizes.
Result<VisionModelConfig> ParseVisionConfig(std::string_view json_text, const std::string& name);

// Reads `<directory>/config.json`; M3's defaults when the file does not exist.
Result<VisionModelConfig> LoadVisionConfig(const std::string& directory);

// The config written by `reel make-test-weights` and read back by ParseVisionConfig.
std::string VisionConfigJson(const VisionModelConfig& config);

}  // namespace reel::vision
