#include "vision/internal/model_weights.h"

#include <cstring>

namespace reel::vision::internal {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A fast 64-bit hash of the loaded bytes (for cache keys, not security).
class Fingerprint {
 public:
  void Add(const void* data, size_t size) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      Mix(w);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, p + i, size - i);
    Mix(tail ^ (static_cast<uint64_t>(size) << 56));
  }
  void Add(const std::string& s) { Add(s.data(), s.size()); }
  uint64_t value() const {
    uint64_t h = h_;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
  }

 private:
  void Mix(uint64_t w) {
    h_ ^= w * 0x87c37b91114253d5ull;
    h_ = (h_ << 31 | h_ >> 33) * 0x4cf5ad432745937full + 0x52dce729;
  }
  uint64_t h_ = 0x9e3779b97f4a7c15ull;
};

class Loader {
 public:
  Loader(Checkpoint& checkpoint, const Kernels& kernels, WeightType type)
      : checkpoint_(checkpoint), kernels_(kernels), type_(type) {}

  uint64_t bytes = 0;
  Fingerprint fingerprint;

  // The tensor `name`, checked to be a float tensor of exactly `shape`.
  Result<TensorRef> Get(const std::string& name, const std::vector<int64_t>& shape) {
    REEL_ASSIGN_OR_RETURN(TensorRef t, checkpoint_.Find(name));
    const std::string where = t.file->path() + ": tensor '" + name + "'";
    if (!IsFloatDType(t.info->dtype)) {
      return CorruptData(where + " is " + DTypeName(t.info->dtype) + ", expected F32, F16 or BF16");
    }
    if (t.info->shape != shape) {
      return CorruptData(where + " has shape " + ShapeText(t.info->shape) + ", expected " +
                         ShapeText(shape) + " (from config.json)");
    }
    fingerprint.Add(name);
    fingerprint.Add(DTypeName(t.info->dtype), std::strlen(DTypeName(t.info->dtype)));
    fingerprint.Add(t.info->shape.data(), t.info->shape.size() * sizeof(int64_t));
    fingerprint.Add(t.bytes.data(), t.bytes.size());
    return t;
  }

  // A vector (norm weight, bias) as f32.
  Result<std::vector<float>> Vector(const std::string& name, int size) {
    REEL_ASSIGN_OR_RETURN(TensorRef t, Get(name, {size}));
    std::vector<float> out(static_cast<size_t>(size));
    for (int i = 0; i < size; ++i) out[i] = LoadAsFloat(t.bytes.data(), t.info->dtype, i);
    t.file->Release(*t.info);
    bytes += out.size() * sizeof(float);
    return out;
  }

  // Linear weights [out, in] of several tensors stacked by rows (one tensor for most).
  Result<PackedWeights> Matrix(const std::vector<std::string>& names, int out, int in,
                               WeightType type) {
    PackedWeights w = AllocateWeights(kernels_, out * static_cast<int>(names.size()), in, type);
    for (size_t i = 0; i < names.size(); ++i) {
      REEL_ASSIGN_OR_RETURN(TensorRef t, Get(names[i], {out, in}));
      PackWeightRows(w, static_cast<int>(i) * out, t.bytes.data(), t.info->dtype, out);
      t.file->Release(*t.info);
    }
    bytes += w.bytes();
    return w;
  }
  Result<PackedWeights> Matrix(const std::string& name, int out, int in) {
    return Matrix(std::vector<std::string>{name}, out, in, type_);
  }

  // Several bias vectors, concatenated.
  Result<std::vector<float>> Biases(const std::vector<std::string>& names, int size) {
    std::vector<float> all;
    for (const std::string& name : names) {
      REEL_ASSIGN_OR_RETURN(std::vector<float> v, Vector(name, size));
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  }

  WeightType type() const { return type_; }

 private:
  Checkpoint& checkpoint_;
  const Kernels& kernels_;
  WeightType type_;
};

}  // namespace

std::string TowerPrefix() { return "vision_tower.vision_model."; }

std::string LayerPrefix(int layer) {
  return TowerPrefix() + "encoder.layers." + std::to_string(layer) + ".";
}

