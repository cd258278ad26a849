#include "vision/encoder.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <new>
#include <thread>

#include "vision/checkpoint.h"
#include "vision/internal/kernels.h"
#include "vision/internal/model_weights.h"
#include "vision/internal/thread_pool.h"

namespace reel::vision {

using internal::ActivationKind;
using internal::LinearArgs;
using internal::PackedWeights;

namespace {

ActivationKind Kind(Activation a) {
  return a == Activation::kGeluTanh ? ActivationKind::kGeluTanh : ActivationKind::kGeluErf;
}

internal::WeightType HeldType(WeightPrecision p) {
  switch (p) {
    case WeightPrecision::kF32:
      return internal::WeightType::kF32;
    case WeightPrecision::kF16:
      return internal::WeightType::kF16;
    default:
      return internal::WeightType::kBF16;
  }
}

const char* PrecisionName(WeightPrecision p) {
  switch (p) {
    case WeightPrecision::kF32:
      return "f32";
    case WeightPrecision::kF16:
      return "f16";
    default:
      return "bf16";
  }
}

// A run of tokens that attend to each other: at most segment_max_pairs pairs of one input.
struct Segment {
  size_t start = 0;  // first patch row
  int pairs = 0;
  int rows = 0;
  int cols = 0;
  int length() const { return pairs * rows * cols; }
};

// kInvalidArgument naming the first input whose sizes do not fit the model.
Status CheckInputs(std::span<const VisualInput* const> inputs, const VisionModelConfig& c) {
  const int merge = c.spatial_merge_size;
  const size_t pv = static_cast<size_t>(c.patch_values());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const VisualInput& in = *inputs[i];
    const std::string which = "input " + std::to_string(i);
    if (in.pairs < 1 || in.rows < merge || in.cols < merge || in.rows % merge != 0 ||
        in.cols % merge != 0 || in.rows > 65536 || in.cols > 65536 || in.pairs > (1 << 20)) {
      return InvalidArgument(which + ": " + std::to_string(in.pairs) + " pairs of " +
                             std::to_string(in.rows) + "x" + std::to_string(in.cols) +
                             " patches (need at least one pair, sides multiples of " +
                             std::to_string(merge) + ")");
    }
    const size_t count = static_cast<size_t>(in.pairs) * in.rows * in.cols;
    if (in.patches.size() != count * pv) {
      return InvalidArgument(which + ": " + std::to_string(in.patches.size()) +
                             " values, expected " + std::to_string(count) + " patches of " +
                             std::to_string(pv));
    }
  }
  return Status::Ok();
}

}  // namespace

int AvailableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

VisionEncoder::~VisionEncoder() = default;

int VisionEncoder::threads() const { return pool_->size(); }
const char* VisionEncoder::backend_name() const { return kernels_->name(); }
bool VisionEncoder::has_projector() const { return weights_->has_projector; }
uint64_t VisionEncoder::weight_bytes() const { return weights_->bytes; }

std::string VisionEncoder::Describe() const {
  char text[160];
  const double bytes = static_cast<double>(weights_->bytes);
  std::snprintf(text, sizeof text, "%s, %s weights (%.*f %s), %d thread%s", kernels_->name(),
                PrecisionName(options_.precision), bytes < 1e9 ? 1 : 2,
                bytes < 1e9 ? bytes / 1e6 : bytes / 1e9, bytes < 1e9 ? "MB" : "GB", threads(),
                threads() == 1 ? "" : "s");
  return text;
}

