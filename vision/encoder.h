// MiniMax-M3's vision encoder on the CPU, from the model's own safetensors checkpoint: patches in,
// pooled features per frame pair and/or the projector's tokens out. Owns its weights and compute
// threads; Encode may be called from any thread (calls serialised, each using all its threads).
// Details: vision/README.md, "Encoder".
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "vision/model_config.h"

namespace reel::vision {

namespace internal {
struct ModelWeights;
class ThreadPool;
class Kernels;
}  // namespace internal

enum class WeightPrecision { kF32, kBF16, kF16 };

enum class Backend {
  kAuto,      // avx512 when the CPU has AVX-512F, else openblas
  kOpenBlas,  // cblas_sgemm for every product
  kAvx512,    // Reel's AVX-512 kernels (an error on a CPU without AVX-512)
};

struct EncoderOptions {
  WeightPrecision precision = WeightPrecision::kBF16;
  int threads = 0;  // compute threads in all; 0 = one per CPU this process may run on
  Backend backend = Backend::kAuto;
  bool projector = true;  // load the projector (needed for tokens; pooled features are without)
  // Patches computed at once: a larger batch is cut into runs of whole attention segments
  // (which gives the same result) to bound the working memory, about 90 KB per patch at M3's
  // size. One segment is never cut, so a segment larger than this is computed whole.
  int max_batch_patches = 12288;
};

// One image or video as patches: pairs x rows x cols patches of config.patch_values() floats,
// in merge-window order (for each pair; each merge window row-major; its patches row-major),
// each patch's values ordered (channel, frame of the pair, row, column). `rows` and `cols` are
// in patches and multiples of the merge size.
struct VisualInput {
  int pairs = 0;
  int rows = 0;
  int cols = 0;
  std::vector<float> patches;
};

struct EncodeRequest {
  bool pooled = true;  // [pairs, hidden]
  bool tokens = true;  // [pairs * rows * cols / merge^2, text_hidden]; needs the projector
  bool tower = false;  // [pairs * rows * cols, hidden]: the tower's last hidden state
};

// Where the last Encode call spent its time (seconds, summed over its batches).
struct EncodeTimings {
  double patch_embedding = 0;
  double norms = 0;  // pre_layrnorm and the blocks' layer norms
  double qkv = 0;    // q, k, v projections
  double rotary = 0;
  double attention = 0;  // q k^T, softmax, p v
  double out_proj = 0;
  double mlp = 0;  // fc1 with GELU, fc2
  double pooling = 0;
  double projector = 0;  // per-patch projector and patch-merge MLP
  double total() const {
    return patch_embedding + norms + qkv + rotary + attention + out_proj + mlp + pooling +
           projector;
  }
};

struct EncodedVisual {
  std::vector<float> pooled;
  std::vector<float> tokens;
  std::vector<float> tower;
};

class VisionEncoder {
 public:
  // Reads config.json (M3's values where absent) and the tensors of `path` (a checkpoint
  // directory, its index, or a .safetensors file; see vision/checkpoint.h).
  // Errors: those of the checkpoint and config, naming the file and tensor; kUnsupported for
  // the avx512 backend on a CPU without AVX-512.
  static Result<std::unique_ptr<VisionEncoder>> Load(const std::string& path,
                                                     const EncoderOptions& options = {});
  ~VisionEncoder();

  const VisionModelConfig& config() const { return config_; }
  const EncoderOptions& options() const { return options_; }
  int threads() const;
  const char* backend_name() const;
  bool has_projector() const;
  uint64_t weight_bytes() const;
  // 16 hex digits identifying the tower's weights (content hash) and their held precision.
  const std::string& fingerprint() const { return fingerprint_; }
  // "avx512, bf16 weights (1.73 GB), 2 threads"
  std::string Describe() const;

  // Encodes the inputs together (attention never crosses inputs; batches larger than
  // options.max_batch_patches are computed in runs of whole segments).
  // Errors: kInvalidArgument for an input whose sizes do not fit the model; kLimitExceeded
  // when memory runs out.
  Result<std::vector<EncodedVisual>> Encode(std::span<const VisualInput* const> inputs,
                                            const EncodeRequest& request = {});
  Result<EncodedVisual> Encode(const VisualInput& input, const EncodeRequest& request = {});

  EncodeTimings LastTimings();

 private:
  VisionEncoder() = default;
  Result<std::vector<EncodedVisual>> EncodeLocked(std::span<const VisualInput* const> inputs,
                                                  const EncodeRequest& request);

  VisionModelConfig config_;
  EncoderOptions options_;
  std::string fingerprint_;
  const internal::Kernels* kernels_ = nullptr;
  std::unique_ptr<internal::ModelWeights> weights_;
  std::unique_ptr<internal::ThreadPool> pool_;
  std::mutex mutex_;  // one Encode at a time; guards timings_
  EncodeTimings timings_;
};

// The CPUs this process may run on (sched_getaffinity), at least 1.
int AvailableCpus();

}  // namespace reel::vision
