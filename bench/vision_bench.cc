// The vision encoder at MiniMax-M3's full size (631M tower + 234M projector, random weights with
// the released names) on one 560x1008 frame pair (2,880 patches), against two baselines
// measured in the same run:
//   - OpenBLAS's own sgemm rate on this machine (cblas_sgemm, its own threads, the shapes of
//     the tower's MLP): Reel's achieved GFLOP/s as a fraction of it;
//   - the same model in PyTorch (tests/reference/m3_vision_reference.py --bench --serve: float32,
//     the same threads, kept loaded in a child): time ratio PyTorch / Reel.
// The machine may be shared: every baseline is measured again in each round (sgemm, each Reel
// backend, PyTorch, one after the other), ratios are taken per round, and the median over rounds
// is reported, with the load average.
// Also the peak memory of `reel encode` on that pair in a fresh process, against the weights.
//
//   vision_bench [--runs 3] [--threads N] [--width 1008 --height 560] [--backends avx512,openblas]
//                [--precision bf16|f32|f16] [--no-torch] [--no-memory] [--no-sizes]
//                [--weights DIR]
#include <cblas.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
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
  openblas_set_num_threads(1);  // as Reel keeps it (its openblas backend runs in between)
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

// A child process run through the shell, with a line-based pipe each way.
class Child {
 public:
  static std::unique_ptr<Child> Start(const std::string& command) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0) return nullptr;
    if (pipe(from_child) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return nullptr;
    }
    const pid_t pid = fork();
    if (pid < 0) return nullptr;
    if (pid == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[0]);
      close(to_child[1]);
      close(from_child[0]);
      close(from_child[1]);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    auto child = std::unique_ptr<Child>(new Child);
    child->pid_ = pid;
    child->in_ = fdopen(to_child[1], "w");
    child->out_ = fdopen(from_child[0], "r");
    return child;
  }
  ~Child() {
    if (in_ != nullptr) std::fclose(in_);  // EOF: the child ends
    if (out_ != nullptr) std::fclose(out_);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  void WriteLine(const std::string& line) {
    std::fprintf(in_, "%s\n", line.c_str());
    std::fflush(in_);
  }
  // The next line (without its '\n'); "" at the end of the output.
  std::string ReadLine() {
    std::string line;
    int c;
    while ((c = std::fgetc(out_)) != EOF && c != '\n') line += static_cast<char>(c);
    return line;
  }

 private:
  Child() = default;
  pid_t pid_ = -1;
  std::FILE* in_ = nullptr;
  std::FILE* out_ = nullptr;
};

