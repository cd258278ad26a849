#include <cmath>
#include <cstdio>

#include "pipeline/sampling.h"
#include "pipeline/sampling/policies.h"

namespace reel::pipeline {

const char* SamplingPolicyName(SamplingPolicy policy) {
  switch (policy) {
    case SamplingPolicy::kFps:
      return "fps";
    case SamplingPolicy::kCount:
      return "count";
    case SamplingPolicy::kKeyframes:
      return "keyframes";
    case SamplingPolicy::kScene:
      return "scene";
    case SamplingPolicy::kTimestamps:
      return "timestamps";
  }
  return "unknown";
}

Result<SamplingPolicy> ParseSamplingPolicy(const std::string& name) {
  for (SamplingPolicy p : {SamplingPolicy::kFps, SamplingPolicy::kCount, SamplingPolicy::kKeyframes,
                           SamplingPolicy::kScene, SamplingPolicy::kTimestamps}) {
    if (name == SamplingPolicyName(p)) return p;
  }
  return InvalidArgument("unknown sampling policy '" + name +
                         "' (valid: fps, count, keyframes, scene, timestamps)");
}

const char* FpsTimelineName(FpsTimeline timeline) {
  switch (timeline) {
    case FpsTimeline::kAuto:
      return "auto";
    case FpsTimeline::kIndex:
      return "index";
    case FpsTimeline::kTime:
      return "time";
  }
  return "unknown";
}

Result<FpsTimeline> ParseFpsTimeline(const std::string& name) {
  for (FpsTimeline t : {FpsTimeline::kAuto, FpsTimeline::kIndex, FpsTimeline::kTime}) {
    if (name == FpsTimelineName(t)) return t;
  }
  return InvalidArgument("unknown fps timeline '" + name + "' (valid: auto, index, time)");
}

FpsTimeline ResolveFpsTimeline(const FrameIndex& index, const SamplingOptions& options) {
  if (options.fps_timeline == FpsTimeline::kTime) return FpsTimeline::kTime;
  // Without an average rate there is no index timeline.
  if (!(index.avg_fps > 0)) return FpsTimeline::kTime;
  if (options.fps_timeline == FpsTimeline::kIndex) return FpsTimeline::kIndex;
  return index.constant_rate() ? FpsTimeline::kIndex : FpsTimeline::kTime;
}

Status ValidateSamplingOptions(const SamplingOptions& o) {
  if (o.policy == SamplingPolicy::kFps && !(o.fps > 0 && std::isfinite(o.fps))) {
    return InvalidArgument("fps must be a positive number");
  }
  if (o.policy == SamplingPolicy::kCount && o.count <= 0) {
    return InvalidArgument("count must be at least 1");
  }
  if (o.policy == SamplingPolicy::kTimestamps) {
    if (o.timestamps.empty()) return InvalidArgument("timestamps needs at least one time");
    for (double t : o.timestamps) {
      if (!std::isfinite(t) || t < 0) return InvalidArgument("timestamps must be >= 0 seconds");
    }
  }
  if (o.policy == SamplingPolicy::kScene) {
    if (!(o.scene_threshold > 0 && o.scene_threshold <= 1)) {
      return InvalidArgument("scene threshold must be in (0, 1]");
    }
    if (o.scene_min_shot_s < 0) return InvalidArgument("scene minimum shot length must be >= 0");
  }
  if (o.start_s && (*o.start_s < 0 || !std::isfinite(*o.start_s))) {
    return InvalidArgument("start must be >= 0 seconds");
  }
  if (o.end_s && (!std::isfinite(*o.end_s) || *o.end_s <= 0)) {
    return InvalidArgument("end must be > 0 seconds");
  }
  if (o.start_s && o.end_s && *o.start_s >= *o.end_s) {
    return InvalidArgument("start must be before end");
  }
  if (o.max_frames && *o.max_frames <= 0) return InvalidArgument("max_frames must be at least 1");
  return Status::Ok();
}

std::pair<int, int> TrimRange(const FrameIndex& index, const SamplingOptions& options) {
  int first = 0, last = index.size();
  if (options.start_s) first = index.FirstFrameAtOrAfter(*options.start_s);
  if (options.end_s) last = std::min(last, index.FirstFrameAtOrAfter(*options.end_s));
  if (last < first) last = first;
  return {first, last};
}

namespace {

// Seconds for messages: at most 3 decimals, no trailing zeros ("8", "7.967", "0.5").
std::string Seconds(double s) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3f", s);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

// "timestamp 99 s is" / "timestamps 12 s, 99 s are" (at most 5 listed).
std::string TimesSubject(const std::vector<double>& times) {
  std::string text = times.size() == 1 ? "timestamp " : "timestamps ";
  for (size_t i = 0; i < times.size() && i < 5; ++i) text += (i ? ", " : "") + Seconds(times[i]);
  if (times.size() > 5) text += " and " + std::to_string(times.size() - 5) + " more";
  return text + (times.size() == 1 ? " is" : " are");
}

}  // namespace

std::vector<std::string> RequestWarnings(const FrameIndex& index, const SamplingOptions& o) {
  std::vector<std::string> warnings;
  if (index.size() == 0) return warnings;
  const double duration = index.duration_s();
  const std::string length = Seconds(duration) + " long";
  auto [first, last] = TrimRange(index, o);
  std::string range;  // the trim range as the user gave it
  if (o.start_s && o.end_s) {
    range = "between start " + Seconds(*o.start_s) + " and end " + Seconds(*o.end_s);
  } else if (o.start_s) {
    range = "from start " + Seconds(*o.start_s);
  } else if (o.end_s) {
    range = "before end " + Seconds(*o.end_s);
  }
  if (first >= last) {
    if (o.start_s && first >= index.size()) {
      warnings.push_back("start " + Seconds(*o.start_s) + " is after the last frame (at " +
                         Seconds(index.time_s(index.size() - 1)) + "; the video is " + length +
                         ")");
    } else {
      warnings.push_back("no frame starts " + range + " (the video is " + length + ")");
    }
  }
  switch (o.policy) {
    case SamplingPolicy::kTimestamps: {
      std::vector<double> past, outside;
      for (double t : o.timestamps) {
        if (t >= duration) {
          past.push_back(t);
        } else if (int f = index.FrameAt(t); f < first || f >= last) {
          outside.push_back(t);
        }
      }
      if (!past.empty()) {
        warnings.push_back(TimesSubject(past) + " past the end of the video (" + length + ")");
      }
      if (!outside.empty() && first < last) {
        warnings.push_back(TimesSubject(outside) + " outside the range " + range);
      }
      break;
    }
    case SamplingPolicy::kCount:
      if (first < last && o.count > last - first) {
        warnings.push_back("count " + std::to_string(o.count) + " is more than the " +
                           std::to_string(last - first) + " frames " +
                           (range.empty() ? "in the video" : range) + ": took them all");
      }
      break;
    case SamplingPolicy::kKeyframes: {
      bool any = false;
      for (int i = first; i < last && !any; ++i) any = index.frames[i].keyframe;
      if (first < last && !any) {
        warnings.push_back("no keyframe " + (range.empty() ? std::string("in the video") : range));
      }
      break;
    }
    case SamplingPolicy::kFps:
    case SamplingPolicy::kScene:
      break;
  }
  return warnings;
}

std::vector<int> ThinEvenly(const std::vector<int>& selected, int max_frames) {
  if (max_frames <= 0 || static_cast<int>(selected.size()) <= max_frames) return selected;
  if (max_frames == 1) return {selected.front()};
  // SGLang's rule: max_frames - 1 picks at a fractional step, then the last.
  std::vector<int> thinned;
  const double step = static_cast<double>(selected.size()) / (max_frames - 1);
  for (int i = 0; i < max_frames - 1; ++i) {
    thinned.push_back(selected[static_cast<size_t>(i * step)]);
  }
  thinned.push_back(selected.back());
  return thinned;
}

Result<std::vector<int>> SelectFrames(const FrameIndex& index, const SamplingOptions& options) {
  REEL_RETURN_IF_ERROR(ValidateSamplingOptions(options));
  auto [first, last] = TrimRange(index, options);
  std::vector<int> selected;
  switch (options.policy) {
    case SamplingPolicy::kFps:
      selected = policies::SelectByFps(index, first, last, options);
      break;
    case SamplingPolicy::kCount:
      selected = policies::SelectByCount(index, first, last, options);
      break;
    case SamplingPolicy::kKeyframes:
      selected = policies::SelectKeyframes(index, first, last, options);
      break;
    case SamplingPolicy::kTimestamps:
      selected = policies::SelectTimestamps(index, first, last, options);
      break;
    case SamplingPolicy::kScene:
      return InvalidArgument("scene sampling needs pixels: use SampleVideo");
  }
  if (options.max_frames) selected = ThinEvenly(selected, *options.max_frames);
  return selected;
}

}  // namespace reel::pipeline
