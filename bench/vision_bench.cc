// The vision encoder at MiniMax-M3's full size (631M tower + 234M projector, random weights with
// the released names) on one 560x1008 frame pair (2,880 patches), against two baselines
// measured in the same run:
//   - OpenBLAS's own sgemm rate on this machine (cblas_sgemm, its own threads, the shapes of
//     the tower's MLP): Reel's achieved GFLOP/s as a fraction of it;
//   - the same model in PyTorch (tests/reference/m3_vision_reference.py --bench: float32, the
//     same threads): time ratio PyTorch / Reel.
// Also the peak memory of `reel encode` on that pair in a fresh process, against the weights.
//
//   vision_bench [--runs 3] [--threads N] [--width 1008 --height 560] [--backends avx512,openblas]
//                [--precision bf16|f32|f16] [--no-torch] [--no-memory] [--no-sizes]
//                [--weights DIR]
#include <cblas.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "pipeline/image.h"
#include "pipeline/image_codec.h"
#include "vision/encoder.h"
#include "vision/internal/kernels.h"
#include "vision/preprocess.h"
#include "vision/test_weights.h"

extern "C" void openblas_set_num_threads(int);

namespace fs = std::filesystem;
using reel::bench::Clock;
using reel::bench::Median;
using reel::bench::Seconds;

namespace {

struct Settings {
  int runs = 3;
  int threads = 0;
  int width = 1008;
  int height = 560;
  std::vector<std::string> backends = {"avx512", "openblas"};
  std::string precision = "bf16";
  bool torch = true;
  bool memory = true;
  bool sizes = true;
  bool sgemm_only = false;
  fs::path weights;
  fs::path source_dir = REEL_SOURCE_DIR;
  fs::path reel;
};

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool ParseArgs(int argc, char** argv, Settings& s) {
  const fs::path build = fs::absolute(fs::path(argv[0])).parent_path().parent_path();
  s.weights = build / "bench-media" / "m3_full_random";
  s.reel = build / "jobs" / "reel";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--runs" && next) {
      s.runs = std::atoi(argv[++i]);
    } else if (a == "--threads" && next) {
      s.threads = std::atoi(argv[++i]);
    } else if (a == "--width" && next) {
      s.width = std::atoi(argv[++i]);
    } else if (a == "--height" && next) {
      s.height = std::atoi(argv[++i]);
    } else if (a == "--backends" && next) {
      s.backends = Split(argv[++i]);
    } else if (a == "--precision" && next) {
      s.precision = argv[++i];
    } else if (a == "--weights" && next) {
      s.weights = argv[++i];
    } else if (a == "--no-torch") {
      s.torch = false;
    } else if (a == "--no-memory") {
      s.memory = false;
    } else if (a == "--no-sizes") {
      s.sizes = false;
    } else if (a == "--sgemm-only") {
      s.sgemm_only = true;
    } else {
      std::fprintf(stderr,
                   "usage: vision_bench [--runs N] [--threads N] [--width W --height H]\n"
                   "       [--backends avx512,openblas] [--precision bf16|f32|f16]\n"
                   "       [--weights DIR] [--no-torch] [--no-memory] [--no-sizes]\n");
      return false;
    }
  }
  if (s.threads <= 0) s.threads = reel::vision::AvailableCpus();
  return true;
}

// FLOPs of one encode of `patches` patches in segments of `segment_len` (multiply-add = 2).
struct Flops {
  double linear = 0, attention = 0, projector = 0;
  double total() const { return linear + attention + projector; }
};

Flops CountFlops(const reel::vision::VisionModelConfig& c, int patches, int segment_len) {
  const double n = patches, d = c.hidden_size, f = c.intermediate_size;
  Flops out;
  out.linear = 2 * n * c.patch_values() * d + c.num_layers * 2 * n * (4 * d * d + 2 * d * f);
  out.attention = c.num_layers * 4.0 * n * segment_len * d;  // q k^T and p v, all heads
  const double ph = c.projector_hidden_size, th = c.text_hidden_size;
  const double windows = n / c.merge_window();
  out.projector = 2 * n * (d * ph + ph * th) + 2 * windows * (c.merge_window() * th * ph + ph * th);
  return out;
}

