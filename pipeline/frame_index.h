// The frame index of one video stream: every presented frame, in presentation order, built from
// the packets alone (no decoding). Sampling policies choose from it and the decoder uses it to
// plan the least work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/limits.h"

namespace reel::pipeline {

struct IndexedFrame {
  int64_t pts = 0;          // presentation timestamp, stream time base
  int64_t dts = 0;          // decode timestamp, stream time base (pts if absent)
  int decode_order = 0;     // position of its packet among the stream's kept packets
  bool keyframe = false;    // the packet is flagged as a random-access point
};

struct FrameIndex {
  int stream_index = -1;
  int time_base_num = 1;
  int time_base_den = 1;
  double avg_fps = 0;               // the stream's average frame rate (M3's `src_fps`)
  std::vector<IndexedFrame> frames; // presentation order (sorted by pts)
  // decode_to_presentation[d] = presentation index of the d-th packet in decode order.
  std::vector<int> decode_to_presentation;
  int discarded_packets = 0;        // packets an edit list hides (not presented)

  double PtsToSeconds(int64_t pts) const {
    return static_cast<double>(pts) * time_base_num / time_base_den;
  }
  double pts_s(int i) const { return PtsToSeconds(frames[i].pts); }
  // Seconds from the first presented frame.
  double time_s(int i) const { return PtsToSeconds(frames[i].pts - frames.front().pts); }
  // End of frame i's presentation interval (start of the next; the last frame lasts one
  // average frame duration).
  double end_time_s(int i) const;
  // Duration from the first frame's start to the last frame's end.
  double duration_s() const { return frames.empty() ? 0 : end_time_s(size() - 1); }
  int size() const { return static_cast<int>(frames.size()); }
  // The presented frame whose interval [time_s(i), end_time_s(i)) contains `t` (seconds from the
  // first frame), clamped to the first and last frames.
  int FrameAt(double t) const;
};

// Scans the packets of video stream `stream_index` of `path` (-1: the best video stream).
Result<FrameIndex> BuildFrameIndex(const std::string& path, int stream_index = -1,
                                   const MediaLimits& limits = {});

}  // namespace reel::pipeline
