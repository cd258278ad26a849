// Sampling policies: which source frames to take from a video.
//
// Every policy except `scene` chooses from the frame index alone; `scene` needs pixels, so the
// decoder runs its detector (scene_detector.h) on every frame in range. All times are seconds from
// the first presented frame; the frame returned for a time is the one whose presentation interval
// contains it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/frame_index.h"

namespace reel::pipeline {

enum class SamplingPolicy { kFps, kCount, kKeyframes, kScene, kTimestamps };

const char* SamplingPolicyName(SamplingPolicy policy);
Result<SamplingPolicy> ParseSamplingPolicy(const std::string& name);

// Where the fps rule measures time. kIndex: frame index / average rate, as vLLM and SGLang do;
// right when frames are evenly spaced. kTime: the frames' presentation times; right for every
// stream. kAuto: kIndex on a constant-rate stream (FrameIndex::constant_rate), else kTime.
enum class FpsTimeline { kAuto, kIndex, kTime };

const char* FpsTimelineName(FpsTimeline timeline);
Result<FpsTimeline> ParseFpsTimeline(const std::string& name);

struct SamplingOptions {
  SamplingPolicy policy = SamplingPolicy::kFps;
  double fps = 1.0;           // kFps: M3's greedy rule (docs/m3-reference.md)
  double fps_epsilon = 1e-4;  // kFps: the rule's tolerance, seconds
  bool fps_keep_last = true;  // kFps: keep the last frame (current vLLM and SGLang)
  FpsTimeline fps_timeline = FpsTimeline::kAuto;  // kFps: index or presentation times
  int count = 8;                   // kCount: frames spread evenly, first and last included
  std::vector<double> timestamps;  // kTimestamps
  double scene_threshold = 0.3;    // kScene: cut where FFmpeg's scene score is above this
  double scene_min_shot_s = 1.0;   // kScene: no cut closer than this to the previous one
  std::optional<double> start_s;   // trim: first time considered
  std::optional<double> end_s;     // trim: last time considered (exclusive)
  std::optional<int> max_frames;   // cap: thin the selection evenly, keeping first and last
};

// Validates the options (positive rates and counts, start < end, ...).
Status ValidateSamplingOptions(const SamplingOptions& options);

// The presentation indices of the frames to take, ascending and unique, for every policy but
// kScene. Fails with kInvalidArgument for kScene or bad options; an empty index or a trim that
// leaves nothing gives an empty list, not an error.
Result<std::vector<int>> SelectFrames(const FrameIndex& index, const SamplingOptions& options);

// The timeline kFps uses on this stream: options.fps_timeline, with kAuto resolved (kIndex when
// the stream is constant-rate and has an average rate, else kTime). Never kAuto.
FpsTimeline ResolveFpsTimeline(const FrameIndex& index, const SamplingOptions& options);

// The first and one-past-last presentation indices inside the trim range.
std::pair<int, int> TrimRange(const FrameIndex& index, const SamplingOptions& options);

// What in the request lies outside the video, for the user, one sentence each: a start after the
// last frame, a trim range that holds no frame, timestamps past the end or outside the trim
// range, a count larger than the frames in range, keyframes wanted from a range without one.
// Empty when the request fits the video.
std::vector<std::string> RequestWarnings(const FrameIndex& index, const SamplingOptions& options);

// Evenly thins `selected` to `max_frames`, keeping the first and the last (SGLang's rule).
std::vector<int> ThinEvenly(const std::vector<int>& selected, int max_frames);

}  // namespace reel::pipeline
