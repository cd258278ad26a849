// The AVX-512 backend. Every function in this file is compiled for AVX-512 (by the pragma
// below, not by command-line flags, so the inline library templates this file uses keep the
// baseline instruction set and nothing here leaks into code that runs on other CPUs). It is
// reached only through Avx512Kernels(), which checks the CPU first.
//
// The GEMM follows the Goto/BLIS structure: C = A W^T with W held in 32-column panels
// ([k][32] per panel, in f32, bf16 or f16). Per thread and column range:
//   for each block of panels (kNcPanels), for each k block (kKc):
//     widen the block's panels to f32 (skipped when held in f32: used in place),
//     for each block of kMc rows: pack A's rows into 14-row micro-panels,
//       for each panel, for each micro-panel: the 14x32 register tile (28 zmm accumulators),
//       then the epilogue (bias on the first k block, C += on later ones, the activation
//       after the last).
// Attention runs per head and segment on the same GEMM: S = (q * scale) k^T into a row block,
// an exact softmax per row, then S v.

#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "vision/internal/kernels.h"

#if defined(__clang__)
#pragma clang attribute push( \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")
// GCC 12 warns about the deliberately undefined vectors inside its own intrinsics.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace reel::vision::internal {
namespace {

constexpr int kMr = 14;  // rows of the register tile
constexpr int kNr = 32;  // columns of the register tile = panel width
// Measured on Zen 5 (bench/bf16_gemm_bench, one thread, 2870x5120x1280): kKc 256 -> 512 and
// kNcPanels 32 -> 128 took the kernel from ~172 to ~184 GFLOP/s (fewer passes over C and fewer
// packings of A); kKc 128 or 192 were slower.
constexpr int kKc = 512;        // k per block: one panel's block is 64 KB (L2)
constexpr int kMc = kMr * 16;   // rows per packed A block: 224 x 512 x 4 = 448 KB (L2)
constexpr int kNcPanels = 128;  // panels per widened B block: at most 8 MB (L3)

inline int Min(int a, int b) { return a < b ? a : b; }

// --- Vector math ------------------------------------------------------------------------------

// e^x, about 1 ulp; 0 below -87.3, +inf above 88.7.
inline __m512 Exp(__m512 x) {
  const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
  const __m512 ln2_hi = _mm512_set1_ps(0.693359375f);
  const __m512 ln2_lo = _mm512_set1_ps(-2.12194440e-4f);
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.5f));
  x = _mm512_min_ps(x, _mm512_set1_ps(88.75f));
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT);
  __m512 r = _mm512_fnmadd_ps(n, ln2_hi, x);
  r = _mm512_fnmadd_ps(n, ln2_lo, r);
  // Taylor series to r^7 on |r| <= 0.35: truncation below 6e-9 relative.
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// GELU with the exact erf: x * Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2. With z = |x| / sqrt 2:
// below 1, erf(z) = z P(z^2); from 1 on, erfc(z) = exp(G(z) - z^2), G fitted on [1, 5] (in
// u = (z - 3) / 2) and held at z = 5 beyond. The polynomials were fitted in float64
// (Chebyshev nodes) to the true erf; in f32 the result is within 1.6e-6 relative of GELU.
inline __m512 GeluErf(__m512 x) {
  const __m512 z = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f));
  const __m512 s = _mm512_mul_ps(z, z);
  __m512 p = _mm512_set1_ps(7.882500322e-05f);
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-8.018858979e-04f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(5.189312809e-03f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-2.685432954e-02f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(1.128359749e-01f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-3.761262691e-01f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(1.128379166e+00f));
  const __m512 erf_small = _mm512_mul_ps(z, p);

  const __m512 u =
      _mm512_mul_ps(_mm512_sub_ps(_mm512_min_ps(z, _mm512_set1_ps(5.0f)), _mm512_set1_ps(3.0f)),
                    _mm512_set1_ps(0.5f));
  __m512 g = _mm512_set1_ps(-5.645019488e-05f);
  g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(2.880524198e-04f));
  g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(-9.276584584e-04f));
  g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(2.749866140e-03f));
  g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(-7.853924967e-03f));
  g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(2.165459821e-02f));
  g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(-5.929669629e-02f));
  g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(1.704230002e-01f));
  g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(-6.075072967e-01f));
  g = _mm512_fmadd_ps(g, u, _mm512_set1_ps(-1.720363041e+00f));
  const __m512 erfc_large = Exp(_mm512_sub_ps(g, s));

  const __m512 half = _mm512_set1_ps(0.5f);
  const __mmask16 small = _mm512_cmp_ps_mask(z, _mm512_set1_ps(1.0f), _CMP_LT_OQ);
  const __mmask16 negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  // The tail mass t = Phi(-|x|): (1 - erf) / 2 when small, erfc / 2 when large.
  __m512 tail = _mm512_mask_blend_ps(small, _mm512_mul_ps(half, erfc_large),
                                     _mm512_fnmadd_ps(half, erf_small, half));
  __m512 phi = _mm512_mask_blend_ps(negative, _mm512_sub_ps(_mm512_set1_ps(1.0f), tail), tail);
  return _mm512_mul_ps(x, phi);
}

// GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) = x / (1 + e^(-2y)).
inline __m512 GeluTanh(__m512 x) {
  const __m512 k = _mm512_set1_ps(0.79788456080286536f);
  __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
  __m512 y = _mm512_mul_ps(k, _mm512_fmadd_ps(_mm512_set1_ps(0.044715f), x3, x));
  __m512 e = Exp(_mm512_mul_ps(_mm512_set1_ps(-2.0f), y));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

inline __m512 Activate(ActivationKind kind, __m512 v) {
  switch (kind) {
    case ActivationKind::kGeluErf:
      return GeluErf(v);
    case ActivationKind::kGeluTanh:
      return GeluTanh(v);
    default:
      return v;
  }
}

inline __mmask16 TailMask(int count) {
  return count >= 16  ? static_cast<__mmask16>(0xffff)
         : count <= 0 ? static_cast<__mmask16>(0)
                      : static_cast<__mmask16>((1u << count) - 1);
}

// --- Packing ----------------------------------------------------------------------------------

// Rows [0, mc) x columns [0, kc) of A (row stride lda), times `scale`, into micro-panels
// [ceil(mc / kMr)][kc][kMr]; rows past mc are zero.
void PackA(const float* a, int lda, int mc, int kc, float scale, float* dst) {
  for (int i0 = 0; i0 < mc; i0 += kMr) {
    const int rows = Min(kMr, mc - i0);
    float* d = dst + static_cast<size_t>(i0) * kc;
    int k = 0;
    if (rows == kMr) {
      // 16 columns at a time: 14 row loads, then scattered into the [k][14] layout.
      const __m512 vs = _mm512_set1_ps(scale);
      for (; k + 16 <= kc; k += 16) {
        alignas(64) float tile[kMr][16];
        for (int r = 0; r < kMr; ++r) {
          _mm512_store_ps(
              tile[r],
              _mm512_mul_ps(_mm512_loadu_ps(a + static_cast<size_t>(i0 + r) * lda + k), vs));
        }
        for (int kk = 0; kk < 16; ++kk) {
          float* out = d + (k + kk) * kMr;
          for (int r = 0; r < kMr; ++r) out[r] = tile[r][kk];
        }
      }
    }
    for (; k < kc; ++k) {
      float* out = d + k * kMr;
      for (int r = 0; r < rows; ++r) out[r] = a[static_cast<size_t>(i0 + r) * lda + k] * scale;
      for (int r = rows; r < kMr; ++r) out[r] = 0;
    }
  }
}

// kc rows of a panel in its held type, widened to f32 (32 values per row).
void WidenPanel(const uint8_t* src, WeightType type, int kc, float* dst) {
  const size_t count = static_cast<size_t>(kc) * kNr;
  if (type == WeightType::kBF16) {
    const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
    for (size_t i = 0; i < count; i += 16) {
      __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
      __m512i w = _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
      _mm512_store_ps(dst + i, _mm512_castsi512_ps(w));
    }
  } else {  // kF16
    const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
    for (size_t i = 0; i < count; i += 16) {
      __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
      _mm512_store_ps(dst + i, _mm512_cvtph_ps(h));
    }
  }
}

size_t TypeBytes(WeightType type) { return type == WeightType::kF32 ? 4 : 2; }

// --- The register tile ------------------------------------------------------------------------

struct Epilogue {
  bool load_c;         // add to what C holds
  const float* bias;   // this panel's 32 bias values, or null
  ActivationKind act;  // applied to the final sum (last k block only)
};

// C[rows, cols] (+)= A_panel (kc x 14) . B_panel (kc x 32), then the epilogue.
void Tile(int kc, const float* __restrict a, const float* __restrict b, float* c, int ldc, int rows,
          int cols, const Epilogue& e) {
  __m512 acc[kMr][2];
#pragma GCC unroll 14
  for (int r = 0; r < kMr; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(b);
    const __m512 b1 = _mm512_load_ps(b + 16);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * kNr), _MM_HINT_T0);
#pragma GCC unroll 14
    for (int r = 0; r < kMr; ++r) {
      const __m512 av = _mm512_set1_ps(a[r]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
    a += kMr;
    b += kNr;
  }
  const __mmask16 m0 = TailMask(cols);
  const __mmask16 m1 = TailMask(cols - 16);
  const __m512 bias0 = e.bias ? _mm512_maskz_loadu_ps(m0, e.bias) : _mm512_setzero_ps();
  const __m512 bias1 = e.bias ? _mm512_maskz_loadu_ps(m1, e.bias + 16) : _mm512_setzero_ps();
#pragma GCC unroll 14
  for (int r = 0; r < kMr; ++r) {
    if (r < rows) {
      float* row = c + static_cast<size_t>(r) * ldc;
      __m512 v0 = _mm512_add_ps(acc[r][0], bias0);
      __m512 v1 = _mm512_add_ps(acc[r][1], bias1);
      if (e.load_c) {
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, row));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, row + 16));
      }
      if (e.act != ActivationKind::kNone) {
        v0 = Activate(e.act, v0);
        v1 = Activate(e.act, v1);
      }
      _mm512_mask_storeu_ps(row, m0, v0);
      _mm512_mask_storeu_ps(row + 16, m1, v1);
    }
  }
}