Result<std::unique_ptr<VisionEncoder>> VisionEncoder::Load(const std::string& path,
                                                           const EncoderOptions& options) {
  internal::SetSingleThreadedBlas();
  std::unique_ptr<VisionEncoder> encoder(new VisionEncoder());
  encoder->options_ = options;
  switch (options.backend) {
    case Backend::kOpenBlas:
      encoder->kernels_ = &internal::OpenBlasKernels();
      break;
    case Backend::kAvx512:
      encoder->kernels_ = internal::Avx512Kernels();
      if (encoder->kernels_ == nullptr) {
        return Unsupported("the avx512 backend needs a CPU with AVX-512F; this one has none");
      }
      break;
    case Backend::kAuto:
      encoder->kernels_ = internal::Avx512Kernels();
      if (encoder->kernels_ == nullptr) encoder->kernels_ = &internal::OpenBlasKernels();
      break;
  }
  REEL_ASSIGN_OR_RETURN(Checkpoint checkpoint, Checkpoint::Open(path));
  REEL_ASSIGN_OR_RETURN(encoder->config_, LoadVisionConfig(checkpoint.directory()));
  try {
    REEL_ASSIGN_OR_RETURN(
        internal::ModelWeights weights,
        internal::LoadModelWeights(checkpoint, encoder->config_, *encoder->kernels_,
                                   HeldType(options.precision), options.projector));
    encoder->weights_ = std::make_unique<internal::ModelWeights>(std::move(weights));
  } catch (const std::bad_alloc&) {
    return LimitExceeded(path + ": not enough memory to hold the encoder's weights");
  }
  checkpoint.CloseShards();
  int threads = options.threads > 0 ? options.threads : AvailableCpus();
  encoder->pool_ = std::make_unique<internal::ThreadPool>(threads);
  char hex[40];
  std::snprintf(hex, sizeof hex, "%016llx-%s",
                static_cast<unsigned long long>(encoder->weights_->fingerprint),
                PrecisionName(options.precision));
  encoder->fingerprint_ = hex;
  return encoder;
}

Result<EncodedVisual> VisionEncoder::Encode(const VisualInput& input,
                                            const EncodeRequest& request) {
  const VisualInput* one[] = {&input};
  REEL_ASSIGN_OR_RETURN(std::vector<EncodedVisual> out, Encode(one, request));
  return std::move(out[0]);
}

EncodeTimings VisionEncoder::LastTimings() {
  std::lock_guard<std::mutex> lock(mutex_);
  return timings_;
}

Result<std::vector<EncodedVisual>> VisionEncoder::Encode(std::span<const VisualInput* const> inputs,
                                                         const EncodeRequest& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  timings_ = EncodeTimings();
  REEL_RETURN_IF_ERROR(CheckInputs(inputs, config_));
  try {
    // Pieces of inputs: whole attention segments, grouped up to max_batch_patches.
    struct Piece {
      size_t input;
      int pair0, pairs;
    };
    std::vector<std::vector<Piece>> runs(1);
    size_t run_patches = 0;
    const int seg = config_.segment_max_pairs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const VisualInput& in = *inputs[i];
      const size_t per_pair = static_cast<size_t>(in.rows) * in.cols;
      for (int t0 = 0; t0 < in.pairs; t0 += seg) {
        const int pairs = std::min(seg, in.pairs - t0);
        const size_t patches = per_pair * pairs;
        if (run_patches > 0 &&
            run_patches + patches > static_cast<size_t>(std::max(options_.max_batch_patches, 1))) {
          runs.emplace_back();
          run_patches = 0;
        }
        if (!runs.back().empty() && runs.back().back().input == i &&
            runs.back().back().pair0 + runs.back().back().pairs == t0) {
          runs.back().back().pairs += pairs;
        } else {
          runs.back().push_back({i, t0, pairs});
        }
        run_patches += patches;
      }
    }
    if (runs.size() == 1) return EncodeLocked(inputs, request);
    // Several runs: encode each on copies of its pieces and append the results per input.
    std::vector<EncodedVisual> out(inputs.size());
    const size_t pv = static_cast<size_t>(config_.patch_values());
    for (const std::vector<Piece>& run : runs) {
      std::vector<VisualInput> parts;
      for (const Piece& p : run) {
        const VisualInput& in = *inputs[p.input];
        const size_t per_pair = static_cast<size_t>(in.rows) * in.cols * pv;
        VisualInput part;
        part.pairs = p.pairs;
        part.rows = in.rows;
        part.cols = in.cols;
        part.patches.assign(in.patches.begin() + p.pair0 * per_pair,
                            in.patches.begin() + (p.pair0 + p.pairs) * per_pair);
        parts.push_back(std::move(part));
      }
      std::vector<const VisualInput*> pointers;
      for (const VisualInput& part : parts) pointers.push_back(&part);
      REEL_ASSIGN_OR_RETURN(std::vector<EncodedVisual> done, EncodeLocked(pointers, request));
      for (size_t k = 0; k < run.size(); ++k) {
        EncodedVisual& dst = out[run[k].input];
        for (auto [from, to] :
             {std::pair{&done[k].pooled, &dst.pooled}, std::pair{&done[k].tokens, &dst.tokens},
              std::pair{&done[k].tower, &dst.tower}}) {
          to->insert(to->end(), from->begin(), from->end());
        }
      }
    }
    return out;
  } catch (const std::bad_alloc&) {
    return LimitExceeded("not enough memory to encode this batch; encode fewer frames at once");
  }
}

