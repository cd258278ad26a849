// The portable backend on OpenBLAS, and what both backends share. This is the only file in
// Reel that includes cblas.h.

#include "vision/internal/kernels.h"

#include <cblas.h>
#include <cpuid.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

extern "C" {
// OpenBLAS extensions (declared in Debian's cblas.h too; repeated for other cblas headers).
void openblas_set_num_threads(int num_threads);
char* openblas_get_config(void);
int openblas_get_parallel(void);
}

namespace reel::vision::internal {

void AlignedBuffer::Free::operator()(uint8_t* p) const { std::free(p); }

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<uint8_t*>(p));
}

float* Scratch::Floats(int slot, size_t count) {
  AlignedBuffer& b = buffers_[slot];
  size_t bytes = count * sizeof(float);
  if (b.size() < bytes) b = AlignedBuffer(bytes + bytes / 4);
  return b.as<float>();
}

// ---------------------------------------------------------------------------------------------
// Conversions.

float Bf16ToFloat(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if ((bits & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float F16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x400) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mantissa & 0x3ff) << 13;
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000 | mantissa << 13;
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToF16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t abs = bits & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00;   // NaN
  if (abs >= 0x477ff000) return sign | 0x7c00;  // rounds to infinity
  if (abs < 0x38800000) {                       // subnormal or zero in f16
    if (abs < 0x33000000) return sign;          // below half the smallest subnormal
    uint32_t mantissa = (abs & 0x7fffff) | 0x800000;
    // value / 2^-24 (the f16 subnormal unit) = mantissa * 2^(exponent - 126).
    int shift = 126 - static_cast<int>(abs >> 23);
    uint32_t result = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (result & 1))) ++result;
    return sign | static_cast<uint16_t>(result);
  }
  uint32_t result = ((abs >> 13) - (112u << 10));
  uint32_t rest = abs & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (result & 1))) ++result;
  return sign | static_cast<uint16_t>(result);
}

float LoadAsFloat(const uint8_t* data, DType type, size_t i) {
  switch (type) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, data + 4 * i, 4);
      return f;
    }
    case DType::kBF16: {
      uint16_t v;
      std::memcpy(&v, data + 2 * i, 2);
      return Bf16ToFloat(v);
    }
    case DType::kF16: {
      uint16_t v;
      std::memcpy(&v, data + 2 * i, 2);
      return F16ToFloat(v);
    }
    default:
      return 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Process-wide settings.

void SetSingleThreadedBlas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

const char* BlasConfig() { return openblas_get_config(); }

const char* BlasThreading() {
  switch (openblas_get_parallel()) {
    case 0:
      return "sequential";
    case 1:
      return "pthreads";
    case 2:
      return "openmp";
    default:
      return "unknown";
  }
}

namespace {

// CPUID bits that not every compiler's __builtin_cpu_supports knows (clang 14: neither "f16c"
// nor "avx512bf16"): F16C is leaf 1 ECX bit 29, AVX512_BF16 leaf 7 subleaf 1 EAX bit 5.
bool CpuidBit(unsigned leaf, unsigned subleaf, int reg, int bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (static_cast<unsigned>(__get_cpuid_max(0, nullptr)) < leaf) return false;
  __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
  return (r[reg] >> bit) & 1u;
}
constexpr int kEax = 0, kEcx = 2;

}  // namespace

bool CpuHasAvx512() {
  // __builtin_cpu_supports also checks that the OS saves the AVX-512 registers.
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma") &&
                          CpuidBit(1, 0, kEcx, 29);
  return has;
}

bool CpuHasAvx512Bf16() {
  static const bool has = CpuHasAvx512() && CpuidBit(7, 1, kEax, 5);
  return has;
}

// ---------------------------------------------------------------------------------------------
// Weight packing.

