#include "vision/test_weights.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/file_util.h"
#include "vision/internal/kernels.h"
#include "vision/internal/model_weights.h"

namespace reel::vision {
namespace {

struct Spec {
  std::string name;
  std::vector<int64_t> shape;
  bool f32;
  float mean;  // 1 for norm weights
  float std;
};

std::vector<Spec> Specs(const VisionModelConfig& c, bool all_f32) {
  const int64_t d = c.hidden_size, f = c.intermediate_size;
  const int64_t ph = c.projector_hidden_size, th = c.text_hidden_size;
  const int64_t merged = th * c.merge_window();
  auto linear = [](int64_t in) { return static_cast<float>(1.0 / std::sqrt(in)); };
  const std::string t = internal::TowerPrefix();
  std::vector<Spec> s;
  s.push_back({t + "embeddings.patch_embedding.weight",
               {d, c.num_channels, c.temporal_patch_size, c.patch_size, c.patch_size},
               true,
               0,
               linear(c.patch_values())});
  s.push_back({t + "pre_layrnorm.weight", {d}, all_f32, 1, 0.1f});
  s.push_back({t + "pre_layrnorm.bias", {d}, all_f32, 0, 0.1f});
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = internal::LayerPrefix(i);
    for (const char* norm : {"layer_norm1", "layer_norm2"}) {
      s.push_back({p + norm + ".weight", {d}, all_f32, 1, 0.1f});
      s.push_back({p + norm + ".bias", {d}, all_f32, 0, 0.1f});
    }
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      s.push_back({p + "self_attn." + proj + ".weight", {d, d}, all_f32, 0, linear(d)});
      s.push_back({p + "self_attn." + proj + ".bias", {d}, all_f32, 0, 0.1f});
    }
    s.push_back({p + "mlp.fc1.weight", {f, d}, all_f32, 0, linear(d)});
    s.push_back({p + "mlp.fc1.bias", {f}, all_f32, 0, 0.1f});
    s.push_back({p + "mlp.fc2.weight", {d, f}, all_f32, 0, linear(f)});
    s.push_back({p + "mlp.fc2.bias", {d}, all_f32, 0, 0.1f});
  }
  s.push_back({"multi_modal_projector.linear_1.weight", {ph, d}, all_f32, 0, linear(d)});
  s.push_back({"multi_modal_projector.linear_1.bias", {ph}, all_f32, 0, 0.1f});
  s.push_back({"multi_modal_projector.linear_2.weight", {th, ph}, all_f32, 0, linear(ph)});
  s.push_back({"multi_modal_projector.linear_2.bias", {th}, all_f32, 0, 0.1f});
  s.push_back({"patch_merge_mlp.linear_1.weight", {ph, merged}, all_f32, 0, linear(merged)});
  s.push_back({"patch_merge_mlp.linear_1.bias", {ph}, all_f32, 0, 0.1f});
  s.push_back({"patch_merge_mlp.linear_2.weight", {th, ph}, all_f32, 0, linear(ph)});
  s.push_back({"patch_merge_mlp.linear_2.bias", {th}, all_f32, 0, 0.1f});
  return s;
}

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

VisionModelConfig TinyTestConfig() {
  VisionModelConfig c;
  c.hidden_size = 64;
  c.num_heads = 2;
  c.num_layers = 2;
  c.intermediate_size = 128;
  c.projector_hidden_size = 80;
  c.text_hidden_size = 48;
  return c;
}

Status WriteRandomCheckpoint(const std::string& directory, const VisionModelConfig& config,
                             uint64_t seed, bool all_f32) {
  REEL_RETURN_IF_ERROR(config.Validate(directory + "/config.json"));
  REEL_RETURN_IF_ERROR(MakeDirectories(directory));
  const std::vector<Spec> specs = Specs(config, all_f32);
  nlohmann::json header = {{"__metadata__", {{"format", "pt"}, {"generator", "reel"}}}};
  uint64_t offset = 0;
  for (const Spec& s : specs) {
    uint64_t elements = 1;
    for (int64_t d : s.shape) elements *= static_cast<uint64_t>(d);
    const uint64_t bytes = elements * (s.f32 ? 4 : 2);
    header[s.name] = {{"dtype", s.f32 ? "F32" : "BF16"},
                      {"shape", s.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');

  const std::string path = directory + "/model.safetensors";
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::unique_ptr<std::FILE, FileCloser> out(std::fopen(tmp.c_str(), "wb"));
    if (!out) return IoError(tmp + ": cannot create: " + std::strerror(errno));
    uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>((text.size() >> (8 * i)) & 0xff);
    bool ok = std::fwrite(length, 1, 8, out.get()) == 8 &&
              std::fwrite(text.data(), 1, text.size(), out.get()) == text.size();
    std::vector<uint8_t> buffer;
    for (size_t t = 0; ok && t < specs.size(); ++t) {
      const Spec& s = specs[t];
      uint64_t elements = 1;
      for (int64_t d : s.shape) elements *= static_cast<uint64_t>(d);
      uint64_t state = seed * 0x2545f4914f6cdd1dull + t;
      // Triangular noise (sum of two uniforms) scaled to the wanted std: cheap and bounded.
      const float scale = s.std * std::sqrt(6.0f) / 4294967296.0f;
      const size_t chunk = 1 << 20;
      for (uint64_t done = 0; ok && done < elements; done += chunk) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, elements - done));
        buffer.resize(n * (s.f32 ? 4 : 2));
        for (size_t i = 0; i < n; ++i) {
          const uint64_t r = SplitMix(state);
          const float u = static_cast<float>(static_cast<double>(r & 0xffffffffu) +
                                             static_cast<double>(r >> 32)) -
                          4294967295.0f;
          const float v = s.mean + u * scale;
          if (s.f32) {
            std::memcpy(buffer.data() + 4 * i, &v, 4);
          } else {
            const uint16_t b = internal::FloatToBf16(v);
            std::memcpy(buffer.data() + 2 * i, &b, 2);
          }
        }
        ok = std::fwrite(buffer.data(), 1, buffer.size(), out.get()) == buffer.size();
      }
    }
    if (!ok || std::fflush(out.get()) != 0) {
      std::remove(tmp.c_str());
      return IoError(tmp + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return IoError(path + ": cannot rename into place: " + ec.message());
  return WriteFileAtomically(directory + "/config.json", VisionConfigJson(config));
}

}  // namespace reel::vision
