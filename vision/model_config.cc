#include "vision/model_config.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/file_util.h"

namespace reel::vision {
namespace {

using Json = nlohmann::json;

constexpr uint64_t kMaxConfigBytes = 16ull << 20;

// Reads an integer field if present. `path` is the key's dotted path for messages.
Status ReadInt(const Json& object, const char* key, const std::string& path,
               const std::string& name, int* out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_number_integer() || it->get<int64_t>() < INT32_MIN ||
      it->get<int64_t>() > INT32_MAX) {
    return CorruptData(name + ": " + path + " must be an integer, got " + it->dump());
  }
  *out = static_cast<int>(it->get<int64_t>());
  return Status::Ok();
}

Status ReadDouble(const Json& object, const char* key, const std::string& path,
                  const std::string& name, double* out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_number()) {
    return CorruptData(name + ": " + path + " must be a number, got " + it->dump());
  }
  *out = it->get<double>();
  return Status::Ok();
}

Status ReadBool(const Json& object, const char* key, const std::string& path,
                const std::string& name, bool* out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_boolean()) {
    return CorruptData(name + ": " + path + " must be true or false, got " + it->dump());
  }
  *out = it->get<bool>();
  return Status::Ok();
}

Status ReadActivation(const Json& object, const char* key, const std::string& path,
                      const std::string& name, Activation* out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return CorruptData(name + ": " + path + " must be a string");
  std::string value = it->get<std::string>();
  if (value == "gelu") {
    *out = Activation::kGeluErf;
  } else if (value == "gelu_pytorch_tanh" || value == "gelu_new" || value == "gelu_fast") {
    *out = Activation::kGeluTanh;
  } else {
    return Unsupported(name + ": " + path + " '" + value +
                       "' is not supported (gelu, gelu_pytorch_tanh, gelu_new, gelu_fast)");
  }
  return Status::Ok();
}

// An optional nested object; null when absent. kCorruptData when present but not an object.
Result<const Json*> Child(const Json& object, const char* key, const std::string& path,
                          const std::string& name) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return static_cast<const Json*>(nullptr);
  if (!it->is_object()) return CorruptData(name + ": " + path + " must be an object");
  return &*it;
}

}  // namespace

Status VisionModelConfig::Validate(const std::string& name) const {
  auto bad = [&](const std::string& what) { return InvalidArgument(name + ": " + what); };
  struct Bound {
    const char* key;
    int value;
    int max;
  };
  const Bound bounds[] = {
      {"vision_config.hidden_size", hidden_size, 1 << 16},
      {"vision_config.intermediate_size", intermediate_size, 1 << 18},
      {"vision_config.num_hidden_layers", num_layers, 1024},
      {"vision_config.num_attention_heads", num_heads, 1024},
      {"vision_config.num_channels", num_channels, 16},
      {"vision_config.patch_size", patch_size, 1024},
      {"temporal_patch_size", temporal_patch_size, 64},
      {"spatial_merge_size", spatial_merge_size, 64},
      {"vision_config.vision_segment_max_frames", segment_max_pairs, 1 << 20},
      {"projector_hidden_size", projector_hidden_size, 1 << 18},
      {"text_config.hidden_size", text_hidden_size, 1 << 18},
  };
  for (const Bound& b : bounds) {
    if (b.value < 1 || b.value > b.max) {
      return bad(std::string(b.key) + " is " + std::to_string(b.value) + ", must be 1 to " +
                 std::to_string(b.max));
    }
  }
  if (hidden_size % num_heads != 0) {
    return bad("vision_config.hidden_size " + std::to_string(hidden_size) +
               " is not a multiple of num_attention_heads " + std::to_string(num_heads));
  }
  if (rope_axis_dims() < 2) {
    return bad("head size " + std::to_string(head_dim()) +
               " leaves no rotary dimensions (needs at least 6)");
  }
  if (!(layer_norm_eps > 0) || !(rope_theta > 1)) {
    return bad("layer_norm_eps must be > 0 and rope_theta > 1");
  }
  return Status::Ok();
}