namespace {

constexpr int kPanel = 32;

struct F32 {
  using T = float;
  static float Load(const uint8_t* p, size_t i) {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  }
  static float Store(float f) { return f; }
};
struct BF16 {
  using T = uint16_t;
  static float Load(const uint8_t* p, size_t i) {
    uint16_t v;
    std::memcpy(&v, p + 2 * i, 2);
    return Bf16ToFloat(v);
  }
  static uint16_t Store(float f) { return FloatToBf16(f); }
};
struct F16 {
  using T = uint16_t;
  static float Load(const uint8_t* p, size_t i) {
    uint16_t v;
    std::memcpy(&v, p + 2 * i, 2);
    return F16ToFloat(v);
  }
  static uint16_t Store(float f) { return FloatToF16(f); }
};

template <typename Src, typename Dst>
void PackRowsAs(PackedWeights& w, int row0, const uint8_t* src, int rows) {
  using T = typename Dst::T;
  T* out = w.data.as<T>();
  const size_t k = static_cast<size_t>(w.k);
  if (!w.panels) {
    for (int r = 0; r < rows; ++r) {
      T* d = out + static_cast<size_t>(row0 + r) * k;
      const size_t base = static_cast<size_t>(r) * k;
      for (size_t kk = 0; kk < k; ++kk) d[kk] = Dst::Store(Src::Load(src, base + kk));
    }
    return;
  }
  // Panels: a run of rows within one panel at a time, written k-major so every store lands next
  // to the last one (the rows are read as that many sequential streams).
  for (int r = 0; r < rows;) {
    const int row = row0 + r;
    const int lane = row % kPanel;
    const int run = std::min(rows - r, kPanel - lane);
    T* d = out + static_cast<size_t>(row / kPanel) * k * kPanel + lane;
    const size_t base = static_cast<size_t>(r) * k;
    for (size_t kk = 0; kk < k; ++kk) {
      T* dk = d + kk * kPanel;
      for (int j = 0; j < run; ++j) dk[j] = Dst::Store(Src::Load(src, base + j * k + kk));
    }
    r += run;
  }
}

template <typename Src>
void PackRowsFrom(PackedWeights& w, int row0, const uint8_t* src, int rows) {
  switch (w.type) {
    case WeightType::kF32:
      return PackRowsAs<Src, F32>(w, row0, src, rows);
    case WeightType::kBF16:
      return PackRowsAs<Src, BF16>(w, row0, src, rows);
    case WeightType::kF16:
      return PackRowsAs<Src, F16>(w, row0, src, rows);
  }
}

}  // namespace

PackedWeights AllocateWeights(const Kernels& kernels, int n, int k, WeightType type) {
  PackedWeights w;
  w.n = n;
  w.k = k;
  w.type = type;
  w.panels = kernels.panels();
  size_t rows = w.panels ? static_cast<size_t>((n + kPanel - 1) / kPanel) * kPanel : n;
  size_t bytes = rows * static_cast<size_t>(k) * (type == WeightType::kF32 ? 4 : 2);
  w.data = AlignedBuffer(bytes);
  std::memset(w.data.data(), 0, bytes);
  return w;
}

void PackWeightRows(PackedWeights& w, int row0, const uint8_t* src, DType src_type, int rows) {
  switch (src_type) {
    case DType::kF32:
      return PackRowsFrom<F32>(w, row0, src, rows);
    case DType::kBF16:
      return PackRowsFrom<BF16>(w, row0, src, rows);
    case DType::kF16:
      return PackRowsFrom<F16>(w, row0, src, rows);
    default:
      return;
  }
}

