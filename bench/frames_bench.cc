// Frame sampling against the ffmpeg command line, measured in the same run on the same machine.
//
// Each case runs Reel (SampleVideo + WriteImageFile, the same work as `reel frames`) and the
// ffmpeg command line that produces the same JPEGs at the same size, alternating the two, and
// prints the median wall-clock time of each and the ratio ffmpeg / Reel (above 1: Reel is faster).
// The input is a 5-minute 1080p30 H.264 video generated once with the x264 defaults and cached
// (see bench/README.md). Both sides use the default decoder threads (one per core).
//
// Usage: frames_bench [--media-dir DIR] [--runs N] [--cases dense,sparse,keyframes]
//                     [--breakdown] [--keep-output] [--reel-only]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "bench/bench_util.h"
#include "pipeline/frame_index.h"
#include "pipeline/frame_sampler.h"
#include "pipeline/image_codec.h"

namespace {

namespace fs = std::filesystem;
using reel::Status;
using reel::bench::Clock;
using reel::bench::CpuModel;
using reel::bench::FirstLineOf;
using reel::bench::Median;
using reel::bench::Seconds;
using reel::pipeline::SampledFrame;
using reel::pipeline::SampleOptions;
using reel::pipeline::SampleReport;
using reel::pipeline::SamplingPolicy;

constexpr int kJpegQuality = 90;  // Reel's default for `reel frames`
constexpr int kSparseCount = 32;
constexpr char kVideoName[] = "testsrc2_1080p30_300s_g250.mp4";

std::string Join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    const bool quote = a.find_first_of(" '()*,\\") != std::string::npos;
    if (quote) out += '\'';
    out += a;
    if (quote) out += '\'';
  }
  return out;
}

double CpuSeconds(const rusage& u) {
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU time (user + system, all threads) this process has used so far.
double SelfCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return CpuSeconds(u);
}

// Runs a command (no shell) with stdin, stdout and stderr on /dev/null; returns its exit status,
// or -1 when it could not be started or was killed. Adds the child's CPU time to `cpu_s`.
int RunCommand(const std::vector<std::string>& argv, double* cpu_s = nullptr) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (std::freopen("/dev/null", "r", stdin) == nullptr ||
        std::freopen("/dev/null", "w", stdout) == nullptr ||
        std::freopen("/dev/null", "w", stderr) == nullptr) {
      _exit(126);
    }
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return -1;
  if (cpu_s) *cpu_s += CpuSeconds(usage);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int CountFiles(const fs::path& dir) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) n += entry.is_regular_file() ? 1 : 0;
  return n;
}

