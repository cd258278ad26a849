// Frames out of a video: probe, index, select, decode the least, convert and resize the rest.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "pipeline/image.h"
#include "pipeline/limits.h"
#include "pipeline/sampling.h"
#include "pipeline/smart_resize.h"

namespace reel::pipeline {

struct SampledFrame {
  int index = 0;         // 0-based position in the sample
  int source_frame = 0;  // 0-based index in the stream's presentation order
  double pts_s = 0;      // the frame's presentation timestamp, seconds (as ffprobe's pts_time)
  double time_s = 0;     // seconds from the first presented frame
  bool keyframe = false;
  Image image;  // upright RGB at the target size
};

struct SampleOptions {
  SamplingOptions sampling;
  ResizeOptions resize;
  MediaLimits limits;
  int stream_index = -1;  // -1: the best video stream
};

// What a sampling run did, for reports and for "partial result" marking.
struct SampleReport {
  int stream_index = -1;
  int source_frames = 0;  // frames in the index
  double source_fps = 0;
  // The stream's length on its frame timeline: first frame's start to last frame's end, with
  // restarting timestamps joined up (a container's duration can be wrong for such files).
  double duration_s = 0;
  int source_width = 0;  // upright size before resizing: the display or the storage shape
  int source_height = 0;
  // The stored picture, upright; the shape it is shown at (sample aspect applied), upright; and
  // which of the two the frames were resized from (ResizeOptions::shape).
  Size storage_size;
  Size display_size;
  SampleAspect sample_aspect;
  FrameShape shape = FrameShape::kDisplay;
  int width = 0;  // output size
  int height = 0;
  int rotation = 0;
  int requested = 0;            // frames the policy chose (scene: cuts found)
  int scene_frames_scored = 0;  // scene: frames scored by the detector
  int returned = 0;             // frames delivered to the callback
  int packets_decoded = 0;      // packets sent to the decoder
  // Single-threaded decoders the planned pass ran at once on independent runs of chosen frames
  // (LimitOptions::decoder_threads); 1 when one decoder read the stream in order.
  int parallel_decoders = 1;
  // Packets the decoder rejected, and pictures it flagged damaged, except where decoding again
  // from an earlier start point delivered every frame that damage had spoiled.
  int decode_errors = 0;
  bool truncated = false;     // the file ends before its container says it should
  std::string truncation;     // why, and how much is missing (Truncation::reason)
  int64_t missing_bytes = 0;  // truncated: bytes the container declares past the end (0: unknown)
  double missing_s = 0;       // truncated: media time lost past the end of what was read
  std::string fps_timeline;   // kFps: the rule's timeline used, "index" or "time"
  int seeks = 0;
  // Chosen source frames that could not be decoded, or only damaged (concealed errors): a
  // damaged picture is never delivered.
  std::vector<int> missing;
  // scene: (source frame, score) of every scored frame, in scoring order; the score is FFmpeg's
  // `select` scene score (sampling/scene_detector.h).
  std::vector<std::pair<int, double>> scene_scores;
  // Parts of the request outside the video (RequestWarnings in sampling.h), one sentence each.
  std::vector<std::string> warnings;
  bool partial() const { return !missing.empty() || decode_errors > 0 || truncated; }
  // Why the result is partial, for people ("" when it is not): the truncation, the chosen frames
  // that could not be decoded, the decoding errors, joined by "; ".
  std::string PartialReason() const;
};

// Receives frames, normally in ascending source order; a frame that needed a second decoding
// attempt (it came out damaged or not at all; it is decoded again from an earlier start point,
// finally from the stream's start) arrives after the others. SampledFrame::index is the frame's
// position in the chosen sample, so a frame that could not be decoded leaves a gap. Returning a
// non-OK status stops sampling and that status is returned.
using FrameSink = std::function<Status(SampledFrame&&)>;

// Samples `path`. Frames that the stream's damage makes undecodable are listed in
// report.missing; the call still succeeds unless the decode error rate exceeds the limit, or
// nothing at all could be decoded. A request that selects no frame of this video (a start after
// its end, timestamps past it) fails with kInvalidArgument saying why; one that selects some is
// served, and report.warnings says what was left out. Messages start with the path.
Result<SampleReport> SampleVideo(const std::string& path, const SampleOptions& options,
                                 const FrameSink& sink);

}  // namespace reel::pipeline
