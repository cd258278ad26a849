// The frame index of one video stream, built from its packets alone (no decoding): every packet in
// decode order, and every presented frame in presentation order. Sampling policies choose from it
// and the decoder uses it to plan the least work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/limits.h"
#include "pipeline/media_info.h"

namespace reel::pipeline {

struct IndexedPacket {
  int64_t pts = 0;         // presentation timestamp on the continuous timeline, stream time base
  int64_t dts = 0;         // decode timestamp (pts when the container gives none), continuous
  int64_t raw_pts = 0;     // the timestamp as the container stores it (what the decoder returns)
  int segment = 0;         // timestamp segment (a new one starts where timestamps jump back)
  bool keyframe = false;   // a random-access point
  bool discarded = false;  // an edit list hides it: decoded (others may reference it), not shown
  int frame = -1;          // its presentation index, or -1 when discarded
};

struct IndexedFrame {
  int64_t pts = 0;       // presentation timestamp, stream time base
  int64_t duration = 0;  // packet duration, stream time base (0 if unknown)
  int packet = 0;        // index into FrameIndex::packets (decode order)
  bool keyframe = false;
};

struct FrameIndex {
  int stream_index = -1;
  int time_base_num = 1;
  int time_base_den = 1;
  double avg_fps = 0;                  // the stream's average frame rate (M3's `src_fps`)
  bool has_timestamps = true;          // false: synthesized from decode order (raw streams)
  std::vector<IndexedPacket> packets;  // decode order, all packets of the stream
  std::vector<IndexedFrame> frames;    // presentation order (ascending pts)
  int discarded_packets = 0;           // packets an edit list hides
  int corrupt_packets = 0;             // packets the demuxer flagged as corrupt
  // Where the container's timestamps jump backwards (concatenated recordings), a new segment
  // starts and is moved to follow the previous one: segment_offsets[s] is added to raw times.
  std::vector<int64_t> segment_offsets = {0};
  std::string read_error;  // why reading stopped before a clean end of file, if so
  // Whether the file ends before its container says it should, and by how much. Never decided by
  // a container's frame count: the frames counted are the frames that are there.
  Truncation truncation;
  bool truncated() const { return truncation.truncated; }

  // What the bitstream says, for decoding (internal/bitstream_scan.h).
  // Presentation order and times came from the bitstream, not the container: the codec's name
  // ("h264", "hevc", "mpeg4", "mpeg2video": the container's times follow decode order though the
  // pictures are reordered, so they are decode times), or "mpeg4-packed" (DivX/Xvid packed
  // B-frames); "" = the container's.
  std::string order_source;
  // MPEG-4 Part 2 packed B-frames: packets[i] describes the VOP FFmpeg's decoder decodes for the
  // i-th packet (a B-VOP packed into the packet before, for an N-VOP placeholder), which the
  // decoder is handed on its own.
  bool packed_bframes = false;
  // H.264: the stream's first packet. A decoder learns the encoder's version from x264's SEI in
  // it (and with it which encoder bugs to work around), so every decoder that starts at a later
  // keyframe is shown this packet first, as a sequential decode would have been.
  std::vector<uint8_t> priming_packet;

  int size() const { return static_cast<int>(frames.size()); }
  double PtsToSeconds(int64_t pts) const {
    return static_cast<double>(pts) * time_base_num / time_base_den;
  }
  // The frame's presentation timestamp in seconds (as ffprobe's pts_time).
  double pts_s(int i) const { return PtsToSeconds(frames[i].pts); }
  // Seconds from the first presented frame.
  double time_s(int i) const { return PtsToSeconds(frames[i].pts - frames.front().pts); }
  // End of frame i's presentation interval: the next frame's start; the last frame lasts its
  // packet duration, else one average frame.
  double end_time_s(int i) const;
  // From the first frame's start to the last frame's end.
  double duration_s() const { return frames.empty() ? 0 : end_time_s(size() - 1); }
  // The frame whose interval [time_s(i), end_time_s(i)) contains `t` (seconds from the first
  // frame); times before the first frame give 0, times past the end give the last frame.
  int FrameAt(double t) const;
  // The first frame with time_s >= t (size() if none).
  int FirstFrameAtOrAfter(double t) const;
  // Whether the frames are evenly spaced at the average rate, so that frame i is shown at
  // i / avg_fps: true when every frame's time_s lies within one frame period (1 / avg_fps), or
  // 1% of i / avg_fps if that is more, of i / avg_fps. False for streams whose frames drift from
  // that grid: dropped-frame AVI slots, variable-rate screen recordings with still stretches, an
  // average rate the frames do not follow. Streams without timestamps (presented at the average
  // rate) are constant-rate; so are empty and one-frame streams. O(frames).
  bool constant_rate() const;
};

// The same test on a list of presentation times (seconds, ascending), for callers without an
// index (the probe).
bool IsConstantRate(const std::vector<double>& times_s, double avg_fps);

// Scans the packets of video stream `stream_index` of `path` (-1: the best video stream).
// Errors name the path: not media, no video stream, time limit.
Result<FrameIndex> BuildFrameIndex(const std::string& path, int stream_index = -1,
                                   const MediaLimits& limits = {});

}  // namespace reel::pipeline
