// The encoder's compute kernels, in two interchangeable backends (OpenBLAS; Reel's AVX-512 GEMM
// where the CPU has it); f32 arithmetic in both. Every kernel is single-threaded on the calling
// thread; the encoder splits work over its own pool.
// The backends and thread policy: vision/README.md, "Kernels".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "vision/safetensors.h"

namespace reel::vision::internal {

// How a weight matrix is held in memory.
enum class WeightType { kF32, kBF16, kF16 };

enum class ActivationKind { kNone, kGeluErf, kGeluTanh };

// 64-byte aligned storage.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  AlignedBuffer(AlignedBuffer&&) noexcept = default;
  AlignedBuffer& operator=(AlignedBuffer&&) noexcept = default;
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data_.get());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(data_.get());
  }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

// Per-thread scratch memory, grown on demand and reused.
class Scratch {
 public:
  // Slot `slot` (0-5) with room for `count` floats; earlier contents are not kept.
  float* Floats(int slot, size_t count);

 private:
  AlignedBuffer buffers_[6];  // slots: 0 packed A, 1 widened B, 2-4 attention
};

// A weight matrix W [n, k] (out x in, as checkpoints store linear weights), laid out for its
// backend: row-major for openblas, 32-column panels ([n / 32][k][32], zero-padded) for avx512.
struct PackedWeights {
  int n = 0;
  int k = 0;
  WeightType type = WeightType::kF32;
  bool panels = false;
  AlignedBuffer data;
  size_t bytes() const { return data.size(); }
};

// C[m, n_begin:n_end] = A[m, k] W[n_begin:n_end, :]^T (+ bias) -> activation, or with
// `accumulate`, C += A W^T (+ bias) (no activation then).
struct LinearArgs {
  int m = 0;
  const float* a = nullptr;
  int lda = 0;
  const PackedWeights* w = nullptr;
  const float* bias = nullptr;  // [n] or null
  float* c = nullptr;
  int ldc = 0;
  bool accumulate = false;
  ActivationKind activation = ActivationKind::kNone;
};

// One head of one attention segment: out = softmax(q k^T * scale) v over `len` tokens. Rows
// of q, k, v and out are `ld*` floats apart; head_dim values each.
struct AttentionArgs {
  int len = 0;
  int head_dim = 0;
  float scale = 1;
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int ld_qkv = 0;
  float* out = nullptr;
  int ld_out = 0;
};

class Kernels {
 public:
  virtual ~Kernels() = default;
  virtual const char* name() const = 0;
  // Columns of C a Linear call should cover per task (a multiple of the packing width).
  virtual int column_block() const = 0;
  // Whether this backend wants weights in 32-column panels (else row-major).
  virtual bool panels() const = 0;
  virtual void Linear(const LinearArgs& args, int n_begin, int n_end, Scratch& scratch) const = 0;
  virtual void Attention(const AttentionArgs& args, Scratch& scratch) const = 0;
  // In place on `count` values.
  virtual void Activate(ActivationKind kind, float* x, size_t count) const = 0;
};

// A zeroed W [n, k] of `type` in the layout `kernels` wants.
PackedWeights AllocateWeights(const Kernels& kernels, int n, int k, WeightType type);
// Fills rows [row0, row0 + rows) of `w` from `src`, `rows` x w.k values of `src_type` (F32, F16
// or BF16, row-major), rounding to nearest even where `w` is narrower.
void PackWeightRows(PackedWeights& w, int row0, const uint8_t* src, DType src_type, int rows);

// The portable backend (OpenBLAS).
const Kernels& OpenBlasKernels();
// The AVX-512 backend; null when this CPU lacks AVX-512F.
const Kernels* Avx512Kernels();
bool CpuHasAvx512();
bool CpuHasAvx512Bf16();

// Sets OpenBLAS to one thread (idempotent, thread-safe). Called before any kernel runs.
void SetSingleThreadedBlas();
// What OpenBLAS reports about itself ("OpenBLAS 0.3.21 ... Haswell", core name), and how the
// installed variant is threaded: "sequential", "pthreads" or "openmp" (Debian's
// libopenblas0-pthread, -openmp and -serial; SetSingleThreadedBlas covers all three).
const char* BlasConfig();
const char* BlasThreading();

// Scalar conversions (round to nearest even for narrowing; NaN kept).
float Bf16ToFloat(uint16_t v);
uint16_t FloatToBf16(float v);
float F16ToFloat(uint16_t v);
uint16_t FloatToF16(float v);
// Element `i` of a float tensor stored as `type` (F32, F16 or BF16).
float LoadAsFloat(const uint8_t* data, DType type, size_t i);

}  // namespace reel::vision::internal
