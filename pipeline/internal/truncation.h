// Is a file cut short? What the container's own structure promises (its declared size, its
// index, its duration) against what the file holds and what reading it found. Shared by the
// frame index and the probe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "pipeline/media_info.h"

struct AVFormatContext;

namespace reel::pipeline::internal {

// The containers whose headers state how long the file is.
enum class ContainerFamily { kOther, kMatroska, kAvi, kMp4 };

ContainerFamily FamilyOf(const AVFormatContext* format);

struct DeclaredSize {
  int64_t bytes = 0;  // where the container's structure says the file ends
  std::string what;   // which structure says so, e.g. "Matroska segment"
};

// Reads `size` bytes at `offset` into `out`; false if they are not all there.
using ReadAt = std::function<bool(int64_t offset, size_t size, uint8_t* out)>;

// The file length the container's headers declare, read from them alone (a few small reads):
// Matroska/WebM: the EBML header and the first Segment's size; AVI: the chain of RIFF chunks
// (`AVI `, then the `AVIX` extensions of OpenDML files); MP4/MOV/3GP: the top-level boxes,
// walked from the start. The walk stops at data that is not a header of this kind (trailing
// bytes), so only a header whose stated size runs past the end of the file can declare more than
// the file holds. nullopt when the family keeps no size, a size is "unknown" (a live-written
// Matroska file), or the first header does not parse. Never reads more than `file_size` allows.
std::optional<DeclaredSize> ParseDeclaredSize(ContainerFamily family, int64_t file_size,
                                              const ReadAt& read);

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

}  // namespace reel::pipeline::internal
