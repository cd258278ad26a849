// reel frames FILE (--fps R | --count N | --keyframes | --scene T | --timestamps t1,t2,...) -o DIR
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "base/file_util.h"
#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/number_checks.h"
#include "jobs/json_output.h"
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
  bool storage_shape = false;
  bool overwrite = false;
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

  const bool smart_options = o.max_pixels || o.min_pixels;
  if ((o.no_resize ? 1 : 0) + (o.long_side ? 1 : 0) + (smart_options ? 1 : 0) > 1) {
    return InvalidArgument(
        "choose one way to size frames: --no-resize, --long-side, or --max-pixels/--min-pixels");
  }
  pipeline::ResizeOptions& r = options.resize;
  const int factor = r.smart.factor;
  const int64_t patch = int64_t{factor} * factor;
  if (o.no_resize) {
    r.mode = pipeline::ResizeMode::kNone;
  } else if (o.long_side) {
    if (*o.long_side < factor) {
      return InvalidArgument("--long-side " + std::to_string(*o.long_side) +
                             " is smaller than one " + std::to_string(factor) +
                             "-pixel patch, the smallest a frame side can be");
    }
    r.mode = pipeline::ResizeMode::kLongSide;
    r.long_side.max_long_side = *o.long_side;
  } else {
    r.mode = pipeline::ResizeMode::kSmart;
    const int64_t default_min = r.smart.min_pixels, default_max = r.smart.max_pixels;
    if (o.max_pixels) r.smart.max_pixels = *o.max_pixels;
    if (o.min_pixels) r.smart.min_pixels = *o.min_pixels;
    const std::string max = std::to_string(r.smart.max_pixels);
    const std::string min = std::to_string(r.smart.min_pixels);
    if (r.smart.max_pixels < patch) {
      return InvalidArgument("--max-pixels " + max + " is smaller than one " +
                             std::to_string(factor) + "x" + std::to_string(factor) + " patch (" +
                             std::to_string(patch) + " pixels), the smallest frame there is");
    }
    if (r.smart.min_pixels > r.smart.max_pixels) {
      if (o.min_pixels && o.max_pixels) {
        return InvalidArgument("--min-pixels " + min + " is larger than --max-pixels " + max);
      }
      if (o.max_pixels) {
        return InvalidArgument("--max-pixels " + max +
                               " is smaller than the default --min-pixels (" +
                               std::to_string(default_min) + "): give a smaller --min-pixels too");
      }
      return InvalidArgument("--min-pixels " + min + " is larger than the default --max-pixels (" +
                             std::to_string(default_max) + "): give a larger --max-pixels too");
    }
  }
  options.resize.shape =
      o.storage_shape ? pipeline::FrameShape::kStorage : pipeline::FrameShape::kDisplay;
  options.limits.time_limit_s = o.time_limit;
  options.limits.max_error_rate = o.max_error_rate;
  options.limits.decoder_threads = o.threads;
  options.stream_index = o.stream;
  return options;
}

// Whether `name` is a file `reel frames` writes: frame_<digits>.jpg|png, frames.json, report.json.
bool IsReelOutput(const std::string& name) {
  if (name == "frames.json" || name == "report.json") return true;
  const size_t dot = name.rfind('.');
  if (!name.starts_with("frame_") || dot == std::string::npos || dot <= 6) return false;
  const std::string extension = name.substr(dot + 1);
  if (extension != "jpg" && extension != "png") return false;
  return std::all_of(name.begin() + 6, name.begin() + static_cast<std::ptrdiff_t>(dot),
                     [](char c) { return c >= '0' && c <= '9'; });
}

struct FolderContents {
  int frames = 0;   // frame_*.jpg|png
  int reports = 0;  // frames.json, report.json
  int other = 0;    // anything else: never touched
  bool exists = false;
};

Result<FolderContents> Inspect(const std::string& dir) {
  FolderContents contents;
  std::error_code ec;
  auto status = std::filesystem::status(dir, ec);
  if (ec || !std::filesystem::exists(status)) return contents;
  if (!std::filesystem::is_directory(status)) return InvalidArgument(dir + ": not a folder");
  contents.exists = true;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool regular = entry.is_regular_file(ec) && !entry.is_symlink(ec);
    if (regular && IsReelOutput(name)) {
      ++(name.starts_with("frame_") ? contents.frames : contents.reports);
    } else {
      ++contents.other;
    }
  }
  if (ec) return IoError(dir + ": cannot list the folder: " + ec.message());
  return contents;
}

// Removes the files an earlier `reel frames` wrote into `dir`, and nothing else.
Status ClearReelOutput(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
    if (!IsReelOutput(entry.path().filename().string())) continue;
    if (!std::filesystem::remove(entry.path(), ec) || ec) {
      return IoError(entry.path().string() + ": cannot remove: " + ec.message());
    }
  }
  if (ec) return IoError(dir + ": cannot list the folder: " + ec.message());
  return Status::Ok();
}

