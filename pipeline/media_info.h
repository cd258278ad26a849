// What a probe learns about a media file. Times are seconds (double) unless named *_pts.
// Every string is valid UTF-8 (tags that are not are read as Windows-1252), except `path`, which
// keeps the caller's bytes for the operating system (escape it for display: base/utf8.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/smart_resize.h"

namespace reel::pipeline {

enum class StreamType { kVideo, kAudio, kSubtitle, kData, kAttachment, kUnknown };

const char* StreamTypeName(StreamType type);

// Where a number came from, so callers can tell a measurement from a container's claim.
enum class FactSource { kStream, kContainer, kPacketIndex, kUnknown };

const char* FactSourceName(FactSource source);

// A file that ends before its container says it should: cut by a failed copy or download, or
// still being written. Set from what the container's own structure promises (Matroska/WebM
// segment size and cues, MP4/MOV top-level boxes and sample table, AVI RIFF chunks and index,
// the container's duration) against what the file holds and what reading found. A container's
// frame count alone never marks a file truncated (AVI counts dropped frames, for one).
struct Truncation {
  bool truncated = false;
  int64_t missing_bytes = 0;  // bytes the container declares past the end of the file (0: unknown)
  double missing_s = 0;       // media time lost: declared end minus the end of what was read
  // For people, e.g. "the file has 9837 bytes, its Matroska segment declares 32791 (22954
  // missing); video ends at 0.700 s of the 3.000 s the container declares (2.300 s missing)".
  std::string reason;
};

struct StreamInfo {
  int index = 0;  // the container's stream index
  StreamType type = StreamType::kUnknown;
  std::string codec;      // FFmpeg codec name, e.g. "h264", "mov_text"
  std::string language;   // from the stream's metadata, if any
  std::string title;      // the stream's "title" tag, if any
  double start_s = 0;     // first timestamp of the stream
  double duration_s = 0;  // 0 if unknown
  FactSource duration_source = FactSource::kUnknown;
  int64_t bit_rate = 0;

  // Video only.
  int width = 0;  // stored (coded) size, before rotation
  int height = 0;
  SampleAspect sample_aspect;  // the shape of one stored pixel (1:1 when the file does not say)
  int display_width = 0;       // the picture as shown: sample aspect applied, then upright
  int display_height = 0;
  double fps = 0;      // average frame rate (frames / second); 0 if unknown
  int rotation = 0;    // clockwise degrees to turn the picture upright: 0/90/180/270
  int64_t frames = 0;  // number of frames; 0 if unknown
  FactSource frames_source = FactSource::kUnknown;
  // Frames evenly spaced at `fps` (see FrameIndex::constant_rate), from the packet timestamps.
  bool constant_rate = true;
  std::string pixel_format;  // e.g. "yuv420p10le"
  // How the picture is scanned, as ffprobe's field_order says: "progressive", "tt" (interlaced,
  // top field first, coded and shown), "bb", "tb" (top coded first, bottom shown first), "bt";
  // "" when the stream does not say. Interlaced frames are deinterlaced when sampled
  // (ResizeOptions::deinterlace).
  std::string field_order;
  bool full_range = false;        // JPEG (full) rather than MPEG (limited) colour range
  bool attached_picture = false;  // cover art, not a real video stream

  // Audio only.
  int sample_rate = 0;
  int audio_channels = 0;
};

struct MediaInfo {
  std::string path;
  std::string format;  // FFmpeg demuxer name(s), e.g. "mov,mp4,m4a,3gp,3g2,mj2"
  std::string format_long;
  std::string title;  // the container's "title" tag, if any
  double start_s = 0;
  double duration_s = 0;  // the longest of the container's and the streams' durations
  int64_t size_bytes = 0;
  int64_t bit_rate = 0;
  std::vector<StreamInfo> streams;
  Truncation truncation;  // whether the file is cut short, and by how much

  // The index into `streams` of the video stream Reel samples (FFmpeg's "best" video stream,
  // never an attached picture), or nullopt if there is none.
  std::optional<int> best_video;
};

}  // namespace reel::pipeline
