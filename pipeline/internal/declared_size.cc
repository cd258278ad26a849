#include "pipeline/internal/declared_size.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace reel::pipeline::internal {
namespace {

// Enough top-level structures for any real file; a longer chain is not walked (unknown).
constexpr int kMaxHeaders = 1 << 20;

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint32_t LittleEndian32(const uint8_t* p) {
  return (uint32_t{p[3]} << 24) | (uint32_t{p[2]} << 16) | (uint32_t{p[1]} << 8) | p[0];
}

bool PrintableTag(const uint8_t* p) {
  return std::all_of(p, p + 4, [](uint8_t c) { return c >= 0x20 && c <= 0x7e; });
}

// MP4/MOV: size(4) type(4) [largesize(8) when size == 1]; size 0 runs to the end of the file.
std::optional<DeclaredSize> Mp4Size(int64_t file_size, const ReadAt& read) {
  int64_t offset = 0;
  std::string last;
  for (int n = 0; n < kMaxHeaders; ++n) {
    if (file_size - offset < 8) return DeclaredSize{offset, "MP4 box '" + last + "'"};
    uint8_t header[16];
    if (!read(offset, 8, header)) return std::nullopt;
    if (!PrintableTag(header + 4)) {
      if (n == 0) return std::nullopt;
      return DeclaredSize{offset, "MP4 box '" + last + "'"};  // trailing bytes, not a box
    }
    last.assign(reinterpret_cast<const char*>(header + 4), 4);
    uint64_t size = BigEndian32(header);
    uint64_t header_size = 8;
    if (size == 0) return DeclaredSize{file_size, "MP4 box '" + last + "'"};
    if (size == 1) {
      header_size = 16;
      if (file_size - offset < 16) return DeclaredSize{offset + 16, "MP4 box '" + last + "'"};
      if (!read(offset + 8, 8, header + 8)) return std::nullopt;
      size = (uint64_t{BigEndian32(header + 8)} << 32) | BigEndian32(header + 12);
    }
    if (size < header_size || size > static_cast<uint64_t>(INT64_MAX - offset)) {
      return n == 0 ? std::nullopt
                    : std::optional<DeclaredSize>(DeclaredSize{offset, "MP4 box '" + last + "'"});
    }
    offset += static_cast<int64_t>(size);
    if (offset >= file_size) return DeclaredSize{offset, "MP4 box '" + last + "'"};
  }
  return std::nullopt;
}

// AVI: 'RIFF' size 'AVI ', then OpenDML's 'RIFF' size 'AVIX' chunks. A chunk's data is padded to
// an even length; the pad byte of the last chunk is not required.
std::optional<DeclaredSize> AviSize(int64_t file_size, const ReadAt& read) {
  int64_t offset = 0;
  for (int n = 0; n < kMaxHeaders; ++n) {
    uint8_t header[12];
    if (file_size - offset < 12 || !read(offset, 12, header) ||
        std::memcmp(header, "RIFF", 4) != 0 ||
        (std::memcmp(header + 8, "AVI ", 4) != 0 && std::memcmp(header + 8, "AVIX", 4) != 0)) {
      if (n == 0) return std::nullopt;
      return DeclaredSize{offset, "RIFF chunks"};
    }
    const int64_t size = LittleEndian32(header + 4);
    const int64_t end = offset + 8 + size;
    if (end >= file_size)
      return DeclaredSize{end, n == 0 ? "RIFF 'AVI ' chunk" : "RIFF 'AVIX' chunk"};
    offset = end + (size & 1);
  }
  return std::nullopt;
}

// EBML variable-length integers. An element ID keeps its length marker (1-4 bytes); a size drops
// it (1-8 bytes), and all value bits set means "unknown".
bool ReadVint(int64_t file_size, const ReadAt& read, int64_t* offset, int max_length,
              bool keep_marker, uint64_t* value, bool* unknown) {
  uint8_t first;
  if (*offset >= file_size || !read(*offset, 1, &first) || first == 0) return false;
  int length = 1;
  while (!(first & (0x80 >> (length - 1)))) ++length;
  if (length > max_length) return false;
  uint8_t bytes[8] = {first};
  if (length > 1 && (file_size - *offset < length || !read(*offset + 1, length - 1, bytes + 1))) {
    return false;
  }
  uint64_t v = keep_marker ? first : (first & (0xff >> length));
  bool all_ones = (first & (0xff >> length)) == (0xff >> length);
  for (int i = 1; i < length; ++i) {
    v = (v << 8) | bytes[i];
    all_ones = all_ones && bytes[i] == 0xff;
  }
  *offset += length;
  *value = v;
  if (unknown != nullptr) *unknown = all_ones;
  return true;
}

std::optional<DeclaredSize> MatroskaSize(int64_t file_size, const ReadAt& read) {
  constexpr uint64_t kEbml = 0x1A45DFA3, kSegment = 0x18538067, kVoid = 0xEC;
  int64_t offset = 0;
  bool first = true;
  for (int n = 0; n < 64; ++n) {
    uint64_t id = 0, size = 0;
    bool unknown = false;
    if (!ReadVint(file_size, read, &offset, 4, true, &id, nullptr)) return std::nullopt;
    if (first && id != kEbml) return std::nullopt;
    first = false;
    if (!ReadVint(file_size, read, &offset, 8, false, &size, &unknown)) return std::nullopt;
    if (id == kSegment) {
      if (unknown || size > static_cast<uint64_t>(INT64_MAX - offset)) return std::nullopt;
      return DeclaredSize{offset + static_cast<int64_t>(size), "Matroska segment"};
    }
    if ((id != kEbml && id != kVoid) || unknown ||
        size > static_cast<uint64_t>(INT64_MAX - offset)) {
      return std::nullopt;
    }
    offset += static_cast<int64_t>(size);
  }
  return std::nullopt;
}

// Ogg: pages of "OggS", version, flags (1 continued, 2 first page of a stream, 4 last page),
// granule position (8), serial number (4), sequence (4), CRC (4), segment count, segment table.
std::optional<DeclaredSize> OggSize(int64_t file_size, const ReadAt& read) {
  constexpr int kHeader = 27;
  constexpr int kResyncBytes = 64 * 1024;
  std::vector<uint32_t> open;  // serials begun and not yet ended
  int64_t offset = 0;
  // A page that starts at `offset` and runs to `end`.
  auto page_at = [&](int64_t end) {
    return DeclaredSize{end, "Ogg page at byte " + std::to_string(offset),
                        static_cast<int>(open.size())};
  };
  for (int n = 0; n < kMaxHeaders; ++n) {
    if (offset >= file_size) {
      return DeclaredSize{offset, "Ogg pages", static_cast<int>(open.size())};
    }
    uint8_t header[kHeader];
    const int64_t left = file_size - offset;
    const int64_t have = std::min<int64_t>(left, kHeader);
    if (!read(offset, static_cast<size_t>(have), header)) return std::nullopt;
    const bool capture = have >= 4 && std::memcmp(header, "OggS", 4) == 0;
    if (capture && have < kHeader) return page_at(offset + kHeader);  // a header cut short
    if (!capture || header[4] != 0) {
      if (n == 0) return std::nullopt;
      // Not a page: look for the next one close by, else the rest is trailing bytes.
      const int64_t span = std::min<int64_t>(file_size - offset, kResyncBytes);
      std::vector<uint8_t> bytes(static_cast<size_t>(span));
      int64_t next = -1;
      if (span >= 4 && read(offset, bytes.size(), bytes.data())) {
        for (int64_t i = 1; i + 4 <= span; ++i) {
          if (std::memcmp(bytes.data() + i, "OggS", 4) == 0) {
            next = offset + i;
            break;
          }
        }
      }
      if (next < 0) {
        open.clear();  // no verdict on streams the junk may have ended
        return page_at(offset);
      }
      offset = next;
      continue;
    }
    const int segments = header[26];
    if (left < kHeader + segments) return page_at(offset + kHeader + segments);
    uint8_t lacing[255];
    if (segments > 0 && !read(offset + kHeader, segments, lacing)) return std::nullopt;
    int64_t body = 0;
    for (int i = 0; i < segments; ++i) body += lacing[i];
    const uint32_t serial = LittleEndian32(header + 14);
    const uint8_t flags = header[5];
    if ((flags & 2) && std::find(open.begin(), open.end(), serial) == open.end()) {
      open.push_back(serial);
    }
    if (flags & 4) open.erase(std::remove(open.begin(), open.end(), serial), open.end());
    const int64_t end = offset + kHeader + segments + body;
    if (end > file_size) return page_at(end);
    offset = end;
  }
  return std::nullopt;
}

}  // namespace

std::optional<DeclaredSize> ParseDeclaredSize(ContainerFamily family, int64_t file_size,
                                              const ReadAt& read) {
  if (file_size <= 0) return std::nullopt;
  switch (family) {
    case ContainerFamily::kMatroska:
      return MatroskaSize(file_size, read);
    case ContainerFamily::kAvi:
      return AviSize(file_size, read);
    case ContainerFamily::kMp4:
      return Mp4Size(file_size, read);
    case ContainerFamily::kOgg:
      return OggSize(file_size, read);
    case ContainerFamily::kOther:
      break;
  }
  return std::nullopt;
}

}  // namespace reel::pipeline::internal