// --- The GEMM driver --------------------------------------------------------------------------

// B given as 32-column panels of `k_total` rows each: panel p starts at
// data + p * k_total * 32 elements of `type`.
struct PanelMatrix {
  const uint8_t* data;
  WeightType type;
  int k_total;
  int n;  // valid columns
};

struct GemmArgs {
  int m;
  const float* a;
  int lda;
  float a_scale;
  PanelMatrix b;
  const float* bias;
  float* c;
  int ldc;
  bool accumulate;
  ActivationKind act;
};

// Columns [p_begin * 32, min(p_end * 32, n)) of C.
void Gemm(const GemmArgs& g, int p_begin, int p_end, Scratch& scratch) {
  const int k_total = g.b.k_total;
  const size_t elem = TypeBytes(g.b.type);
  const int mc_max = Min(kMc, (g.m + kMr - 1) / kMr * kMr);
  float* apack = scratch.Floats(0, static_cast<size_t>(mc_max) * kKc);
  float* bwide =
      g.b.type == WeightType::kF32
          ? nullptr
          : scratch.Floats(1, static_cast<size_t>(Min(kNcPanels, p_end - p_begin)) * kKc * kNr);
  for (int jc = p_begin; jc < p_end; jc += kNcPanels) {
    const int np = Min(kNcPanels, p_end - jc);
    for (int pc = 0; pc < k_total; pc += kKc) {
      const int kc = Min(kKc, k_total - pc);
      const bool first = pc == 0;
      const bool last = pc + kc == k_total;
      // This block's panels as f32: in place, or widened once for all row blocks.
      if (bwide != nullptr) {
        for (int p = jc; p < jc + np; ++p) {
          WidenPanel(g.b.data + (static_cast<size_t>(p) * k_total + pc) * kNr * elem, g.b.type, kc,
                     bwide + static_cast<size_t>(p - jc) * kKc * kNr);
        }
      }
      for (int ic = 0; ic < g.m; ic += kMc) {
        const int mc = Min(kMc, g.m - ic);
        PackA(g.a + static_cast<size_t>(ic) * g.lda + pc, g.lda, mc, kc, g.a_scale, apack);
        for (int p = jc; p < jc + np; ++p) {
          const int col0 = p * kNr;
          const int cols = Min(kNr, g.b.n - col0);
          Epilogue e;
          e.load_c = g.accumulate || !first;
          e.bias = first && g.bias != nullptr ? g.bias + col0 : nullptr;
          e.act = last ? g.act : ActivationKind::kNone;
          const float* bp = bwide != nullptr ? bwide + static_cast<size_t>(p - jc) * kKc * kNr
                                             : reinterpret_cast<const float*>(g.b.data) +
                                                   (static_cast<size_t>(p) * k_total + pc) * kNr;
          for (int ir = 0; ir < mc; ir += kMr) {
            Tile(kc, apack + static_cast<size_t>(ir) * kc, bp,
                 g.c + static_cast<size_t>(ic + ir) * g.ldc + col0, g.ldc, Min(kMr, mc - ir), cols,
                 e);
          }
        }
      }
    }
  }
}

