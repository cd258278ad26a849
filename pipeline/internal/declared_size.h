// The file length a container's own headers declare (Matroska/WebM, AVI, MP4/MOV), read from
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
enum class ContainerFamily { kOther, kMatroska, kAvi, kMp4 };

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

}  // namespace reel::pipeline::internal