// Why a folder that already holds files is refused, and what to do.
std::string NotEmptyMessage(const std::string& dir, const FolderContents& c) {
  std::string held;
  if (c.reports > 0 || c.frames > 0) {
    held = std::to_string(c.frames) + (c.frames == 1 ? " frame" : " frames") +
           (c.reports > 0 ? " and frames.json/report.json" : "") + " from an earlier run";
  }
  if (c.other > 0) {
    held += (held.empty() ? "" : ", ") + std::to_string(c.other) +
            (c.other == 1 ? " other file" : " other files");
  }
  return dir + " is not empty (" + held +
         "): add --overwrite to replace Reel's files there (frame_*.jpg/png, frames.json, "
         "report.json; nothing else is touched), or choose an empty folder";
}

std::string SampleAspectText(pipeline::SampleAspect a) {
  return std::to_string(a.num) + ":" + std::to_string(a.den);
}

int Run(const FramesOptions& o) {
  Result<pipeline::SampleOptions> options = ToSampleOptions(o);
  if (!options.ok()) {
    std::fprintf(stderr, "reel frames: %s\n", options.status().message().c_str());
    return kExitUsage;
  }
  Result<FolderContents> contents = Inspect(o.out_dir);
  if (!contents.ok()) {
    std::fprintf(stderr, "reel frames: %s\n", contents.status().message().c_str());
    return kExitFailed;
  }
  const int held = contents->frames + contents->reports + contents->other;
  if (held > 0 && !o.overwrite) {
    std::fprintf(stderr, "reel frames: %s\n", NotEmptyMessage(o.out_dir, *contents).c_str());
    return kExitUsage;
  }
  Status made = MakeDirectories(o.out_dir);
  if (!made.ok()) {
    std::fprintf(stderr, "reel frames: %s\n", SafeUtf8(made.message()).c_str());
    return kExitFailed;
  }
  // An earlier run's files go just before the first new frame is written, so a file that fails
  // before any frame (unreadable, nothing to sample) leaves the earlier result as it was.
  bool cleared = contents->frames + contents->reports == 0;
  nlohmann::json frames = nlohmann::json::array();
  const std::string extension = o.format == "png" ? "png" : "jpg";
  auto sink = [&](pipeline::SampledFrame&& frame) -> Status {
    if (!cleared) {
      REEL_RETURN_IF_ERROR(ClearReelOutput(o.out_dir));
      cleared = true;
    }
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
    std::fprintf(stderr, "reel frames: %s\n", SafeUtf8(report.status().message()).c_str());
    return kExitFailed;
  }
  std::sort(frames.begin(), frames.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["index"] < b["index"];
  });
  Status written = WriteFileAtomically((std::filesystem::path(o.out_dir) / "frames.json").string(),
                                       jobs::DumpJson(frames, 2) + "\n");
  const pipeline::SampleReport& r = *report;
  nlohmann::json summary = {
      {"path", DisplayPath(o.file)},
      {"stream", r.stream_index},
      {"source_frames", r.source_frames},
      {"source_fps", r.source_fps},
      {"source_width", r.source_width},
      {"source_height", r.source_height},
      {"shape", r.shape == pipeline::FrameShape::kStorage ? "storage" : "display"},
      {"storage_width", r.storage_size.width},
      {"storage_height", r.storage_size.height},
      {"sample_aspect_ratio", SampleAspectText(r.sample_aspect)},
      {"display_width", r.display_size.width},
      {"display_height", r.display_size.height},
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
      {"warnings", r.warnings},
  };
  if (!r.fps_timeline.empty()) summary["fps_timeline"] = r.fps_timeline;
  if (options->sampling.policy == pipeline::SamplingPolicy::kScene) {
    // Every scored frame's score, to choose a threshold from: [source_frame, score].
    nlohmann::json scores = nlohmann::json::array();
    for (const auto& [frame, score] : r.scene_scores) {
      scores.push_back({frame, std::round(score * 1e6) / 1e6});
    }
    summary["scene_threshold"] = options->sampling.scene_threshold;
    summary["scene_scores"] = std::move(scores);
  }
  if (written.ok()) {
    written = WriteFileAtomically((std::filesystem::path(o.out_dir) / "report.json").string(),
                                  jobs::DumpJson(summary, 2) + "\n");
  }
  if (!written.ok()) {
    std::fprintf(stderr, "reel frames: %s\n", SafeUtf8(written.message()).c_str());
    return kExitFailed;
  }
  const std::string shown = DisplayPath(o.file);
  for (const std::string& warning : r.warnings) {
    std::fprintf(stderr, "reel frames: %s: %s\n", shown.c_str(), SafeUtf8(warning).c_str());
  }
  std::fprintf(stderr, "%s: %d frames (%dx%d) written to %s\n", shown.c_str(), r.returned, r.width,
               r.height, DisplayPath(o.out_dir).c_str());
  if (r.partial()) {
    std::fprintf(stderr, "%s: partial result: %s (see report.json)\n", shown.c_str(),
                 SafeUtf8(r.PartialReason()).c_str());
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
      "says what was decoded and whether the result is partial, and the shapes: stored, displayed "
      "(sample aspect ratio applied) and the one resized from.\n"
      "A request that selects no frame of the file (a start after its end, timestamps past it) "
      "fails and says why; one that selects some says what it left out.\n"
      "Exit status: 0 done, 1 failed (including nothing to sample), 2 bad options (including an "
      "output folder that is not empty, without --overwrite), 3 partial result (damaged video).");
  cmd->add_option("FILE", o->file, "Video file")->required();
  cmd->add_option("-o,--output", o->out_dir, "Folder for the frames and frames.json")->required();
  cmd->add_option("--fps", o->fps, "Frames per second (M3's rule)")->check(GreaterThan(0));
  cmd->add_option("--fps-timeline", o->fps_timeline,
                  "fps: apply the rule to frame indices at the average rate (index, as the "
                  "servers do), to presentation times (time), or index on constant-rate streams "
                  "and time on others (auto)")
      ->check(CLI::IsMember({"auto", "index", "time"}))
      ->default_val("auto");
  cmd->add_option("--count", o->count, "Number of frames spread evenly")->check(AtLeast(1));
  cmd->add_flag("--keyframes", o->keyframes, "Keyframes only");
  cmd->add_option("--scene", o->scene,
                  "Shot-change threshold in (0, 1], e.g. 0.3: cuts where ffmpeg's "
                  "select='gt(scene,T)' would (report.json lists every frame's score)")
      ->check(Between(0, 1));
  cmd->add_option("--min-shot", o->scene_min_shot, "Scene: minimum seconds between cuts")
      ->default_val(1.0)
      ->check(AtLeast(0));
  cmd->add_option("--timestamps", o->timestamps, "Comma-separated times in seconds")
      ->delimiter(',');
  cmd->add_option("--start", o->start, "Ignore frames before this time (seconds)")
      ->check(AtLeast(0));
  cmd->add_option("--end", o->end, "Ignore frames from this time on (seconds)")
      ->check(GreaterThan(0));
  cmd->add_option("--max-frames", o->max_frames, "Thin the sample evenly to at most N frames")
      ->check(AtLeast(1));
  cmd->add_option("--max-pixels", o->max_pixels,
                  "Smart resize: largest frame area (default 602112, vLLM's video default)")
      ->check(AtLeast(1));
  cmd->add_option("--min-pixels", o->min_pixels, "Smart resize: smallest frame area (default 3136)")
      ->check(AtLeast(1));
  cmd->add_option("--long-side", o->long_side,
                  "SGLang's resize instead: cap the long side (e.g. 672; at least 28), round up to "
                  "28")
      ->check(AtLeast(1));
  cmd->add_flag("--no-resize", o->no_resize, "Keep the source size (upright)");
  cmd->add_flag("--overwrite", o->overwrite,
                "Write into a folder that already holds files: Reel's own files there (frame_*.jpg/"
                "png, frames.json, report.json) are replaced, nothing else is touched. Without it "
                "a folder that is not empty is refused");
  cmd->add_flag(
      "--storage-shape", o->storage_shape,
      "Videos with non-square pixels (e.g. DVD 720x480 at 32:27): resize from the stored "
      "pixel grid, as vLLM's and SGLang's own decoders do, instead of the shape the video "
      "is shown at (the default)");
  cmd->add_option("--format", o->format, "Image format")
      ->check(CLI::IsMember({"jpg", "png"}))
      ->default_val("jpg");
  cmd->add_option("--quality", o->quality, "JPEG quality 1-100")
      ->default_val(90)
      ->check(Between(1, 100));
  cmd->add_option("--stream", o->stream,
                  "Video stream index, as `reel probe` lists them (default: the best one)")
      ->check(AtLeast(0));
  cmd->add_option("--threads", o->threads,
                  "Decoding threads, 0 = one per core (independent runs of chosen frames decode "
                  "side by side)")
      ->default_val(0)
      ->check(Between(0, 4096));
  cmd->add_option("--time-limit", o->time_limit, "Seconds allowed for the file")
      ->default_val(600)
      ->check(GreaterThan(0));
  cmd->add_option("--max-error-rate", o->max_error_rate,
                  "Fail when more than this fraction of decoded packets are damaged")
      ->default_val(0.5)
      ->check(Between(0, 1));
  cmd->callback([o, &exit_code] { exit_code = Run(*o); });
}

}  // namespace reel::cli
