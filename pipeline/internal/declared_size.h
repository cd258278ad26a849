// The file length a container's own headers declare (Matroska/WebM, AVI, MP4/MOV, Ogg), read from
// those headers alone. Pure: no FFmpeg, reads through a callback, so it can be fuzzed on bytes
// (tests/fuzz/declared_size_fuzz.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace reel::pipeline::internal {

// The containers whose headers state how long the file is.
enum class ContainerFamily { kOther, kMatroska, kAvi, kMp4, kOgg };

struct DeclaredSize {
  int64_t bytes = 0;  // where the container's structure says the file ends
  std::string what;   // which structure says so, e.g. "Matroska segment"
  // Ogg: logical streams whose first page (beginning-of-stream flag) was seen but never their
  // last (end-of-stream flag): the file stops between pages before those streams end.
  int open_streams = 0;
};

// Reads `size` bytes at `offset` into `out`; false if they are not all there.
using ReadAt = std::function<bool(int64_t offset, size_t size, uint8_t* out)>;

// The file length the container's headers declare, read from them alone (a few small reads):
// Matroska/WebM: the EBML header and the first Segment's size; AVI: the chain of RIFF chunks
// (`AVI `, then the `AVIX` extensions of OpenDML files); MP4/MOV/3GP: the top-level boxes,
// walked from the start. The walk stops at data that is not a header of this kind (trailing
// bytes), so only a header whose stated size runs past the end of the file can declare more than
// the file holds. Ogg: every page header, walked from the start (27 bytes, the segment table,
// then the page's body), with the streams begun and ended; bytes that are not a page are skipped
// up to the next page within 64 KB, and further junk ends the walk without a verdict on open
// streams. nullopt when the family keeps no size, a size is "unknown" (a live-written
// Matroska file), or the first header does not parse. Never reads more than `file_size` allows.
std::optional<DeclaredSize> ParseDeclaredSize(ContainerFamily family, int64_t file_size,
                                              const ReadAt& read);

}  // namespace reel::pipeline::internal