Result<VisionModelConfig> ParseVisionConfig(std::string_view json_text, const std::string& name) {
  Json root = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return CorruptData(name + ": not valid JSON");
  if (!root.is_object()) return CorruptData(name + ": not a JSON object");
  VisionModelConfig c;
  REEL_ASSIGN_OR_RETURN(const Json* vision, Child(root, "vision_config", "vision_config", name));
  static const Json kEmpty = Json::object();
  const Json& v = vision != nullptr ? *vision : kEmpty;
  const std::string vp = "vision_config.";
  REEL_RETURN_IF_ERROR(ReadInt(v, "hidden_size", vp + "hidden_size", name, &c.hidden_size));
  REEL_RETURN_IF_ERROR(
      ReadInt(v, "intermediate_size", vp + "intermediate_size", name, &c.intermediate_size));
  REEL_RETURN_IF_ERROR(
      ReadInt(v, "num_hidden_layers", vp + "num_hidden_layers", name, &c.num_layers));
  REEL_RETURN_IF_ERROR(
      ReadInt(v, "num_attention_heads", vp + "num_attention_heads", name, &c.num_heads));
  REEL_RETURN_IF_ERROR(ReadInt(v, "num_channels", vp + "num_channels", name, &c.num_channels));
  REEL_RETURN_IF_ERROR(ReadInt(v, "patch_size", vp + "patch_size", name, &c.patch_size));
  REEL_RETURN_IF_ERROR(
      ReadDouble(v, "layer_norm_eps", vp + "layer_norm_eps", name, &c.layer_norm_eps));
  REEL_RETURN_IF_ERROR(ReadDouble(v, "rope_theta", vp + "rope_theta", name, &c.rope_theta));
  REEL_ASSIGN_OR_RETURN(const Json* rope,
                        Child(v, "rope_parameters", vp + "rope_parameters", name));
  if (rope != nullptr && !v.contains("rope_theta")) {
    REEL_RETURN_IF_ERROR(
        ReadDouble(*rope, "rope_theta", vp + "rope_parameters.rope_theta", name, &c.rope_theta));
  }
  REEL_RETURN_IF_ERROR(ReadInt(v, "vision_segment_max_frames", vp + "vision_segment_max_frames",
                               name, &c.segment_max_pairs));
  REEL_RETURN_IF_ERROR(ReadActivation(v, "hidden_act", vp + "hidden_act", name, &c.hidden_act));

  // Token compression: the top level first, then vision_config's own keys, then its
  // img_token_compression_config (the released checkpoint's place), the last found winning.
  for (const Json* where : {static_cast<const Json*>(&root), &v}) {
    const std::string prefix = where == &root ? "" : vp;
    REEL_RETURN_IF_ERROR(ReadInt(*where, "spatial_merge_size", prefix + "spatial_merge_size", name,
                                 &c.spatial_merge_size));
    REEL_RETURN_IF_ERROR(ReadInt(*where, "temporal_patch_size", prefix + "temporal_patch_size",
                                 name, &c.temporal_patch_size));
    REEL_ASSIGN_OR_RETURN(const Json* compression,
                          Child(*where, "img_token_compression_config",
                                prefix + "img_token_compression_config", name));
    if (compression != nullptr) {
      const std::string cp = prefix + "img_token_compression_config.";
      REEL_RETURN_IF_ERROR(ReadInt(*compression, "spatial_merge_size", cp + "spatial_merge_size",
                                   name, &c.spatial_merge_size));
      REEL_RETURN_IF_ERROR(ReadInt(*compression, "temporal_patch_size", cp + "temporal_patch_size",
                                   name, &c.temporal_patch_size));
    }
  }

  REEL_ASSIGN_OR_RETURN(const Json* text, Child(root, "text_config", "text_config", name));
  if (text != nullptr) {
    REEL_RETURN_IF_ERROR(
        ReadInt(*text, "hidden_size", "text_config.hidden_size", name, &c.text_hidden_size));
  }
  // vLLM: the projector's middle width is projector_hidden_size, else the text width.
  bool has_projector_size =
      root.contains("projector_hidden_size") && !root["projector_hidden_size"].is_null();
  REEL_RETURN_IF_ERROR(ReadInt(root, "projector_hidden_size", "projector_hidden_size", name,
                               &c.projector_hidden_size));
  if (!has_projector_size) c.projector_hidden_size = c.text_hidden_size;
  REEL_RETURN_IF_ERROR(
      ReadActivation(root, "projector_hidden_act", "projector_hidden_act", name, &c.projector_act));
  REEL_RETURN_IF_ERROR(ReadBool(root, "multimodal_projector_bias", "multimodal_projector_bias",
                                name, &c.projector_bias));
  REEL_RETURN_IF_ERROR(
      ReadBool(root, "patch_merge_bias", "patch_merge_bias", name, &c.patch_merge_bias));
  REEL_RETURN_IF_ERROR(c.Validate(name));
  return c;
}

Result<VisionModelConfig> LoadVisionConfig(const std::string& directory) {
  std::string path = (std::filesystem::path(directory) / "config.json").string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return VisionModelConfig();
  REEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path, kMaxConfigBytes));
  return ParseVisionConfig(text, path);
}

std::string VisionConfigJson(const VisionModelConfig& c) {
  auto act = [](Activation a) { return a == Activation::kGeluErf ? "gelu" : "gelu_pytorch_tanh"; };
  Json root = {
      {"model_type", "minimax_m3_vl"},
      {"projector_hidden_size", c.projector_hidden_size},
      {"projector_hidden_act", act(c.projector_act)},
      {"multimodal_projector_bias", c.projector_bias},
      {"patch_merge_bias", c.patch_merge_bias},
      {"text_config", {{"hidden_size", c.text_hidden_size}}},
      {"vision_config",
       {{"model_type", "clip_vision_model"},
        {"hidden_size", c.hidden_size},
        {"intermediate_size", c.intermediate_size},
        {"num_hidden_layers", c.num_layers},
        {"num_attention_heads", c.num_heads},
        {"num_channels", c.num_channels},
        {"patch_size", c.patch_size},
        {"layer_norm_eps", c.layer_norm_eps},
        {"rope_theta", c.rope_theta},
        {"hidden_act", act(c.hidden_act)},
        {"vision_segment_max_frames", c.segment_max_pairs},
        {"img_token_compression_config",
         {{"spatial_merge_size", c.spatial_merge_size},
          {"temporal_patch_size", c.temporal_patch_size}}}}},
  };
  return root.dump(2) + "\n";
}

}  // namespace reel::vision