// /proc/loadavg's three averages: a busy machine slows every figure of the run.
std::string LoadAverage() {
  std::string line = reel::bench::FirstLineOf("cat /proc/loadavg 2>/dev/null");
  std::stringstream in(line);
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c + " (1, 5, 15 min)";
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows when piped to a log
  Settings s;
  if (!ParseArgs(argc, argv, s)) return 2;
  using namespace reel::vision;
  const int patches = (s.width / 14) * (s.height / 14);
  if (s.sgemm_only) {  // the child that measures OpenBLAS with another core type
    std::printf("sgemm %.1f\n", (SgemmRate(patches, 5120, 1280, s.threads, s.runs) +
                                 SgemmRate(patches, 1280, 5120, s.threads, s.runs)) /
                                    2);
    return 0;
  }

  std::printf("machine: %s, %d CPUs available, AVX-512 %s, AVX-512 BF16 %s\n",
              reel::bench::CpuModel().c_str(), AvailableCpus(),
              internal::CpuHasAvx512() ? "yes" : "no", internal::CpuHasAvx512Bf16() ? "yes" : "no");
  std::printf("%s (%s build; Reel sets it to one thread and splits the work itself)\n",
              internal::BlasConfig(), internal::BlasThreading());
  std::printf("threads: %d, frame pair %dx%d, rounds %d, weights held in %s\n", s.threads, s.width,
              s.height, s.runs, s.precision.c_str());
  std::printf("load average at the start (other processes on this machine): %s\n",
              LoadAverage().c_str());

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

  std::vector<reel::pipeline::Image> frames = {NoiseFrame(s.width, s.height, 1),
                                               NoiseFrame(s.width, s.height, 2)};
  EncoderOptions options;
  options.threads = s.threads;
  options.precision = s.precision == "f32"   ? WeightPrecision::kF32
                      : s.precision == "f16" ? WeightPrecision::kF16
                                             : WeightPrecision::kBF16;
  struct Contender {
    std::string name;
    std::unique_ptr<VisionEncoder> encoder;
    double load = 0;
    std::vector<double> times;
  };
  std::vector<Contender> reels;
  for (const std::string& name : s.backends) {
    options.backend = name == "openblas" ? Backend::kOpenBlas : Backend::kAvx512;
    auto t0 = Clock::now();
    auto encoder = VisionEncoder::Load(s.weights, options);
    if (!encoder.ok()) {
      std::printf("%s: %s\n", name.c_str(), encoder.status().ToString().c_str());
      continue;
    }
    reels.push_back({name, std::move(*encoder), Seconds(t0), {}});
  }
  if (reels.empty()) return 1;
  const VisionModelConfig& config = reels.front().encoder->config();
  std::vector<const reel::pipeline::Image*> ptrs = {&frames[0], &frames[1]};
  auto input = PatchesFromFrames(ptrs, config);
  if (!input.ok()) return 1;
  const int segment = input->rows * input->cols;
  const Flops flops = CountFlops(config, segment, segment);

  // PyTorch stays loaded in a child and runs once per round (after Reel), so every round
  // compares runs made within a minute or two of each other.
  std::unique_ptr<Child> torch;
  std::string torch_command;
  if (s.torch) {
    torch_command =
        "/usr/bin/python3 " +
        reel::bench::ShellQuote(s.source_dir / "tests" / "reference" / "m3_vision_reference.py") +
        " --bench --serve --config full --threads " + std::to_string(s.threads) + " --width " +
        std::to_string(s.width) + " --height " + std::to_string(s.height);
    std::printf("baseline: PyTorch (%s) ...\n", torch_command.c_str());
    torch = Child::Start(torch_command);
    const std::string ready = torch ? torch->ReadLine() : "";
    if (ready.empty()) {
      std::printf("  PyTorch did not start\n");
      torch.reset();
    } else {
      std::printf("  %s\n", ready.c_str());
    }
  }

  // Rounds: OpenBLAS sgemm (as Debian ships it, and with its AVX-512 kernels forced), each Reel
  // backend, PyTorch.
  std::vector<double> sgemm, sgemm_avx512, torch_times;
  for (int r = 0; r < s.runs; ++r) {
    const double fc1 = SgemmRate(patches, 5120, 1280, s.threads, 3);
    const double fc2 = SgemmRate(patches, 1280, 5120, s.threads, 3);
    sgemm.push_back((fc1 + fc2) / 2);
    // OpenBLAS reads OPENBLAS_CORETYPE when it loads: a child process. Debian's 0.3.21 does not
    // recognise this CPU generation and picks its AVX2 "Haswell" kernels.
    const std::string out = reel::bench::OutputOf(
        "OPENBLAS_CORETYPE=SkylakeX " + reel::bench::ShellQuote(fs::absolute(argv[0]).string()) +
        " --sgemm-only --threads " + std::to_string(s.threads) + " --runs 3 --width " +
        std::to_string(s.width) + " --height " + std::to_string(s.height) +
        " 2>/dev/null | grep '^sgemm '");
    sgemm_avx512.push_back(out.size() > 6 ? std::atof(out.c_str() + 6) : 0);
    std::printf("round %d: sgemm %.1f GFLOP/s (AVX-512 kernels forced: %.1f)", r + 1, sgemm.back(),
                sgemm_avx512.back());
    for (Contender& c : reels) {
      auto t1 = Clock::now();
      auto encoded = c.encoder->Encode(*input);
      c.times.push_back(Seconds(t1));
      if (!encoded.ok()) {
        std::printf("\n%s\n", encoded.status().ToString().c_str());
        return 1;
      }
      std::printf("; reel %s %.2f s", c.name.c_str(), c.times.back());
    }
    if (torch) {
      torch->WriteLine("run");
      const std::string line = torch->ReadLine();  // {"seconds": x}
      const size_t colon = line.find(':');
      if (colon == std::string::npos) {
        std::printf("; PyTorch failed: %s", line.c_str());
        torch.reset();
      } else {
        torch_times.push_back(std::atof(line.c_str() + colon + 1));
        std::printf("; PyTorch %.2f s", torch_times.back());
      }
    }
    std::printf("; load %s\n", LoadAverage().c_str());
  }
  torch.reset();

  std::printf(
      "\nbaseline: OpenBLAS cblas_sgemm, %d threads, the MLP's shapes (%dx5120x1280, "
      "%dx1280x5120): median %.1f GFLOP/s; with its AVX-512 kernels forced: %.1f\n",
      s.threads, patches, patches, Median(sgemm), Median(sgemm_avx512));
  const Contender* fastest = &reels.front();
  for (const Contender& c : reels) {
    // Per round: Reel's rate against that round's sgemm rate; then the median over rounds.
    std::vector<double> share, share_avx512, vs_torch;
    for (size_t r = 0; r < c.times.size(); ++r) {
      const double rate = flops.total() / c.times[r] / 1e9;
      share.push_back(rate / sgemm[r]);
      if (sgemm_avx512[r] > 0) share_avx512.push_back(rate / sgemm_avx512[r]);
      if (r < torch_times.size()) vs_torch.push_back(torch_times[r] / c.times[r]);
    }
    const double t = Median(c.times);
    if (t < Median(fastest->times)) fastest = &c;
    const EncodeTimings where = c.encoder->LastTimings();
    std::printf("\nreel %s (%s): load %.1f s; encode median %.2f s (runs:", c.name.c_str(),
                c.encoder->Describe().c_str(), c.load, t);
    for (double x : c.times) std::printf(" %.2f", x);
    std::printf(")\n  %.2f TFLOP (linear %.2f, attention %.2f, projector %.2f): %.1f GFLOP/s\n",
                flops.total() / 1e12, flops.linear / 1e12, flops.attention / 1e12,
                flops.projector / 1e12, flops.total() / t / 1e9);
    std::printf("  = %.0f%% of the sgemm rate (median over rounds; rounds:", 100 * Median(share));
    for (double x : share) std::printf(" %.0f%%", 100 * x);
    std::printf(")\n");
    if (!share_avx512.empty()) {
      std::printf("  = %.0f%% of the sgemm rate with OpenBLAS's AVX-512 kernels forced (rounds:",
                  100 * Median(share_avx512));
      for (double x : share_avx512) std::printf(" %.0f%%", 100 * x);
      std::printf(")\n");
    }
    if (!vs_torch.empty()) {
      std::printf("  PyTorch / Reel = %.2fx (median over rounds; rounds:", Median(vs_torch));
      for (double x : vs_torch) std::printf(" %.2fx", x);
      std::printf(")\n");
    }
    std::printf(
        "  last run: patch embedding %.2f s, norms %.2f, qkv %.2f, rotary %.2f, attention "
        "%.2f, out_proj %.2f, mlp %.2f, pooling %.2f, projector %.2f\n",
        where.patch_embedding, where.norms, where.qkv, where.rotary, where.attention,
        where.out_proj, where.mlp, where.pooling, where.projector);
    std::printf(
        "  linear layers %.1f GFLOP/s, attention %.1f GFLOP/s, projector %.1f GFLOP/s\n",
        flops.linear / (where.patch_embedding + where.qkv + where.out_proj + where.mlp) / 1e9,
        flops.attention / where.attention / 1e9, flops.projector / where.projector / 1e9);
  }
  if (!torch_times.empty()) {
    std::printf("\nPyTorch (float32 weights, %d threads): median %.2f s (runs:", s.threads,
                Median(torch_times));
    for (double x : torch_times) std::printf(" %.2f", x);
    std::printf(")\n");
  }

  if (s.sizes) {
    // What features cost at smaller sizes (vision.max_pixels): the tower only, one pair.
    VisionEncoder& encoder = *fastest->encoder;
    std::printf("\nfeature sizes (reel %s, tower only, one frame pair of %dx%d):\n",
                fastest->name.c_str(), s.width, s.height);
    for (int64_t max_pixels : {12544, 50176, 200704, 602112}) {
      auto size = FeatureSize({s.width, s.height}, max_pixels, encoder.config());
      if (!size.ok()) continue;
      std::vector<reel::pipeline::Image> small = {NoiseFrame(size->width, size->height, 1),
                                                  NoiseFrame(size->width, size->height, 2)};
      std::vector<const reel::pipeline::Image*> p = {&small[0], &small[1]};
      auto in = PatchesFromFrames(p, encoder.config());
      if (!in.ok()) continue;
      EncodeRequest pooled_only;
      pooled_only.tokens = false;
      std::vector<double> ts;
      for (int r = 0; r < s.runs; ++r) {
        auto t1 = Clock::now();
        auto out = encoder.Encode(*in, pooled_only);
        ts.push_back(Seconds(t1));
        if (!out.ok()) return 1;
      }
      const int patches_per_pair = in->rows * in->cols;
      const Flops f = CountFlops(encoder.config(), patches_per_pair, patches_per_pair);
      std::printf("  max_pixels %7lld -> %4dx%-4d %5d patches: %.3f TFLOP, %.2f s per pair\n",
                  static_cast<long long>(max_pixels), size->width, size->height, patches_per_pair,
                  (f.linear + f.attention) / 1e12, Median(ts));
    }
  }
  reels.clear();  // free the weights before the memory measurement

  if (s.memory && fs::exists(s.reel)) {
    const fs::path image = fs::temp_directory_path() / "vision_bench_frame.png";
    if (!reel::pipeline::WriteImageFile(image, frames[0]).ok()) return 1;
    int code = 0;
    long peak = 0;
    double seconds = 0;
    // --max-pixels keeps the image at the bench's size (a still image's own limit, 451,584
    // pixels, would shrink 1008x560).
    std::vector<std::string> args = {
        s.reel.string(), "encode",
        "--weights",     s.weights.string(),
        "--threads",     std::to_string(s.threads),
        "--precision",   s.precision,
        "--max-pixels",  std::to_string(static_cast<int64_t>(s.width) * s.height),
        image.string()};
    std::printf("\n");
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
  std::printf("\nload average at the end: %s\n", LoadAverage().c_str());
  return 0;
}
