// reel encode --weights DIR [--output FILE.npy] [--pooled] INPUT [sampling flags]
// reel make-test-weights --config tiny|full DIR
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/file_util.h"
#include "jobs/cli/commands.h"
#include "pipeline/frame_sampler.h"
#include "pipeline/image_codec.h"
#include "pipeline/smart_resize.h"
#include "vision/encoder.h"
#include "vision/preprocess.h"
#include "vision/test_weights.h"

namespace reel::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct EncodeOptions {
  std::string input;
  std::string weights;
  std::string output;
  bool pooled = false;
  std::string precision = "bf16";
  std::string backend = "auto";
  int threads = 0;
  std::optional<int64_t> max_pixels;
  // Video sampling, as `reel frames`.
  std::optional<double> fps;
  std::optional<int> count;
  bool keyframes = false;
  std::vector<double> timestamps;
  std::optional<double> start, end;
  std::optional<int> max_frames;
  double time_limit = 600;
};

bool IsImagePath(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

// A float32 .npy (format 1.0) of `shape`.
std::string Npy(const std::vector<float>& values, const std::vector<int64_t>& shape) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dict += ",";
  dict += "), }";
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>((dict.size() >> 8) & 0xff);
  out += dict;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return out;
}

int RunEncode(const EncodeOptions& o) {
  using namespace vision;
  EncoderOptions options;
  options.precision = o.precision == "f32"   ? WeightPrecision::kF32
                      : o.precision == "f16" ? WeightPrecision::kF16
                                             : WeightPrecision::kBF16;
  options.backend = o.backend == "avx512"     ? Backend::kAvx512
                    : o.backend == "openblas" ? Backend::kOpenBlas
                                              : Backend::kAuto;
  options.threads = o.threads;
  options.projector = !o.pooled;

  // Frames first: a bad input fails before the weights are read.
  std::vector<pipeline::Image> frames;
  const bool image = IsImagePath(o.input);
  pipeline::ResizeOptions resize;
  resize.mode = pipeline::ResizeMode::kSmart;
  resize.smart.max_pixels =
      o.max_pixels.value_or(image ? pipeline::kImageMaxPixels : pipeline::kVideoMaxPixels);
  resize.smart.min_pixels = std::min<int64_t>(resize.smart.min_pixels, resize.smart.max_pixels);
  if (image) {
    Result<pipeline::Image> decoded = pipeline::ReadImageFile(o.input);
    if (!decoded.ok()) {
      std::fprintf(stderr, "reel encode: %s\n", decoded.status().message().c_str());
      return kExitFailed;
    }
    Result<pipeline::Size> size = pipeline::TargetSize({decoded->width, decoded->height}, resize);
    if (!size.ok()) {
      std::fprintf(stderr, "reel encode: %s: %s\n", o.input.c_str(),
                   size.status().message().c_str());
      return kExitFailed;
    }
    Result<pipeline::Image> resized = ResizeForEncoder(*decoded, *size);
    if (!resized.ok()) {
      std::fprintf(stderr, "reel encode: %s: %s\n", o.input.c_str(),
                   resized.status().message().c_str());
      return kExitFailed;
    }
    frames.push_back(std::move(*resized));
  } else {
    pipeline::SampleOptions sample;
    pipeline::SamplingOptions& s = sample.sampling;
    const int policies = (o.fps ? 1 : 0) + (o.count ? 1 : 0) + (o.keyframes ? 1 : 0) +
                         (o.timestamps.empty() ? 0 : 1);
    if (policies > 1) {
      std::fprintf(stderr,
                   "reel encode: choose one of --fps, --count, --keyframes, --timestamps\n");
      return kExitUsage;
    }
    if (o.count) {
      s.policy = pipeline::SamplingPolicy::kCount;
      s.count = *o.count;
    } else if (o.keyframes) {
      s.policy = pipeline::SamplingPolicy::kKeyframes;
    } else if (!o.timestamps.empty()) {
      s.policy = pipeline::SamplingPolicy::kTimestamps;
      s.timestamps = o.timestamps;
    } else {
      s.policy = pipeline::SamplingPolicy::kFps;
      s.fps = o.fps.value_or(1.0);
    }
    s.start_s = o.start;
    s.end_s = o.end;
    s.max_frames = o.max_frames;
    Status valid = pipeline::ValidateSamplingOptions(s);
    if (!valid.ok()) {
      std::fprintf(stderr, "reel encode: %s\n", valid.message().c_str());
      return kExitUsage;
    }
    sample.resize = resize;
    sample.limits.time_limit_s = o.time_limit;
    std::vector<std::pair<int, pipeline::Image>> sampled;
    auto sink = [&](pipeline::SampledFrame&& frame) -> Status {
      sampled.emplace_back(frame.index, std::move(frame.image));
      return Status::Ok();
    };
    Result<pipeline::SampleReport> report = pipeline::SampleVideo(o.input, sample, sink);
    if (!report.ok()) {
      std::fprintf(stderr, "reel encode: %s\n", report.status().message().c_str());
      return kExitFailed;
    }
    std::sort(sampled.begin(), sampled.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [index, frame] : sampled) frames.push_back(std::move(frame));
    if (frames.empty()) {
      std::fprintf(stderr, "reel encode: %s: no frames sampled\n", o.input.c_str());
      return kExitFailed;
    }
  }

  const auto load_start = Clock::now();
  Result<std::unique_ptr<VisionEncoder>> encoder = VisionEncoder::Load(o.weights, options);
  if (!encoder.ok()) {
    std::fprintf(stderr, "reel encode: %s\n", encoder.status().message().c_str());
    return kExitFailed;
  }
  const double load_seconds = Since(load_start);
  std::vector<const pipeline::Image*> pointers;
  for (const pipeline::Image& f : frames) pointers.push_back(&f);
  Result<VisualInput> input = PatchesFromFrames(pointers, (*encoder)->config());
  if (!input.ok()) {
    std::fprintf(stderr, "reel encode: %s: %s\n", o.input.c_str(),
                 input.status().message().c_str());
    return kExitFailed;
  }
  EncodeRequest request;
  request.pooled = o.pooled;
  request.tokens = !o.pooled;
  const auto encode_start = Clock::now();
  Result<EncodedVisual> out = (*encoder)->Encode(*input, request);
  if (!out.ok()) {
    std::fprintf(stderr, "reel encode: %s: %s\n", o.input.c_str(), out.status().message().c_str());
    return kExitFailed;
  }
  const double encode_seconds = Since(encode_start);
  const VisionModelConfig& c = (*encoder)->config();
  const std::vector<float>& values = o.pooled ? out->pooled : out->tokens;
  const int64_t width = o.pooled ? c.hidden_size : c.text_hidden_size;
  const std::vector<int64_t> shape = {static_cast<int64_t>(values.size()) / width, width};
  std::printf("%s: %zu frame%s of %dx%d -> %d pair%s of %dx%d patches -> %s [%lld, %lld]\n",
              o.input.c_str(), frames.size(), frames.size() == 1 ? "" : "s", frames[0].width,
              frames[0].height, input->pairs, input->pairs == 1 ? "" : "s", input->rows,
              input->cols, o.pooled ? "pooled" : "tokens", static_cast<long long>(shape[0]),
              static_cast<long long>(shape[1]));
  std::printf("encoded in %.2f s (weights loaded in %.2f s: %s)\n", encode_seconds, load_seconds,
              (*encoder)->Describe().c_str());
  if (!o.output.empty()) {
    Status written = WriteFileAtomically(o.output, Npy(values, shape));
    if (!written.ok()) {
      std::fprintf(stderr, "reel encode: %s\n", written.message().c_str());
      return kExitFailed;
    }
    std::printf("wrote %s\n", o.output.c_str());
  }
  return kExitOk;
}

}  // namespace

void AddEncodeCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<EncodeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "encode", "Run the model's vision encoder on an image or a video's frames, on the CPU");
  cmd->footer(
      "Writes the projector's tokens [windows, text_hidden] (one per 2x2 patch window, what the "
      "language model receives; 6144 wide for MiniMax-M3) or, with --pooled, the tower's pooled "
      "features [pairs, hidden] (the mean of each frame pair's patches; 1280 wide) as a float32 "
      ".npy, and prints their shape and the time taken. Without --output nothing is written.\n"
      "Frames are resized by the model's rule (smart resize to multiples of 28; still images "
      "up to 451584 pixels, video frames up to 602112: 1080p becomes 560x1008) and grouped in "
      "pairs; an odd last frame is repeated, a still image is a pair of itself. Videos take the "
      "sampling flags of `reel frames` (default --fps 1).\n"
      "--weights is the checkpoint directory (config.json and the safetensors shards, or "
      "model.safetensors.index.json of the full model: only the vision tensors are read); "
      "`reel make-test-weights` writes a random one.\n"
      "Exit status: 0 done, 1 failed, 2 bad options.");
  cmd->add_option("INPUT", o->input, "Image (.jpg, .png) or video file")->required();
  cmd->add_option("--weights", o->weights, "Checkpoint directory, index or .safetensors file")
      ->required();
  cmd->add_option("-o,--output", o->output, "Write the result here (.npy, float32)");
  cmd->add_flag("--pooled", o->pooled,
                "Pooled tower features per frame pair instead of the projector's tokens");
  cmd->add_option("--precision", o->precision, "How weights are held (arithmetic is f32)")
      ->check(CLI::IsMember({"bf16", "f16", "f32"}))
      ->default_val("bf16");
  cmd->add_option("--backend", o->backend, "auto (avx512 when the CPU has it), avx512, or openblas")
      ->check(CLI::IsMember({"auto", "avx512", "openblas"}))
      ->default_val("auto");
  cmd->add_option("--threads", o->threads, "Compute threads, 0 = one per core")
      ->default_val(0)
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--max-pixels", o->max_pixels,
                  "Smart resize: largest frame area (default 451584 for images, 602112 for "
                  "video frames); smaller is faster")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--fps", o->fps, "Video: frames per second (M3's rule)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--count", o->count, "Video: number of frames spread evenly")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--keyframes", o->keyframes, "Video: keyframes only");
  cmd->add_option("--timestamps", o->timestamps, "Video: comma-separated times in seconds")
      ->delimiter(',');
  cmd->add_option("--start", o->start, "Video: ignore frames before this time (seconds)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--end", o->end, "Video: ignore frames from this time on (seconds)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-frames", o->max_frames, "Video: thin the sample to at most N frames")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--time-limit", o->time_limit, "Video: seconds allowed for decoding")
      ->default_val(600)
      ->check(CLI::PositiveNumber);
  cmd->callback([o, &exit_code] { exit_code = RunEncode(*o); });
}

