// Should the encoder use AVX-512 BF16 dot products (vdpbf16ps) instead of its f32 GEMM? One core,
// the tower's fc1 shape (2870 x 5120 x 1280: 2880 patches cut to whole 14-row tiles), weights in
// bf16 as the checkpoint holds them. Baselines in the same run: Reel's f32 kernel (the avx512
// backend's Linear, bf16-held weights) and OpenBLAS sgemm (one thread). Candidates, written here
// only to be measured:
//   bf16x1: activations rounded to bf16, one vdpbf16ps per pair of k (2 k per instruction);
//   bf16x2: activations split into hi + lo bf16 parts, two vdpbf16ps per pair of k.
// Prints GFLOP/s (2MNK / time, median of --runs) and the relative error of each result against
// a float64 product (max |error| / max |exact| over all outputs).
//
//   bf16_gemm_bench [--runs 3] [--m 2880 --n 5120 --k 1280]
#include <immintrin.h>

#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "bench/bench_util.h"
#include "vision/internal/kernels.h"

extern "C" void openblas_set_num_threads(int);

namespace {

using reel::bench::Clock;
using reel::bench::Median;
using reel::bench::Seconds;
using namespace reel::vision::internal;

constexpr int kMr = 14, kNr = 32, kKc = 512;  // kc in k; pairs of k per block: 256

uint16_t Bf16(float f) { return FloatToBf16(f); }

// W [n, k] -> per panel of 32 columns, per pair of k: 32 columns x 2 k as bf16 (one zmm per 16
// columns).
std::vector<uint16_t> PackPairs(const std::vector<float>& w, int n, int k) {
  const int panels = (n + kNr - 1) / kNr;
  std::vector<uint16_t> out(static_cast<size_t>(panels) * k * kNr);
  for (int p = 0; p < panels; ++p) {
    for (int kp = 0; kp < k / 2; ++kp) {
      uint16_t* d = out.data() + (static_cast<size_t>(p) * (k / 2) + kp) * kNr * 2;
      for (int j = 0; j < kNr; ++j) {
        const int col = p * kNr + j;
        d[2 * j] = col < n ? Bf16(w[static_cast<size_t>(col) * k + 2 * kp]) : 0;
        d[2 * j + 1] = col < n ? Bf16(w[static_cast<size_t>(col) * k + 2 * kp + 1]) : 0;
      }
    }
  }
  return out;
}

__attribute__((target("avx512f,avx512bw,avx512bf16"))) void Tile(int kpairs, const uint32_t* a,
                                                                 const uint16_t* b, float* c,
                                                                 int ldc, bool first) {
  __m512 acc[kMr][2];
  for (int r = 0; r < kMr; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int kp = 0; kp < kpairs; ++kp) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 32);
#pragma GCC unroll 14
    for (int r = 0; r < kMr; ++r) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
    }
    a += kMr;
    b += 64;
  }
  for (int r = 0; r < kMr; ++r) {
    float* row = c + static_cast<size_t>(r) * ldc;
    if (!first) {
      acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_loadu_ps(row));
      acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_loadu_ps(row + 16));
    }
    _mm512_storeu_ps(row, acc[r][0]);
    _mm512_storeu_ps(row + 16, acc[r][1]);
  }
}

// C = A W^T with A's values as bf16 (terms = 1), or as hi + lo bf16 parts (terms = 2).
// m a multiple of 14, n of 32, k of 2 (true for the shapes measured).
void GemmBf16(int m, int n, int k, const std::vector<float>& a, const std::vector<uint16_t>& wp,
              std::vector<float>& c, int terms) {
  std::vector<uint32_t> ap(static_cast<size_t>(kMr) * (kKc / 2) * 2 * terms);
  for (int pc = 0; pc < k; pc += kKc) {
    const int kc = std::min(kKc, k - pc);
    for (int i0 = 0; i0 < m; i0 += kMr) {
      // Pack 14 rows x kc of A as bf16 pairs: [term][kpair][row].
      for (int t = 0; t < terms; ++t) {
        for (int kp = 0; kp < kc / 2; ++kp) {
          for (int r = 0; r < kMr; ++r) {
            const float* row = a.data() + static_cast<size_t>(i0 + r) * k + pc + 2 * kp;
            uint16_t h[2];
            for (int q = 0; q < 2; ++q) {
              const uint16_t hi = Bf16(row[q]);
              h[q] = t == 0 ? hi : Bf16(row[q] - Bf16ToFloat(hi));
            }
            ap[(static_cast<size_t>(t) * (kc / 2) + kp) * kMr + r] = h[0] | uint32_t{h[1]} << 16;
          }
        }
      }
      for (int p = 0; p < n / kNr; ++p) {
        const uint16_t* bp = wp.data() + (static_cast<size_t>(p) * (k / 2) + pc / 2) * 64;
        float* cp = c.data() + static_cast<size_t>(i0) * n + p * kNr;
        for (int t = 0; t < terms; ++t) {
          Tile(kc / 2, ap.data() + static_cast<size_t>(t) * (kc / 2) * kMr, bp, cp, n,
               pc == 0 && t == 0);
        }
      }
    }
  }
}