namespace {

// ---------------------------------------------------------------------------------------------
// The OpenBLAS backend.

// x[j] = e^(x[j] - shift) for x[j] <= shift (softmax), within 1e-6 relative (0 below e^-87):
// the exponent's integer part by rounding, 2^n from its bits, e^r for |r| <= 0.35 by its Taylor
// series to r^7. Four values at a time in the compiler's generic vectors (SSE2 on the baseline
// x86-64) instead of a libm call per value.
typedef float Float4 __attribute__((vector_size(16)));
typedef int32_t Int4 __attribute__((vector_size(16)));

inline Float4 ExpMinus4(Float4 x, float shift) {
  Float4 v = x - shift;
  v = v < -87.0f ? Float4{} - 87.0f : v;
  const Float4 n = (v * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  Float4 r = v - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  Float4 p = Float4{} + 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const Int4 bits = (__builtin_convertvector(n, Int4) + 127) << 23;
  Float4 scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

void ExpMinus(float* x, int count, float shift) {
  int j = 0;
  for (; j + 4 <= count; j += 4) {
    Float4 v;
    std::memcpy(&v, x + j, sizeof(v));
    v = ExpMinus4(v, shift);
    std::memcpy(x + j, &v, sizeof(v));
  }
  if (j < count) {
    Float4 v = Float4{} + shift;
    std::memcpy(&v, x + j, sizeof(float) * (count - j));
    v = ExpMinus4(v, shift);
    std::memcpy(x + j, &v, sizeof(float) * (count - j));
  }
}

void ActivateScalar(ActivationKind kind, float* x, size_t count) {
  switch (kind) {
    case ActivationKind::kNone:
      return;
    case ActivationKind::kGeluErf:
      for (size_t i = 0; i < count; ++i) {
        x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * static_cast<float>(M_SQRT1_2)));
      }
      return;
    case ActivationKind::kGeluTanh: {
      const float k = std::sqrt(2.0f / static_cast<float>(M_PI));
      for (size_t i = 0; i < count; ++i) {
        float v = x[i];
        x[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
      }
      return;
    }
  }
}

class OpenBlas final : public Kernels {
 public:
  const char* name() const override { return "openblas"; }
  int column_block() const override { return 64; }

  bool panels() const override { return false; }

  void Linear(const LinearArgs& a, int n_begin, int n_end, Scratch& scratch) const override {
    const PackedWeights& w = *a.w;
    const int k = w.k;
    // Rows of W widened to f32 at a time: at most ~16 MB.
    const int chunk = w.type == WeightType::kF32
                          ? n_end - n_begin
                          : std::max(16, static_cast<int>((4u << 20) / std::max(k, 1)));
    for (int n0 = n_begin; n0 < n_end; n0 += chunk) {
      int rows = std::min(chunk, n_end - n0);
      const float* wf;
      if (w.type == WeightType::kF32) {
        wf = w.data.as<float>() + static_cast<size_t>(n0) * k;
      } else {
        float* buf = scratch.Floats(0, static_cast<size_t>(rows) * k);
        const uint16_t* src = w.data.as<uint16_t>() + static_cast<size_t>(n0) * k;
        size_t count = static_cast<size_t>(rows) * k;
        if (w.type == WeightType::kBF16) {
          for (size_t i = 0; i < count; ++i) buf[i] = Bf16ToFloat(src[i]);
        } else {
          for (size_t i = 0; i < count; ++i) buf[i] = F16ToFloat(src[i]);
        }
        wf = buf;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, a.m, rows, k, 1.0f, a.a, a.lda, wf, k,
                  a.accumulate ? 1.0f : 0.0f, a.c + n0, a.ldc);
    }
    for (int i = 0; i < a.m; ++i) {
      float* row = a.c + static_cast<size_t>(i) * a.ldc;
      if (a.bias != nullptr) {
        for (int j = n_begin; j < n_end; ++j) row[j] += a.bias[j];
      }
      ActivateScalar(a.activation, row + n_begin, n_end - n_begin);
    }
  }

  void Attention(const AttentionArgs& a, Scratch& scratch) const override {
    const int block = 256;
    for (int q0 = 0; q0 < a.len; q0 += block) {
      int rows = std::min(block, a.len - q0);
      float* s = scratch.Floats(1, static_cast<size_t>(rows) * a.len);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, a.len, a.head_dim, a.scale,
                  a.q + static_cast<size_t>(q0) * a.ld_qkv, a.ld_qkv, a.k, a.ld_qkv, 0.0f, s,
                  a.len);
      for (int i = 0; i < rows; ++i) {
        float* row = s + static_cast<size_t>(i) * a.len;
        float max = row[0];
        for (int j = 1; j < a.len; ++j) max = std::max(max, row[j]);
        ExpMinus(row, a.len, max);
        float sum = 0;
        for (int j = 0; j < a.len; ++j) sum += row[j];
        float inv = 1.0f / sum;
        for (int j = 0; j < a.len; ++j) row[j] *= inv;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, a.head_dim, a.len, 1.0f, s,
                  a.len, a.v, a.ld_qkv, 0.0f, a.out + static_cast<size_t>(q0) * a.ld_out, a.ld_out);
    }
  }

  void Activate(ActivationKind kind, float* x, size_t count) const override {
    ActivateScalar(kind, x, count);
  }
};

}  // namespace

const Kernels& OpenBlasKernels() {
  static const OpenBlas kernels;
  return kernels;
}

// Defined in kernels_avx512.cc; only to be called on a CPU with AVX-512.
const Kernels& Avx512KernelsUnchecked();

const Kernels* Avx512Kernels() { return CpuHasAvx512() ? &Avx512KernelsUnchecked() : nullptr; }

}  // namespace reel::vision::internal