// An empty output directory, recreated for every run (the clearing is not timed).
fs::path FreshDir(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Generates the benchmark video once: x264 defaults (preset medium: B-frames, b-pyramid, CRF 23)
// with a keyframe every 250 frames, from testsrc2 with light temporal noise so that it is not
// trivially compressible. Takes ~10 minutes on 2 cores.
bool EnsureVideo(const fs::path& video) {
  if (fs::exists(video)) return true;
  fs::create_directories(video.parent_path());
  fs::path tmp = video.parent_path() / (".tmp_" + video.filename().string());
  std::vector<std::string> argv = {"ffmpeg",   "-hide_banner",
                                   "-nostdin", "-y",
                                   "-f",       "lavfi",
                                   "-i",       "testsrc2=s=1920x1080:r=30:d=300",
                                   "-vf",      "noise=alls=6:allf=t,format=yuv420p",
                                   "-c:v",     "libx264",
                                   "-preset",  "medium",
                                   "-g",       "250",
                                   "-threads", "2",
                                   "-an",      tmp.string()};
  std::printf("generating %s (once; several minutes):\n  %s\n", video.c_str(), Join(argv).c_str());
  std::fflush(stdout);
  if (RunCommand(argv) != 0) {
    std::fprintf(stderr, "frames_bench: generating the video failed: %s\n", Join(argv).c_str());
    return false;
  }
  fs::rename(tmp, video);
  return true;
}

// Where Reel spends its time in the sink, for the breakdown.
struct SinkTimes {
  double encode_s = 0;
  double write_s = 0;
};

struct ReelRun {
  double seconds = 0;
  double cpu_s = 0;
  SampleReport report;
  std::vector<int> source_frames;  // in sample order
  std::vector<double> times_s;     // seconds from the first frame, in sample order
  SinkTimes sink;
};

// Reel's side: sample and write each frame as a JPEG, as `reel frames` does. With `split`, the
// sink times JPEG encoding and the file write separately (same work, two calls).
bool RunReel(const std::string& video, const SampleOptions& options, const fs::path& out_dir,
             bool split, ReelRun& run) {
  run = ReelRun();
  std::vector<std::pair<int, double>> frames;
  auto sink = [&](SampledFrame&& frame) -> Status {
    char name[32];
    std::snprintf(name, sizeof(name), "frame_%06d.jpg", frame.index);
    std::string path = (out_dir / name).string();
    frames.push_back({frame.source_frame, frame.time_s});
    if (!split) return reel::pipeline::WriteImageFile(path, frame.image, kJpegQuality);
    Clock::time_point start = Clock::now();
    auto bytes = reel::pipeline::EncodeJpeg(frame.image, kJpegQuality);
    if (!bytes.ok()) return bytes.status();
    run.sink.encode_s += Seconds(start);
    start = Clock::now();
    Status written = reel::WriteFileAtomically(
        path, std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    run.sink.write_s += Seconds(start);
    return written;
  };
  Clock::time_point start = Clock::now();
  const double cpu_start = SelfCpuSeconds();
  auto report = reel::pipeline::SampleVideo(video, options, sink);
  run.seconds = Seconds(start);
  run.cpu_s = SelfCpuSeconds() - cpu_start;
  if (!report.ok()) {
    std::fprintf(stderr, "frames_bench: reel failed: %s\n", report.status().ToString().c_str());
    return false;
  }
  run.report = *report;
  std::sort(frames.begin(), frames.end());
  for (auto& [f, t] : frames) {
    run.source_frames.push_back(f);
    run.times_s.push_back(t);
  }
  return true;
}

// One ffmpeg baseline: a list of command lines run one after the other (the output directory is
// substituted for "@OUT@" in each argument).
struct Baseline {
  std::string name;
  std::vector<std::vector<std::string>> commands;
};

bool RunBaseline(const Baseline& baseline, const fs::path& out_dir, double& seconds,
                 double& cpu_s) {
  std::vector<std::vector<std::string>> commands = baseline.commands;
  for (auto& argv : commands) {
    for (std::string& a : argv) {
      if (size_t at = a.find("@OUT@"); at != std::string::npos) a.replace(at, 5, out_dir.string());
    }
  }
  Clock::time_point start = Clock::now();
  cpu_s = 0;
  for (const auto& argv : commands) {
    if (RunCommand(argv, &cpu_s) != 0) {
      std::fprintf(stderr, "frames_bench: failed: %s\n", Join(argv).c_str());
      return false;
    }
  }
  seconds = Seconds(start);
  return true;
}

std::vector<std::string> FfmpegPrefix() {
  return {"ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y"};
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct Case {
  std::string name;
  std::string reel_label;  // what Reel's side does, for the printout
  SampleOptions options;
  double target = 1.0;  // required ffmpeg/Reel ratio
  std::string target_text;
  int frame_tolerance = 0;  // allowed difference in frame counts (documented per case)
  // Builds the baselines once Reel's frame choice is known (the sparse case reuses it).
  std::function<std::vector<Baseline>(const ReelRun& first)> baselines;
};

struct Settings {
  fs::path media_dir;
  int runs = 3;
  std::vector<std::string> cases = {"dense", "sparse", "keyframes"};
  bool breakdown = false;
  bool keep_output = false;
  bool reel_only = false;  // one Reel run per case, no baselines: for profilers (perf record)
};

void PrintUsage() {
  std::printf(
      "usage: frames_bench [--media-dir DIR] [--runs N] [--cases dense,sparse,keyframes]\n"
      "                    [--breakdown] [--keep-output] [--reel-only]\n"
      "  --media-dir DIR  where the generated video is cached (default: <build>/bench-media)\n"
      "  --runs N         timed runs per side, alternating Reel and ffmpeg; median reported (3)\n"
      "  --cases LIST     which cases to run (default: all three)\n"
      "  --breakdown      also time Reel's stages: index pass, JPEG encode, file write\n"
      "  --keep-output    keep the last run's JPEGs under <media-dir>/out\n"
      "  --reel-only      one Reel run per case and no ffmpeg, to profile Reel (perf record)\n");
}

bool ParseArgs(int argc, char** argv, Settings& s) {
  // Default media dir: <build>/bench-media, the executable being <build>/bench/frames_bench.
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  s.media_dir = ec ? fs::path("bench-media") : exe.parent_path().parent_path() / "bench-media";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      PrintUsage();
      std::exit(0);
    } else if (a == "--media-dir") {
      const char* v = next();
      if (!v) return false;
      s.media_dir = v;
    } else if (a == "--runs") {
      const char* v = next();
      if (!v || (s.runs = std::atoi(v)) < 1) return false;
    } else if (a == "--cases") {
      const char* v = next();
      if (!v) return false;
      s.cases.clear();
      std::stringstream list(v);
      for (std::string c; std::getline(list, c, ',');) s.cases.push_back(c);
    } else if (a == "--breakdown") {
      s.breakdown = true;
    } else if (a == "--reel-only") {
      s.reel_only = true;
    } else if (a == "--keep-output") {
      s.keep_output = true;
    } else {
      return false;
    }
  }
  return true;
}

std::vector<Case> MakeCases(const std::string& video) {
  const std::string scale = "scale=1008:560:flags=bicubic";
  std::vector<Case> cases;

  Case dense;
  dense.name = "dense_fps1";
  dense.reel_label = "--fps 1 (M3 rule)";
  dense.options.sampling.policy = SamplingPolicy::kFps;
  dense.options.sampling.fps = 1.0;
  dense.target = 1.5;
  dense.target_text = ">= 1.5x";
  // ffmpeg's fps filter stops at t=299 s; M3's rule also keeps the last frame (301 in all).
  dense.frame_tolerance = 1;
  dense.baselines = [=](const ReelRun&) {
    return std::vector<Baseline>{{"ffmpeg -vf fps=1,scale",
                                  {Concat(FfmpegPrefix(), {"-i", video, "-vf", "fps=1," + scale,
                                                           "-q:v", "2", "@OUT@/%04d.jpg"})}}};
  };
  cases.push_back(dense);

  Case sparse;
  sparse.name = "sparse_count32";
  sparse.reel_label = "--count 32";
  sparse.options.sampling.policy = SamplingPolicy::kCount;
  sparse.options.sampling.count = kSparseCount;
  sparse.target = 3.0;
  sparse.target_text = ">= 3x";
  sparse.baselines = [=](const ReelRun& first) {
    // (a) one process, a select filter naming Reel's 32 frames: decodes every frame.
    std::string expr;
    for (int f : first.source_frames) {
      expr += (expr.empty() ? "" : "+") + std::string("eq(n\\,") + std::to_string(f) + ")";
    }
    Baseline select{
        "ffmpeg -vf select (1 process)",
        {Concat(FfmpegPrefix(), {"-i", video, "-vf", "select=" + expr + "," + scale, "-fps_mode",
                                 "passthrough", "-q:v", "2", "@OUT@/%04d.jpg"})}};
    // (b) one process per frame with input seeking (-ss before -i: seek to the keyframe, decode
    // up to the time). Half a frame early so rounding cannot skip the frame.
    Baseline seeks{"ffmpeg -ss T -i x32 (32 processes)", {}};
    const double half_frame = 0.5 / 30.0;
    for (size_t i = 0; i < first.times_s.size(); ++i) {
      char t[32], name[32];
      std::snprintf(t, sizeof(t), "%.6f", std::max(0.0, first.times_s[i] - half_frame));
      std::snprintf(name, sizeof(name), "@OUT@/%04zu.jpg", i + 1);
      seeks.commands.push_back(Concat(FfmpegPrefix(), {"-ss", t, "-i", video, "-frames:v", "1",
                                                       "-vf", scale, "-q:v", "2", name}));
    }
    return std::vector<Baseline>{select, seeks};
  };
  cases.push_back(sparse);

  Case keyframes;
  keyframes.name = "keyframes";
  keyframes.reel_label = "--keyframes";
  keyframes.options.sampling.policy = SamplingPolicy::kKeyframes;
  keyframes.target = 1.0 / 1.2;
  keyframes.target_text = ">= 0.83x, i.e. within 1.2x";
  keyframes.baselines = [=](const ReelRun&) {
    return std::vector<Baseline>{
        {"ffmpeg -skip_frame nokey",
         {Concat(FfmpegPrefix(), {"-skip_frame", "nokey", "-i", video, "-vf", scale, "-fps_mode",
                                  "passthrough", "-q:v", "2", "@OUT@/%04d.jpg"})}}};
  };
  cases.push_back(keyframes);
  return cases;
}

// Runs one case: a warm-up Reel run (its frame choice feeds the baselines), then `runs` rounds
// of Reel followed by each baseline. Returns false on a failure or a frame-count mismatch.
bool RunCase(const Case& c, const std::string& video, const Settings& s) {
  fs::path reel_out = s.media_dir / "out" / c.name / "reel";
  fs::path ffmpeg_out = s.media_dir / "out" / c.name / "ffmpeg";
  ReelRun first;
  if (!RunReel(video, c.options, FreshDir(reel_out), false, first)) return false;
  if (s.reel_only) {
    std::printf("%s: reel %.2f s (cpu %.2f s), %zu frames, packets_decoded %d, seeks %d\n",
                c.name.c_str(), first.seconds, first.cpu_s, first.source_frames.size(),
                first.report.packets_decoded, first.report.seeks);
    fs::remove_all(s.media_dir / "out" / c.name);
    return true;
  }
  std::vector<Baseline> baselines = c.baselines(first);

  std::vector<double> reel_times, reel_cpu;
  std::vector<std::vector<double>> baseline_times(baselines.size()), baseline_cpu(baselines.size());
  std::vector<int> baseline_frames(baselines.size(), 0);
  ReelRun run;
  for (int r = 0; r < s.runs; ++r) {
    if (!RunReel(video, c.options, FreshDir(reel_out), false, run)) return false;
    reel_times.push_back(run.seconds);
    reel_cpu.push_back(run.cpu_s);
    for (size_t b = 0; b < baselines.size(); ++b) {
      double seconds = 0, cpu_s = 0;
      if (!RunBaseline(baselines[b], FreshDir(ffmpeg_out), seconds, cpu_s)) return false;
      baseline_times[b].push_back(seconds);
      baseline_cpu[b].push_back(cpu_s);
      baseline_frames[b] = CountFiles(ffmpeg_out);
    }
  }
  const int reel_frames = CountFiles(reel_out);
  const double reel_s = Median(reel_times);
  const SampleReport& rep = run.report;

  bool ok = true;
  std::printf("%s: reel %s -> %d frames %dx%d; packets_decoded %d of %zu, seeks %d\n",
              c.name.c_str(), c.reel_label.c_str(), reel_frames, rep.width, rep.height,
              rep.packets_decoded, static_cast<size_t>(rep.source_frames), rep.seeks);
  for (size_t b = 0; b < baselines.size(); ++b) {
    const double ffmpeg_s = Median(baseline_times[b]);
    const double ratio = ffmpeg_s / reel_s;
    const bool pass = ratio >= c.target;
    std::printf("%s: reel %.2f s, ffmpeg %.2f s (%s), ratio %.2fx (target %s) %s\n", c.name.c_str(),
                reel_s, ffmpeg_s, baselines[b].name.c_str(), ratio, c.target_text.c_str(),
                pass ? "PASS" : "MISS");
    std::string all;
    for (size_t r = 0; r < reel_times.size(); ++r) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%s%.2f/%.2f", r ? ", " : "", reel_times[r],
                    baseline_times[b][r]);
      all += buf;
    }
    std::printf("  runs reel/ffmpeg s: %s\n", all.c_str());
    std::printf("  cpu time (user+sys, median): reel %.2f s, ffmpeg %.2f s, ratio %.2fx\n",
                Median(reel_cpu), Median(baseline_cpu[b]),
                Median(baseline_cpu[b]) / Median(reel_cpu));
    std::printf("  frames: reel %d, ffmpeg %d", reel_frames, baseline_frames[b]);
    if (std::abs(reel_frames - baseline_frames[b]) > c.frame_tolerance) {
      std::printf("  MISMATCH\n");
      ok = false;
    } else {
      std::printf(reel_frames == baseline_frames[b] ? "  (same)\n" : "  (within %d)\n",
                  c.frame_tolerance);
    }
    if (b == 0 || baselines[b].commands.size() == 1) {
      std::printf("  baseline: %s%s\n", Join(baselines[b].commands[0]).c_str(),
                  baselines[b].commands.size() > 1 ? "  (one of these per frame)" : "");
    } else {
      std::printf("  baseline: %s  (x%zu, one per frame)\n", Join(baselines[b].commands[0]).c_str(),
                  baselines[b].commands.size());
    }
  }

  if (s.breakdown) {
    // Stage times for Reel: the index pass on its own (SampleVideo runs the same scan first), and
    // the sink's JPEG encode and file write; the rest is demux, decode and colour conversion.
    Clock::time_point start = Clock::now();
    auto index = reel::pipeline::BuildFrameIndex(video);
    double index_s = Seconds(start);
    ReelRun split;
    if (!index.ok() || !RunReel(video, c.options, FreshDir(reel_out), true, split)) return false;
    double rest = split.seconds - index_s - split.sink.encode_s - split.sink.write_s;
    std::printf(
        "  breakdown (one run, %.2f s): index pass %.2f s, decode+convert %.2f s, "
        "jpeg encode %.2f s (%.1f ms/frame), file write %.2f s\n",
        split.seconds, index_s, rest, split.sink.encode_s,
        1000 * split.sink.encode_s / std::max<size_t>(1, split.source_frames.size()),
        split.sink.write_s);
  }
  if (!s.keep_output) fs::remove_all(s.media_dir / "out" / c.name);
  std::fflush(stdout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  if (!ParseArgs(argc, argv, s)) {
    PrintUsage();
    return 2;
  }
  const fs::path video = s.media_dir / kVideoName;
  if (!EnsureVideo(video)) return 1;

  std::printf("machine: %ld cores (nproc), %s\n", sysconf(_SC_NPROCESSORS_ONLN),
              CpuModel().c_str());
  std::printf("ffmpeg: %s\n", FirstLineOf("ffmpeg -hide_banner -version 2>/dev/null").c_str());
  std::printf("load average at start: %s\n", FirstLineOf("cat /proc/loadavg").c_str());
  std::printf("video: %s (%.0f MB)\n", video.c_str(),
              static_cast<double>(fs::file_size(video)) / 1e6);
  std::printf(
      "timing: median of %d runs per side, alternating Reel and ffmpeg, after one Reel "
      "warm-up; ratio = ffmpeg time / Reel time; Reel writes JPEG q%d, ffmpeg -q:v 2\n\n",
      s.runs, kJpegQuality);
  std::fflush(stdout);

  // Warm the page cache so the first measured run does not pay for the disk.
  RunCommand({"cat", video.string()});

  bool ok = true;
  for (const Case& c : MakeCases(video.string())) {
    const std::string key = c.name.substr(0, c.name.find('_'));
    if (std::find(s.cases.begin(), s.cases.end(), key) == s.cases.end()) continue;
    ok = RunCase(c, video.string(), s) && ok;
  }
  std::printf("load average at end: %s\n", FirstLineOf("cat /proc/loadavg").c_str());
  return ok ? 0 : 1;
}
