// reel frames FILE (--fps R | --count N | --keyframes | --scene T | --timestamps t1,t2,...) -o DIR
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "base/file_util.h"
#include "jobs/cli/commands.h"
#include "pipeline/frame_sampler.h"
#include "pipeline/image_codec.h"

namespace reel::cli {
namespace {

struct FramesOptions {
  std::string file;
  std::string out_dir;
  std::optional<double> fps;
  std::string fps_timeline = "auto";
  std::optional<int> count;
  bool keyframes = false;
  std::optional<double> scene;
  double scene_min_shot = 1.0;
  std::vector<double> timestamps;
  std::optional<double> start, end;
  std::optional<int> max_frames;
  std::optional<int64_t> max_pixels, min_pixels;
  std::optional<int> long_side;
  bool no_resize = false;
  std::string format = "jpg";
  int quality = 90;
  double time_limit = 600;
  double max_error_rate = 0.5;
  int threads = 0;
  int stream = -1;
};

Result<pipeline::SampleOptions> ToSampleOptions(const FramesOptions& o) {
  pipeline::SampleOptions options;
  pipeline::SamplingOptions& s = options.sampling;
  int policies = (o.fps ? 1 : 0) + (o.count ? 1 : 0) + (o.keyframes ? 1 : 0) + (o.scene ? 1 : 0) +
                 (o.timestamps.empty() ? 0 : 1);
  if (policies > 1) {
    return InvalidArgument("choose one of --fps, --count, --keyframes, --scene, --timestamps");
  }
  if (o.count) {
    s.policy = pipeline::SamplingPolicy::kCount;
    s.count = *o.count;
  } else if (o.keyframes) {
    s.policy = pipeline::SamplingPolicy::kKeyframes;
  } else if (o.scene) {
    s.policy = pipeline::SamplingPolicy::kScene;
    s.scene_threshold = *o.scene;
    s.scene_min_shot_s = o.scene_min_shot;
  } else if (!o.timestamps.empty()) {
    s.policy = pipeline::SamplingPolicy::kTimestamps;
    s.timestamps = o.timestamps;
  } else {
    s.policy = pipeline::SamplingPolicy::kFps;
    s.fps = o.fps.value_or(1.0);
  }
  REEL_ASSIGN_OR_RETURN(s.fps_timeline, pipeline::ParseFpsTimeline(o.fps_timeline));
  if (s.policy != pipeline::SamplingPolicy::kFps &&
      s.fps_timeline != pipeline::FpsTimeline::kAuto) {
    return InvalidArgument("--fps-timeline applies to --fps only");
  }
  s.start_s = o.start;
  s.end_s = o.end;
  s.max_frames = o.max_frames;
  REEL_RETURN_IF_ERROR(pipeline::ValidateSamplingOptions(s));

  if (o.no_resize) {
    options.resize.mode = pipeline::ResizeMode::kNone;
  } else if (o.long_side) {
    options.resize.mode = pipeline::ResizeMode::kLongSide;
    options.resize.long_side.max_long_side = *o.long_side;
  } else {
    options.resize.mode = pipeline::ResizeMode::kSmart;
    if (o.max_pixels) options.resize.smart.max_pixels = *o.max_pixels;
    if (o.min_pixels) options.resize.smart.min_pixels = *o.min_pixels;
    if (options.resize.smart.min_pixels > options.resize.smart.max_pixels) {
      return InvalidArgument("--min-pixels is larger than --max-pixels");
    }
  }
  options.limits.time_limit_s = o.time_limit;
  options.limits.max_error_rate = o.max_error_rate;
  options.limits.decoder_threads = o.threads;
  options.stream_index = o.stream;
  return options;
}

int Run(const FramesOptions& o) {
  Result<pipeline::SampleOptions> options = ToSampleOptions(o);
  if (!options.ok()) {
    std::fprintf(stderr, "reel frames: %s\n", options.status().message().c_str());
    return kExitUsage;
  }
  Status made = MakeDirectories(o.out_dir);
  if (!made.ok()) {
    std::fprintf(stderr, "reel frames: %s\n", made.message().c_str());
    return kExitFailed;
  }
  nlohmann::json frames = nlohmann::json::array();
  const std::string extension = o.format == "png" ? "png" : "jpg";
  auto sink = [&](pipeline::SampledFrame&& frame) -> Status {
    char name[64];
    std::snprintf(name, sizeof(name), "frame_%06d.%s", frame.index, extension.c_str());
    std::string path = (std::filesystem::path(o.out_dir) / name).string();
    REEL_RETURN_IF_ERROR(pipeline::WriteImageFile(path, frame.image, o.quality));
    nlohmann::json j = {{"index", frame.index},       {"source_frame", frame.source_frame},
                        {"pts_s", frame.pts_s},       {"time_s", frame.time_s},
                        {"width", frame.image.width}, {"height", frame.image.height},
                        {"keyframe", frame.keyframe}, {"file", name}};
    frames.push_back(std::move(j));
    return Status::Ok();
  };
  Result<pipeline::SampleReport> report = pipeline::SampleVideo(o.file, *options, sink);
  if (!report.ok()) {
    std::fprintf(stderr, "reel frames: %s\n", report.status().message().c_str());
    return kExitFailed;
  }
  std::sort(frames.begin(), frames.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["index"] < b["index"];
  });
  Status written = WriteFileAtomically((std::filesystem::path(o.out_dir) / "frames.json").string(),
                                       frames.dump(2) + "\n");
  const pipeline::SampleReport& r = *report;
  nlohmann::json summary = {
      {"path", o.file},
      {"stream", r.stream_index},
      {"source_frames", r.source_frames},
      {"source_fps", r.source_fps},
      {"source_width", r.source_width},
      {"source_height", r.source_height},
      {"rotation", r.rotation},
      {"width", r.width},
      {"height", r.height},
      {"requested", r.requested},
      {"returned", r.returned},
      {"missing", r.missing},
      {"packets_decoded", r.packets_decoded},
      {"decode_errors", r.decode_errors},
      {"seeks", r.seeks},
      {"truncated", r.truncated},
      {"truncation", r.truncation},
      {"missing_bytes", r.missing_bytes},
      {"missing_s", r.missing_s},
      {"partial", r.partial()},
      {"partial_reason", r.PartialReason()},
  };
  if (!r.fps_timeline.empty()) summary["fps_timeline"] = r.fps_timeline;
  if (written.ok()) {
    written = WriteFileAtomically((std::filesystem::path(o.out_dir) / "report.json").string(),
                                  summary.dump(2) + "\n");
  }
  if (!written.ok()) {
    std::fprintf(stderr, "reel frames: %s\n", written.message().c_str());
    return kExitFailed;
  }
  std::fprintf(stderr, "%s: %d frames (%dx%d) written to %s\n", o.file.c_str(), r.returned, r.width,
               r.height, o.out_dir.c_str());
  if (r.partial()) {
    std::fprintf(stderr, "%s: partial result: %s (see report.json)\n", o.file.c_str(),
                 r.PartialReason().c_str());
    return kExitPartial;
  }
  return kExitOk;
}

}  // namespace

void AddFramesCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<FramesOptions>();
  CLI::App* cmd = app.add_subcommand(
      "frames",
      "Sample frames from a video, upright and resized to the model's size, into a folder "
      "with frames.json");
  cmd->footer(
      "Policies (choose one; default --fps 1): --fps follows MiniMax-M3's greedy rule; --count "
      "spreads N frames evenly (first and last included); --keyframes takes random-access frames "
      "without decoding the rest; --scene takes the first frame and one at each shot change; "
      "--timestamps takes the frames shown at the given times.\n"
      "Times are seconds from the first frame. frames.json lists index, source_frame, pts_s "
      "(the stream's presentation time), time_s, width, height, keyframe and file; report.json "
      "says what was decoded and whether the result is partial.\n"
      "Exit status: 0 done, 1 failed, 2 bad options, 3 partial result (damaged video).");
  cmd->add_option("FILE", o->file, "Video file")->required();
  cmd->add_option("-o,--output", o->out_dir, "Folder for the frames and frames.json")->required();
  cmd->add_option("--fps", o->fps, "Frames per second (M3's rule)")->check(CLI::PositiveNumber);
  cmd->add_option("--fps-timeline", o->fps_timeline,
                  "fps: apply the rule to frame indices at the average rate (index, as the "
                  "servers do), to presentation times (time), or index on constant-rate streams "
                  "and time on others (auto)")
      ->check(CLI::IsMember({"auto", "index", "time"}))
      ->default_val("auto");
  cmd->add_option("--count", o->count, "Number of frames spread evenly")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--keyframes", o->keyframes, "Keyframes only");
  cmd->add_option("--scene", o->scene, "Shot-change threshold in (0, 1], e.g. 0.3")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--min-shot", o->scene_min_shot, "Scene: minimum seconds between cuts")
      ->default_val(1.0)
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--timestamps", o->timestamps, "Comma-separated times in seconds")
      ->delimiter(',');
  cmd->add_option("--start", o->start, "Ignore frames before this time (seconds)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--end", o->end, "Ignore frames from this time on (seconds)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-frames", o->max_frames, "Thin the sample evenly to at most N frames")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-pixels", o->max_pixels,
                  "Smart resize: largest frame area (default 602112, vLLM's video default)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-pixels", o->min_pixels, "Smart resize: smallest frame area (default 3136)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--long-side", o->long_side,
                  "SGLang's resize instead: cap the long side (e.g. 672), round up to 28")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-resize", o->no_resize, "Keep the source size (upright)");
  cmd->add_option("--format", o->format, "Image format")
      ->check(CLI::IsMember({"jpg", "png"}))
      ->default_val("jpg");
  cmd->add_option("--quality", o->quality, "JPEG quality 1-100")
      ->default_val(90)
      ->check(CLI::Range(1, 100));
  cmd->add_option("--stream", o->stream, "Video stream index (default: the best one)");
  cmd->add_option("--threads", o->threads,
                  "Decoding threads, 0 = one per core (independent runs of chosen frames decode "
                  "side by side)")
      ->default_val(0)
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--time-limit", o->time_limit, "Seconds allowed for the file")
      ->default_val(600)
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-error-rate", o->max_error_rate,
                  "Fail when more than this fraction of decoded packets are damaged")
      ->default_val(0.5)
      ->check(CLI::Range(0.0, 1.0));
  cmd->callback([o, &exit_code] { exit_code = Run(*o); });
}

}  // namespace reel::cli