double RelativeError(const std::vector<float>& got, const std::vector<double>& exact) {
  double diff = 0, ref = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    diff = std::max(diff, std::fabs(got[i] - exact[i]));
    ref = std::max(ref, std::fabs(exact[i]));
  }
  return diff / ref;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3, m = 2880, n = 5120, k = 1280;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (a == "--runs") runs = v;
    if (a == "--m") m = v;
    if (a == "--n") n = v;
    if (a == "--k") k = v;
  }
  // The candidate kernels have no edge handling: whole tiles only (2880 -> 2870 rows).
  m = std::max(kMr, m / kMr * kMr);
  n = std::max(kNr, n / kNr * kNr);
  k = std::max(2, k / 2 * 2);
  std::printf("machine: %s; AVX-512 %s, AVX-512 BF16 %s; one thread; C[%d,%d] = A[%d,%d] W^T\n",
              reel::bench::CpuModel().c_str(), CpuHasAvx512() ? "yes" : "no",
              CpuHasAvx512Bf16() ? "yes" : "no", m, n, m, k);
  const Kernels* avx512 = Avx512Kernels();
  if (avx512 == nullptr || !CpuHasAvx512Bf16()) {
    std::printf("this CPU lacks AVX-512 BF16: nothing to compare\n");
    return 0;
  }
  // Activations like a LayerNorm output; weights as the checkpoint has them (bf16 values).
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> a(static_cast<size_t>(m) * k), w(static_cast<size_t>(n) * k);
  for (float& v : a) v = normal(rng);
  for (float& v : w) v = Bf16ToFloat(Bf16(normal(rng) / std::sqrt(static_cast<float>(k))));
  // The exact product for a sample of rows (every 97th), in float64.
  std::vector<int> rows;
  for (int r = 0; r < m; r += 97) rows.push_back(r);
  std::vector<double> exact(rows.size() * n);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int q = 0; q < k; ++q) {
        s += static_cast<double>(a[static_cast<size_t>(rows[i]) * k + q]) *
             w[static_cast<size_t>(j) * k + q];
      }
      exact[i * n + j] = s;
    }
  }
  auto sample = [&](const std::vector<float>& c) {
    std::vector<float> out(rows.size() * n);
    for (size_t i = 0; i < rows.size(); ++i) {
      std::memcpy(out.data() + i * n, c.data() + static_cast<size_t>(rows[i]) * n, n * 4);
    }
    return out;
  };
  const double flops = 2.0 * m * n * k;
  std::vector<float> c(static_cast<size_t>(m) * n);
  auto time = [&](const char* name, auto&& fn) {
    fn();
    std::vector<double> t;
    for (int r = 0; r < runs; ++r) {
      auto t0 = Clock::now();
      fn();
      t.push_back(Seconds(t0));
    }
    const double gflops = flops / Median(t) / 1e9;
    std::printf("  %-44s %7.1f GFLOP/s   relative error %.1e\n", name, gflops,
                RelativeError(sample(c), exact));
    return gflops;
  };

  PackedWeights packed = AllocateWeights(*avx512, n, k, WeightType::kBF16);
  PackWeightRows(packed, 0, reinterpret_cast<const uint8_t*>(w.data()), reel::vision::DType::kF32,
                 n);
  Scratch scratch;
  LinearArgs args;
  args.m = m;
  args.a = a.data();
  args.lda = k;
  args.w = &packed;
  args.c = c.data();
  args.ldc = n;
  const double reel_f32 = time("Reel f32 kernel, bf16-held weights (baseline)",
                               [&] { avx512->Linear(args, 0, n, scratch); });
  openblas_set_num_threads(1);
  time("OpenBLAS sgemm, 1 thread (f32 weights)", [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a.data(), k, w.data(), k, 0,
                c.data(), n);
  });
  const std::vector<uint16_t> pairs = PackPairs(w, n, k);
  const double x1 =
      time("vdpbf16ps, activations rounded to bf16", [&] { GemmBf16(m, n, k, a, pairs, c, 1); });
  const double x2 =
      time("vdpbf16ps, activations as hi + lo bf16", [&] { GemmBf16(m, n, k, a, pairs, c, 2); });
  std::printf("ratio to Reel's f32 kernel: bf16x1 %.2fx, bf16x2 %.2fx\n", x1 / reel_f32,
              x2 / reel_f32);
  return 0;
}