Result<std::vector<EncodedVisual>> VisionEncoder::EncodeLocked(
    std::span<const VisualInput* const> inputs, const EncodeRequest& request) {
  const VisionModelConfig& c = config_;
  const internal::ModelWeights& w = *weights_;
  const int d = c.hidden_size;
  const int heads = c.num_heads;
  const int hd = c.head_dim();
  const int merge = c.spatial_merge_size;
  const int pv = c.patch_values();
  if (request.tokens && !w.has_projector) {
    return InvalidArgument("tokens asked for, but the encoder was loaded without its projector");
  }

  // Cut the inputs (checked by Encode) into attention segments.
  REEL_RETURN_IF_ERROR(CheckInputs(inputs, c));
  std::vector<Segment> segments;
  size_t total = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const VisualInput& in = *inputs[i];
    const size_t count = static_cast<size_t>(in.pairs) * in.rows * in.cols;
    for (int t0 = 0; t0 < in.pairs; t0 += c.segment_max_pairs) {
      Segment s;
      s.start = total + static_cast<size_t>(t0) * in.rows * in.cols;
      s.pairs = std::min(c.segment_max_pairs, in.pairs - t0);
      s.rows = in.rows;
      s.cols = in.cols;
      segments.push_back(s);
    }
    total += count;
  }
  if (total == 0) return std::vector<EncodedVisual>(inputs.size());
  if (total > (1u << 24)) {
    return InvalidArgument(std::to_string(total) + " patches in one batch; at most 16777216");
  }
  const int n = static_cast<int>(total);
  internal::ThreadPool& pool = *pool_;
  auto mark = std::chrono::steady_clock::now();
  // Adds the time since the last call to `slot`.
  auto lap = [&mark](double& slot) {
    const auto now = std::chrono::steady_clock::now();
    slot += std::chrono::duration<double>(now - mark).count();
    mark = now;
  };
  EncodeTimings& times = timings_;
  std::vector<internal::Scratch> scratch(static_cast<size_t>(pool.size()));

  auto linear = [&](const LinearArgs& args) {
    const int cols = args.w->n;
    const int block = kernels_->column_block();
    const int col_blocks = (cols + block - 1) / block;
    const int n_tasks = std::min(pool.size(), col_blocks);
    const int m_tasks = std::max(1, std::min(pool.size() / n_tasks, args.m / 64));
    pool.Run(n_tasks * m_tasks, [&](int task, int thread) {
      const int ni = task % n_tasks;
      const int mi = task / n_tasks;
      const int n0 = col_blocks * ni / n_tasks * block;
      const int n1 = std::min(cols, col_blocks * (ni + 1) / n_tasks * block);
      const int m0 = static_cast<int>(static_cast<int64_t>(args.m) * mi / m_tasks);
      const int m1 = static_cast<int>(static_cast<int64_t>(args.m) * (mi + 1) / m_tasks);
      if (n0 >= n1 || m0 >= m1) return;
      LinearArgs part = args;
      part.m = m1 - m0;
      part.a = args.a + static_cast<size_t>(m0) * args.lda;
      part.c = args.c + static_cast<size_t>(m0) * args.ldc;
      kernels_->Linear(part, n0, n1, scratch[static_cast<size_t>(thread)]);
    });
  };
  auto make_linear = [](int m, const float* a, int lda, const PackedWeights& wt,
                        const std::vector<float>& bias, float* out, int ldc) {
    LinearArgs args;
    args.m = m;
    args.a = a;
    args.lda = lda;
    args.w = &wt;
    args.bias = bias.empty() ? nullptr : bias.data();
    args.c = out;
    args.ldc = ldc;
    return args;
  };
  // Row blocks for the element-wise steps.
  const int row_tasks = std::min(n, pool.size() * 4);
  auto rows_of = [&](int task, int* r0, int* r1) {
    *r0 = static_cast<int>(static_cast<int64_t>(n) * task / row_tasks);
    *r1 = static_cast<int>(static_cast<int64_t>(n) * (task + 1) / row_tasks);
  };
  const float eps = static_cast<float>(c.layer_norm_eps);
  auto layer_norm = [&](const float* in, float* out, const std::vector<float>& gamma,
                        const std::vector<float>& beta) {
    pool.Run(row_tasks, [&](int task, int) {
      int r0, r1;
      rows_of(task, &r0, &r1);
      for (int r = r0; r < r1; ++r) {
        const float* x = in + static_cast<size_t>(r) * d;
        float* y = out + static_cast<size_t>(r) * d;
        double sum = 0;
        for (int j = 0; j < d; ++j) sum += x[j];
        const float mean = static_cast<float>(sum / d);
        double sq = 0;
        for (int j = 0; j < d; ++j) {
          const float v = x[j] - mean;
          sq += static_cast<double>(v) * v;
        }
        const float inv = static_cast<float>(1.0 / std::sqrt(sq / d + eps));
        for (int j = 0; j < d; ++j) y[j] = (x[j] - mean) * inv * gamma[j] + beta[j];
      }
    });
  };

  // Patch embedding: one product over all patches.
  std::vector<float> patches(total * pv);
  {
    size_t at = 0;
    for (const VisualInput* in : inputs) {
      std::copy(in->patches.begin(), in->patches.end(), patches.begin() + at);
      at += in->patches.size();
    }
  }
  std::vector<float> h(total * d), x(total * d), attn(total * d);
  std::vector<float> qkv(total * 3 * d);
  std::vector<float> mlp(total * static_cast<size_t>(c.intermediate_size));
  {
    static const std::vector<float> kNoBias;
    lap(times.patch_embedding);
    linear(make_linear(n, patches.data(), pv, w.patch, kNoBias, x.data(), d));
    std::vector<float>().swap(patches);
    lap(times.patch_embedding);
    layer_norm(x.data(), h.data(), w.pre_norm_weight, w.pre_norm_bias);
    lap(times.norms);
  }

  // Rotary angles of every patch: (pair in its segment, row, column), each axis with its own
  // frequencies 1 / theta^(2i / axis_dims), concatenated: [time | row | column].
  const int axis = c.rope_axis_dims();
  const int half = c.rope_half();
  std::vector<float> cos_table(total * half), sin_table(total * half);
  {
    std::vector<double> inv(static_cast<size_t>(axis / 2));
    for (int i = 0; i < axis / 2; ++i) inv[i] = 1.0 / std::pow(c.rope_theta, 2.0 * i / axis);
    for (const Segment& s : segments) {
      const int per_pair = s.rows * s.cols;
      const int windows_per_row = s.cols / merge;
      for (int j = 0; j < s.length(); ++j) {
        const int t = j / per_pair;
        const int in_pair = j % per_pair;
        const int window = in_pair / (merge * merge);
        const int in_window = in_pair % (merge * merge);
        const int row = (window / windows_per_row) * merge + in_window / merge;
        const int col = (window % windows_per_row) * merge + in_window % merge;
        const size_t base = (s.start + j) * half;
        const int pos[3] = {t, row, col};
        for (int a = 0; a < 3; ++a) {
          for (int i = 0; i < axis / 2; ++i) {
            const double angle = pos[a] * inv[i];
            cos_table[base + a * (axis / 2) + i] = static_cast<float>(std::cos(angle));
            sin_table[base + a * (axis / 2) + i] = static_cast<float>(std::sin(angle));
          }
        }
      }
    }
  }

  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const int attention_tasks = static_cast<int>(segments.size()) * heads;
  for (const internal::LayerWeights& l : w.layers) {
    lap(times.rotary);
    layer_norm(h.data(), x.data(), l.norm1_weight, l.norm1_bias);
    lap(times.norms);
    linear(make_linear(n, x.data(), d, l.qkv, l.qkv_bias, qkv.data(), 3 * d));
    lap(times.qkv);
    // Rotate q and k: dims i and i + half of each head turn together; the tail passes.
    pool.Run(row_tasks, [&](int task, int) {
      int r0, r1;
      rows_of(task, &r0, &r1);
      for (int r = r0; r < r1; ++r) {
        const float* cs = cos_table.data() + static_cast<size_t>(r) * half;
        const float* sn = sin_table.data() + static_cast<size_t>(r) * half;
        float* row = qkv.data() + static_cast<size_t>(r) * 3 * d;
        for (int part = 0; part < 2; ++part) {
          for (int head = 0; head < heads; ++head) {
            float* v = row + part * d + head * hd;
            for (int i = 0; i < half; ++i) {
              const float x1 = v[i], x2 = v[i + half];
              v[i] = x1 * cs[i] - x2 * sn[i];
              v[i + half] = x2 * cs[i] + x1 * sn[i];
            }
          }
        }
      }
    });
    lap(times.rotary);
    pool.Run(attention_tasks, [&](int task, int thread) {
      const Segment& s = segments[static_cast<size_t>(task / heads)];
      const int head = task % heads;
      internal::AttentionArgs args;
      args.len = s.length();
      args.head_dim = hd;
      args.scale = scale;
      args.q = qkv.data() + s.start * 3 * d + head * hd;
      args.k = args.q + d;
      args.v = args.q + 2 * d;
      args.ld_qkv = 3 * d;
      args.out = attn.data() + s.start * d + head * hd;
      args.ld_out = d;
      kernels_->Attention(args, scratch[static_cast<size_t>(thread)]);
    });
    lap(times.attention);
    LinearArgs out_proj = make_linear(n, attn.data(), d, l.out, l.out_bias, h.data(), d);
    out_proj.accumulate = true;
    linear(out_proj);
    lap(times.out_proj);
    layer_norm(h.data(), x.data(), l.norm2_weight, l.norm2_bias);
    lap(times.norms);
    LinearArgs fc1 =
        make_linear(n, x.data(), d, l.fc1, l.fc1_bias, mlp.data(), c.intermediate_size);
    fc1.activation = Kind(c.hidden_act);
    linear(fc1);
    LinearArgs fc2 =
        make_linear(n, mlp.data(), c.intermediate_size, l.fc2, l.fc2_bias, h.data(), d);
    fc2.accumulate = true;
    linear(fc2);
    lap(times.mlp);
  }
  std::vector<float>().swap(qkv);
  std::vector<float>().swap(attn);
  std::vector<float>().swap(x);
  std::vector<float>().swap(mlp);

  std::vector<EncodedVisual> out(inputs.size());
  size_t start = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const VisualInput& in = *inputs[i];
    const size_t per_pair = static_cast<size_t>(in.rows) * in.cols;
    if (request.pooled) {
      out[i].pooled.assign(static_cast<size_t>(in.pairs) * d, 0.0f);
      std::vector<double> sum(static_cast<size_t>(d));
      for (int t = 0; t < in.pairs; ++t) {
        std::fill(sum.begin(), sum.end(), 0.0);
        for (size_t p = 0; p < per_pair; ++p) {
          const float* row = h.data() + (start + t * per_pair + p) * d;
          for (int j = 0; j < d; ++j) sum[j] += row[j];
        }
        for (int j = 0; j < d; ++j) {
          out[i].pooled[static_cast<size_t>(t) * d + j] = static_cast<float>(sum[j] / per_pair);
        }
      }
    }
    if (request.tower) {
      out[i].tower.assign(h.begin() + start * d, h.begin() + (start + in.pairs * per_pair) * d);
    }
    start += in.pairs * per_pair;
  }

  lap(times.pooling);
  if (request.tokens) {
    // Per patch hidden -> projector_hidden -> text_hidden; then each merge window's patches
    // (consecutive rows) side by side -> projector_hidden -> text_hidden.
    const int ph = c.projector_hidden_size;
    const int th = c.text_hidden_size;
    const int window = c.merge_window();
    const int windows = n / window;
    std::vector<float> y1(total * ph);
    LinearArgs p1 = make_linear(n, h.data(), d, w.projector1, w.projector1_bias, y1.data(), ph);
    p1.activation = Kind(c.projector_act);
    linear(p1);
    std::vector<float>().swap(h);
    std::vector<float> y2(total * th);
    linear(make_linear(n, y1.data(), ph, w.projector2, w.projector2_bias, y2.data(), th));
    std::vector<float> z1(static_cast<size_t>(windows) * ph);
    LinearArgs m1 =
        make_linear(windows, y2.data(), window * th, w.merge1, w.merge1_bias, z1.data(), ph);
    m1.activation = Kind(c.projector_act);
    linear(m1);
    std::vector<float> tokens(static_cast<size_t>(windows) * th);
    linear(make_linear(windows, z1.data(), ph, w.merge2, w.merge2_bias, tokens.data(), th));
    size_t at = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const VisualInput& in = *inputs[i];
      const size_t count = static_cast<size_t>(in.pairs) * in.rows * in.cols / window * th;
      out[i].tokens.assign(tokens.begin() + at, tokens.begin() + at + count);
      at += count;
    }
    lap(times.projector);
  }
  return out;
}

}  // namespace reel::vision