// OpenBLAS sgemm with its own `threads` threads on C[m,n] = A[m,k] B[n,k]^T: GFLOP/s (median).
double SgemmRate(int m, int n, int k, int threads, int runs) {
  openblas_set_num_threads(threads);
  std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(n) * k),
      c(static_cast<size_t>(m) * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a.data(), k, b.data(), k, 0,
              c.data(), n);
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a.data(), k, b.data(), k, 0,
                c.data(), n);
    times.push_back(Seconds(t0));
  }
  return 2.0 * m * n * k / Median(times) / 1e9;
}

reel::pipeline::Image NoiseFrame(int width, int height, int seed) {
  reel::pipeline::Image image = reel::pipeline::MakeImage(width, height);
  std::mt19937 rng(seed);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = image.row(y) + 3 * x;
      p[0] = static_cast<uint8_t>(x * 255 / width);
      p[1] = static_cast<uint8_t>(y * 255 / height);
      p[2] = static_cast<uint8_t>(rng() & 0xff);
    }
  }
  return image;
}

// Runs `argv` in a child; its exit code and peak resident memory (bytes).
bool RunMeasured(const std::vector<std::string>& args, int* code, long* peak_bytes,
                 double* seconds) {
  auto t0 = Clock::now();
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) < 0) return false;
  *seconds = Seconds(t0);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  *peak_bytes = usage.ru_maxrss * 1024L;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows when piped to a log
  Settings s;
  if (!ParseArgs(argc, argv, s)) return 2;
  using namespace reel::vision;
  if (s.sgemm_only) {  // the child that measures OpenBLAS with another core type
    const int n = (s.width / 14) * (s.height / 14);
    std::printf("sgemm %.1f\n", (SgemmRate(n, 5120, 1280, s.threads, s.runs) +
                                 SgemmRate(n, 1280, 5120, s.threads, s.runs)) /
                                    2);
    return 0;
  }

  std::printf("machine: %s, %d CPUs available, AVX-512 %s, AVX-512 BF16 %s\n",
              reel::bench::CpuModel().c_str(), AvailableCpus(),
              internal::CpuHasAvx512() ? "yes" : "no", internal::CpuHasAvx512Bf16() ? "yes" : "no");
  std::printf("%s (%s build; Reel sets it to one thread and splits the work itself)\n",
              internal::BlasConfig(), internal::BlasThreading());
  std::printf("threads: %d, frame pair %dx%d, runs %d, weights held in %s\n", s.threads, s.width,
              s.height, s.runs, s.precision.c_str());

  if (!fs::exists(s.weights / "model.safetensors")) {
    std::printf("writing a random full-size checkpoint to %s ...\n", s.weights.c_str());
    auto t0 = Clock::now();
    reel::Status st = WriteRandomCheckpoint(s.weights, VisionModelConfig(), 1);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
    std::printf("  done in %.1f s\n", Seconds(t0));
  }

  // Baseline 1: OpenBLAS sgemm on the tower's MLP shapes, its own threads.
  const int patches = (s.width / 14) * (s.height / 14) * 1;
  const double rate_fc1 = SgemmRate(patches, 5120, 1280, s.threads, s.runs);
  const double rate_fc2 = SgemmRate(patches, 1280, 5120, s.threads, s.runs);
  const double sgemm = (rate_fc1 + rate_fc2) / 2;

  std::printf(
      "\nbaseline: OpenBLAS cblas_sgemm, %d threads: %.1f GFLOP/s (%dx5120x1280: %.1f, "
      "%dx1280x5120: %.1f)\n",
      s.threads, sgemm, patches, rate_fc1, patches, rate_fc2);

  {
    // The same with OpenBLAS's AVX-512 kernels forced (Debian's 0.3.21 does not recognise this
    // CPU generation and picks its AVX2 "Haswell" kernels): a child process, as OpenBLAS reads
    // OPENBLAS_CORETYPE when it loads.
    const std::string out = reel::bench::OutputOf(
        "OPENBLAS_CORETYPE=SkylakeX " + reel::bench::ShellQuote(fs::absolute(argv[0]).string()) +
        " --sgemm-only --threads " + std::to_string(s.threads) + " --runs " +
        std::to_string(s.runs) + " --width " + std::to_string(s.width) + " --height " +
        std::to_string(s.height) + " 2>/dev/null | grep '^sgemm '");
    if (out.size() > 6) {
      std::printf(
          "reference: the same with OPENBLAS_CORETYPE=SkylakeX (AVX-512 kernels): %.1f "
          "GFLOP/s\n",
          std::atof(out.c_str() + 6));
    }
  }

  std::vector<reel::pipeline::Image> frames = {NoiseFrame(s.width, s.height, 1),
                                               NoiseFrame(s.width, s.height, 2)};
  EncoderOptions options;
  options.threads = s.threads;
  options.precision = s.precision == "f32"   ? WeightPrecision::kF32
                      : s.precision == "f16" ? WeightPrecision::kF16
                                             : WeightPrecision::kBF16;
  double best_reel = 0;
  for (const std::string& name : s.backends) {
    options.backend = name == "openblas" ? Backend::kOpenBlas : Backend::kAvx512;
    auto t0 = Clock::now();
    auto encoder = VisionEncoder::Load(s.weights, options);
    if (!encoder.ok()) {
      std::printf("%s: %s\n", name.c_str(), encoder.status().ToString().c_str());
      continue;
    }
    const double load = Seconds(t0);
    std::vector<const reel::pipeline::Image*> ptrs = {&frames[0], &frames[1]};
    auto input = PatchesFromFrames(ptrs, (*encoder)->config());
    if (!input.ok()) return 1;
    const int segment = input->rows * input->cols;
    const Flops flops = CountFlops((*encoder)->config(), segment, segment);
    std::vector<double> times;
    for (int r = 0; r < s.runs; ++r) {
      auto t1 = Clock::now();
      auto out = (*encoder)->Encode(*input);
      times.push_back(Seconds(t1));
      if (!out.ok()) {
        std::printf("%s\n", out.status().ToString().c_str());
        return 1;
      }
    }
    const double t = Median(times);
    const double gflops = flops.total() / t / 1e9;
    const EncodeTimings where = (*encoder)->LastTimings();
    if (best_reel == 0 || t < best_reel) best_reel = t;
    std::printf("\nreel %s (%s): load %.1f s; encode median %.2f s (runs:", name.c_str(),
                (*encoder)->Describe().c_str(), load, t);
    for (double x : times) std::printf(" %.2f", x);
    std::printf(
        ")\n  %.2f TFLOP (linear %.2f, attention %.2f, projector %.2f): %.1f GFLOP/s = "
        "%.0f%% of the sgemm rate\n",
        flops.total() / 1e12, flops.linear / 1e12, flops.attention / 1e12, flops.projector / 1e12,
        gflops, 100 * gflops / sgemm);
    std::printf(
        "  last run: patch embedding %.2f s, norms %.2f, qkv %.2f, rotary %.2f, attention "
        "%.2f, out_proj %.2f, mlp %.2f, pooling %.2f, projector %.2f\n",
        where.patch_embedding, where.norms, where.qkv, where.rotary, where.attention,
        where.out_proj, where.mlp, where.pooling, where.projector);
    std::printf(
        "  linear layers %.1f GFLOP/s, attention %.1f GFLOP/s, projector %.1f GFLOP/s\n",
        flops.linear / (where.patch_embedding + where.qkv + where.out_proj + where.mlp) / 1e9,
        flops.attention / where.attention / 1e9, flops.projector / where.projector / 1e9);
    if (s.sizes && name == s.backends.front()) {
      // What features cost at smaller sizes (vision.max_pixels): the tower only, one pair.
      std::printf("  feature sizes (tower only, one frame pair of %dx%d):\n", s.width, s.height);
      for (int64_t max_pixels : {12544, 50176, 200704, 602112}) {
        auto size = FeatureSize({s.width, s.height}, max_pixels, (*encoder)->config());
        if (!size.ok()) continue;
        std::vector<reel::pipeline::Image> small = {NoiseFrame(size->width, size->height, 1),
                                                    NoiseFrame(size->width, size->height, 2)};
        std::vector<const reel::pipeline::Image*> p = {&small[0], &small[1]};
        auto in = PatchesFromFrames(p, (*encoder)->config());
        if (!in.ok()) continue;
        EncodeRequest pooled_only;
        pooled_only.tokens = false;
        std::vector<double> ts;
        for (int r = 0; r < s.runs; ++r) {
          auto t1 = Clock::now();
          auto out = (*encoder)->Encode(*in, pooled_only);
          ts.push_back(Seconds(t1));
          if (!out.ok()) return 1;
        }
        const int patches_per_pair = in->rows * in->cols;
        const Flops f = CountFlops((*encoder)->config(), patches_per_pair, patches_per_pair);
        std::printf("    max_pixels %7lld -> %4dx%-4d %5d patches: %.3f TFLOP, %.2f s per pair\n",
                    static_cast<long long>(max_pixels), size->width, size->height, patches_per_pair,
                    (f.linear + f.attention) / 1e12, Median(ts));
      }
    }
  }

  if (s.torch) {
    const std::string command =
        "/usr/bin/python3 " +
        reel::bench::ShellQuote(s.source_dir / "tests" / "reference" / "m3_vision_reference.py") +
        " --bench --config full --threads " + std::to_string(s.threads) + " --width " +
        std::to_string(s.width) + " --height " + std::to_string(s.height) + " --runs " +
        std::to_string(s.runs);
    std::printf("\nbaseline: PyTorch (%s) ...\n", command.c_str());
    std::string out = reel::bench::OutputOf(command + " 2>&1");
    std::printf("  %s", out.c_str());
    // {"seconds": [a, b, c], ...}
    std::vector<double> times;
    size_t at = out.find('[');
    size_t end = out.find(']');
    if (at != std::string::npos && end != std::string::npos) {
      std::stringstream list(out.substr(at + 1, end - at - 1));
      std::string item;
      while (std::getline(list, item, ',')) times.push_back(std::atof(item.c_str()));
    }
    if (!times.empty() && best_reel > 0) {
      std::printf("  PyTorch median %.2f s; ratio PyTorch / Reel = %.2fx\n", Median(times),
                  Median(times) / best_reel);
    }
  }

  if (s.memory && fs::exists(s.reel)) {
    const fs::path image = fs::temp_directory_path() / "vision_bench_frame.png";
    if (!reel::pipeline::WriteImageFile(image, frames[0]).ok()) return 1;
    int code = 0;
    long peak = 0;
    double seconds = 0;
    std::vector<std::string> args = {s.reel.string(),    "encode",    "--weights",
                                     s.weights.string(), "--threads", std::to_string(s.threads),
                                     "--precision",      s.precision, image.string()};
    if (RunMeasured(args, &code, &peak, &seconds)) {
      auto encoder = VisionEncoder::Load(s.weights, options);
      const double weights = encoder.ok() ? (*encoder)->weight_bytes() : 0;
      std::printf(
          "\npeak memory of `reel encode` on one %dx%d image (a pair of itself), exit %d, "
          "%.1f s: %.2f GiB = weights %.2f GiB + %.2f GiB\n",
          s.width, s.height, code, seconds, peak / 1073741824.0, weights / 1073741824.0,
          (peak - weights) / 1073741824.0);
    }
    fs::remove(image);
  }
  return 0;
}