void AddMakeTestWeightsCommand(CLI::App& app, int& exit_code) {
  auto config_name = std::make_shared<std::string>("tiny");
  auto dir = std::make_shared<std::string>();
  auto seed = std::make_shared<uint64_t>(1);
  CLI::App* cmd = app.add_subcommand(
      "make-test-weights",
      "Write a random vision-encoder checkpoint with the model's tensor names and a config.json");
  cmd->footer(
      "For demos and tests without the real checkpoint: `tiny` is M3's structure at width 64 "
      "(2 layers, about 2 MB), `full` is M3's own sizes (631M tower + 234M projector, 1.7 GB; "
      "bf16 weights and an f32 patch embedding, as released). The numbers are random: features "
      "from them mean nothing.\n"
      "To use the real model instead, point --weights (or vision.weights) at the downloaded "
      "MiniMax-M3 checkpoint directory: Reel reads config.json and "
      "model.safetensors.index.json and maps only the shards holding the vision tensors.");
  cmd->add_option("--config", *config_name, "tiny or full")
      ->check(CLI::IsMember({"tiny", "full"}))
      ->default_val("tiny");
  cmd->add_option("--seed", *seed, "Random seed")->default_val(1);
  cmd->add_option("DIR", *dir, "Directory to write (created if missing)")->required();
  cmd->callback([config_name, dir, seed, &exit_code] {
    const vision::VisionModelConfig config =
        *config_name == "full" ? vision::VisionModelConfig() : vision::TinyTestConfig();
    Status st = vision::WriteRandomCheckpoint(*dir, config, *seed);
    if (!st.ok()) {
      std::fprintf(stderr, "reel make-test-weights: %s\n", st.message().c_str());
      exit_code = kExitFailed;
      return;
    }
    std::printf("wrote %s/config.json and %s/model.safetensors (%s configuration)\n", dir->c_str(),
                dir->c_str(), config_name->c_str());
    exit_code = kExitOk;
  });
}

}  // namespace reel::cli
