// Is a file cut short? What the container's own structure promises (its declared size, its
// index, its duration) against what the file holds and what reading it found. Shared by the
// frame index and the probe.
#pragma once

#include <optional>
#include <string>

#include "pipeline/internal/declared_size.h"
#include "pipeline/media_info.h"

struct AVFormatContext;

namespace reel::pipeline::internal {

// The container family of an open demuxer.
ContainerFamily FamilyOf(const AVFormatContext* format);

// What reading the packets found.
struct ReadOutcome {
  std::string read_error;       // av_read_frame's error if reading stopped on one
  std::optional<double> end_s;  // end of the last packet read (seconds, the streams' own clock)
  const char* what = "video";   // what `end_s` measures, for the message
};

// Decides whether `path` (open as `format`) ends before its container says it should: reading
// stopped on an error; the declared size (ParseDeclaredSize) is larger than the file; index
// entries of `stream_index` (-1: every stream) point past the end (MP4 samples, AVI index,
// Matroska cues); or, for a Matroska file that states no size, the packets end well before its
// duration (more than 1 s and 2% short). Says how much is missing, in bytes and seconds where
// known. A container's frame count is never used.
Truncation CheckTruncation(AVFormatContext* format, const std::string& path, int stream_index,
                           const ReadOutcome& read);

// For a file FFmpeg cannot open: if its first bytes are a Matroska, AVI or MP4/MOV header that
// declares more bytes than the file has, says so ("the file has M bytes, its MP4 box 'mdat'
// declares N (K missing)"); else "". An MP4 cut before its 'moov' index cannot be read at all.
std::string CutShortHint(const std::string& path);

}  // namespace reel::pipeline::internal