// --- Softmax ----------------------------------------------------------------------------------

// row[0:len] = softmax(row[0:len]).
void SoftmaxRow(float* row, int len) {
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  int j = 0;
  for (; j + 16 <= len; j += 16) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(row + j));
  if (j < len) {
    vmax = _mm512_max_ps(
        vmax, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), TailMask(len - j), row + j));
  }
  const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
  __m512 vsum = _mm512_setzero_ps();
  for (j = 0; j + 16 <= len; j += 16) {
    __m512 e = Exp(_mm512_sub_ps(_mm512_loadu_ps(row + j), mx));
    _mm512_storeu_ps(row + j, e);
    vsum = _mm512_add_ps(vsum, e);
  }
  if (j < len) {
    __mmask16 m = TailMask(len - j);
    __m512 e = _mm512_maskz_mov_ps(m, Exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + j), mx)));
    _mm512_mask_storeu_ps(row + j, m, e);
    vsum = _mm512_add_ps(vsum, e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(vsum));
  for (j = 0; j + 16 <= len; j += 16) {
    _mm512_storeu_ps(row + j, _mm512_mul_ps(_mm512_loadu_ps(row + j), inv));
  }
  if (j < len) {
    __mmask16 m = TailMask(len - j);
    _mm512_mask_storeu_ps(row + j, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + j), inv));
  }
}

// --- The backend ------------------------------------------------------------------------------

class Avx512 final : public Kernels {
 public:
  const char* name() const override { return "avx512"; }
  int column_block() const override { return kNr * 4; }

  bool panels() const override { return true; }

  void Linear(const LinearArgs& a, int n_begin, int n_end, Scratch& scratch) const override {
    GemmArgs g;
    g.m = a.m;
    g.a = a.a;
    g.lda = a.lda;
    g.a_scale = 1.0f;
    g.b = PanelMatrix{a.w->data.data(), a.w->type, a.w->k, Min(n_end, a.w->n)};
    g.bias = a.bias;
    g.c = a.c;
    g.ldc = a.ldc;
    g.accumulate = a.accumulate;
    g.act = a.activation;
    Gemm(g, n_begin / kNr, (n_end + kNr - 1) / kNr, scratch);
  }