Result<ModelWeights> LoadModelWeights(Checkpoint& checkpoint, const VisionModelConfig& c,
                                      const Kernels& kernels, WeightType type, bool projector) {
  Loader load(checkpoint, kernels, type);
  ModelWeights m;
  const int d = c.hidden_size;
  const int f = c.intermediate_size;
  const std::string tower = TowerPrefix();
  {
    // The Conv3d kernel [hidden, channels, frames, rows, columns] is the GEMM matrix
    // [hidden, patch_values] as it lies; kept in f32 like the released checkpoint.
    const std::string name = tower + "embeddings.patch_embedding.weight";
    REEL_ASSIGN_OR_RETURN(TensorRef t, load.Get(name, {d, c.num_channels, c.temporal_patch_size,
                                                       c.patch_size, c.patch_size}));
    m.patch = AllocateWeights(kernels, d, c.patch_values(), WeightType::kF32);
    PackWeightRows(m.patch, 0, t.bytes.data(), t.info->dtype, d);
    t.file->Release(*t.info);
    load.bytes += m.patch.bytes();
  }
  REEL_ASSIGN_OR_RETURN(m.pre_norm_weight, load.Vector(tower + "pre_layrnorm.weight", d));
  REEL_ASSIGN_OR_RETURN(m.pre_norm_bias, load.Vector(tower + "pre_layrnorm.bias", d));
  m.layers.resize(static_cast<size_t>(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    LayerWeights& l = m.layers[static_cast<size_t>(i)];
    const std::string p = LayerPrefix(i);
    REEL_ASSIGN_OR_RETURN(l.norm1_weight, load.Vector(p + "layer_norm1.weight", d));
    REEL_ASSIGN_OR_RETURN(l.norm1_bias, load.Vector(p + "layer_norm1.bias", d));
    REEL_ASSIGN_OR_RETURN(l.norm2_weight, load.Vector(p + "layer_norm2.weight", d));
    REEL_ASSIGN_OR_RETURN(l.norm2_bias, load.Vector(p + "layer_norm2.bias", d));
    const std::string a = p + "self_attn.";
    REEL_ASSIGN_OR_RETURN(
        l.qkv, load.Matrix({a + "q_proj.weight", a + "k_proj.weight", a + "v_proj.weight"}, d, d,
                           load.type()));
    REEL_ASSIGN_OR_RETURN(
        l.qkv_bias, load.Biases({a + "q_proj.bias", a + "k_proj.bias", a + "v_proj.bias"}, d));
    REEL_ASSIGN_OR_RETURN(l.out, load.Matrix(a + "out_proj.weight", d, d));
    REEL_ASSIGN_OR_RETURN(l.out_bias, load.Vector(a + "out_proj.bias", d));
    REEL_ASSIGN_OR_RETURN(l.fc1, load.Matrix(p + "mlp.fc1.weight", f, d));
    REEL_ASSIGN_OR_RETURN(l.fc1_bias, load.Vector(p + "mlp.fc1.bias", f));
    REEL_ASSIGN_OR_RETURN(l.fc2, load.Matrix(p + "mlp.fc2.weight", d, f));
    REEL_ASSIGN_OR_RETURN(l.fc2_bias, load.Vector(p + "mlp.fc2.bias", d));
  }
  m.fingerprint = load.fingerprint.value();
  if (projector) {
    const int ph = c.projector_hidden_size;
    const int th = c.text_hidden_size;
    const int merged = th * c.merge_window();
    m.has_projector = true;
    REEL_ASSIGN_OR_RETURN(m.projector1,
                          load.Matrix("multi_modal_projector.linear_1.weight", ph, d));
    REEL_ASSIGN_OR_RETURN(m.projector2,
                          load.Matrix("multi_modal_projector.linear_2.weight", th, ph));
    REEL_ASSIGN_OR_RETURN(m.merge1, load.Matrix("patch_merge_mlp.linear_1.weight", ph, merged));
    REEL_ASSIGN_OR_RETURN(m.merge2, load.Matrix("patch_merge_mlp.linear_2.weight", th, ph));
    if (c.projector_bias) {
      REEL_ASSIGN_OR_RETURN(m.projector1_bias,
                            load.Vector("multi_modal_projector.linear_1.bias", ph));
      REEL_ASSIGN_OR_RETURN(m.projector2_bias,
                            load.Vector("multi_modal_projector.linear_2.bias", th));
    }
    if (c.patch_merge_bias) {
      REEL_ASSIGN_OR_RETURN(m.merge1_bias, load.Vector("patch_merge_mlp.linear_1.bias", ph));
      REEL_ASSIGN_OR_RETURN(m.merge2_bias, load.Vector("patch_merge_mlp.linear_2.bias", th));
    }
  }
  m.bytes = load.bytes;
  return m;
}

}  // namespace reel::vision::internal