  void Attention(const AttentionArgs& a, Scratch& scratch) const override {
    const int len = a.len;
    const int hd = a.head_dim;
    const int key_panels = (len + kNr - 1) / kNr;
    const int dim_panels = (hd + kNr - 1) / kNr;
    const int ld_s = key_panels * kNr;
    // k^T as panels of 32 keys: [panel][dim][32].
    float* kp = scratch.Floats(2, static_cast<size_t>(key_panels) * hd * kNr);
    for (int p = 0; p < key_panels; ++p) {
      float* dst = kp + static_cast<size_t>(p) * hd * kNr;
      for (int j = 0; j < kNr; ++j) {
        const int key = p * kNr + j;
        const float* src = a.k + static_cast<size_t>(key) * a.ld_qkv;
        for (int d = 0; d < hd; ++d) dst[d * kNr + j] = key < len ? src[d] : 0.0f;
      }
    }
    // v as panels of 32 dims: [panel][key][32].
    float* vp = scratch.Floats(3, static_cast<size_t>(dim_panels) * len * kNr);
    for (int p = 0; p < dim_panels; ++p) {
      const int cols = Min(kNr, hd - p * kNr);
      const __mmask16 m0 = TailMask(cols), m1 = TailMask(cols - 16);
      for (int key = 0; key < len; ++key) {
        const float* src = a.v + static_cast<size_t>(key) * a.ld_qkv + p * kNr;
        float* dst = vp + (static_cast<size_t>(p) * len + key) * kNr;
        _mm512_store_ps(dst, _mm512_maskz_loadu_ps(m0, src));
        _mm512_store_ps(dst + 16, _mm512_maskz_loadu_ps(m1, src + 16));
      }
    }
    const int block = kMr * 8;  // query rows per score block
    float* s = scratch.Floats(4, static_cast<size_t>(block) * ld_s);
    for (int q0 = 0; q0 < len; q0 += block) {
      const int rows = Min(block, len - q0);
      GemmArgs g1;
      g1.m = rows;
      g1.a = a.q + static_cast<size_t>(q0) * a.ld_qkv;
      g1.lda = a.ld_qkv;
      g1.a_scale = a.scale;
      g1.b = PanelMatrix{reinterpret_cast<const uint8_t*>(kp), WeightType::kF32, hd, len};
      g1.bias = nullptr;
      g1.c = s;
      g1.ldc = ld_s;
      g1.accumulate = false;
      g1.act = ActivationKind::kNone;
      Gemm(g1, 0, key_panels, scratch);
      for (int r = 0; r < rows; ++r) SoftmaxRow(s + static_cast<size_t>(r) * ld_s, len);
      GemmArgs g2;
      g2.m = rows;
      g2.a = s;
      g2.lda = ld_s;
      g2.a_scale = 1.0f;
      g2.b = PanelMatrix{reinterpret_cast<const uint8_t*>(vp), WeightType::kF32, len, hd};
      g2.bias = nullptr;
      g2.c = a.out + static_cast<size_t>(q0) * a.ld_out;
      g2.ldc = a.ld_out;
      g2.accumulate = false;
      g2.act = ActivationKind::kNone;
      Gemm(g2, 0, dim_panels, scratch);
    }
  }

  void Activate(ActivationKind kind, float* x, size_t count) const override {
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
      _mm512_storeu_ps(x + i, internal::Activate(kind, _mm512_loadu_ps(x + i)));
    }
    if (i < count) {
      __mmask16 m = TailMask(static_cast<int>(count - i));
      _mm512_mask_storeu_ps(x + i, m, internal::Activate(kind, _mm512_maskz_loadu_ps(m, x + i)));
    }
  }
};

}  // namespace

const Kernels& Avx512KernelsUnchecked() {
  static const Avx512 kernels;
  return kernels;
}

}  // namespace reel::vision::internal

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif
