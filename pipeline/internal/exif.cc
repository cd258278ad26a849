#include "pipeline/internal/exif.h"

#include <cstring>

namespace reel::pipeline::internal {
namespace {

// Reads a 16- or 32-bit value in the TIFF block's byte order, or returns false past the end.
struct Tiff {
  const uint8_t* data;
  size_t size;
  bool little_endian;

  bool U16(size_t at, uint32_t* out) const {
    if (at + 2 > size) return false;
    *out = little_endian ? (data[at] | data[at + 1] << 8) : (data[at] << 8 | data[at + 1]);
    return true;
  }
  bool U32(size_t at, uint32_t* out) const {
    if (at + 4 > size) return false;
    const uint8_t* p = data + at;
    *out = little_endian ? (p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24)
                         : (static_cast<uint32_t>(p[0]) << 24 | p[1] << 16 | p[2] << 8 | p[3]);
    return true;
  }
};

int OrientationFromTiff(const uint8_t* data, size_t size) {
  if (size < 8) return 1;
  Tiff tiff{data, size, false};
  if (std::memcmp(data, "II", 2) == 0) {
    tiff.little_endian = true;
  } else if (std::memcmp(data, "MM", 2) != 0) {
    return 1;
  }
  uint32_t ifd = 0, entries = 0;
  if (!tiff.U32(4, &ifd) || !tiff.U16(ifd, &entries)) return 1;
  for (uint32_t i = 0; i < entries && i < 512; ++i) {
    size_t entry = ifd + 2 + 12 * static_cast<size_t>(i);
    uint32_t tag = 0, type = 0, value = 0;
    if (!tiff.U16(entry, &tag) || !tiff.U16(entry + 2, &type)) return 1;
    if (tag != 0x0112) continue;
    if (type != 3 || !tiff.U16(entry + 8, &value)) return 1;  // SHORT, stored in the entry
    return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
  }
  return 1;
}

}  // namespace

int JpegExifOrientation(const uint8_t* data, size_t size) {
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 1;
  size_t pos = 2;
  while (pos + 4 <= size) {
    if (data[pos] != 0xFF) return 1;
    uint8_t marker = data[pos + 1];
    if (marker == 0xFF) {
      ++pos;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) return 1;
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
      pos += 2;
      continue;
    }
    size_t length = (static_cast<size_t>(data[pos + 2]) << 8) | data[pos + 3];
    if (length < 2 || pos + 2 + length > size) return 1;
    if (marker == 0xE1 && length >= 2 + 6 && std::memcmp(data + pos + 4, "Exif\0\0", 6) == 0) {
      return OrientationFromTiff(data + pos + 10, length - 8);
    }
    pos += 2 + length;
  }
  return 1;
}

Image ApplyExifOrientation(const Image& image, int orientation) {
  if (orientation <= 1 || orientation > 8) return image;
  const int w = image.width, h = image.height, c = image.channels;
  const bool swap = orientation >= 5;
  Image out = MakeImage(swap ? h : w, swap ? w : h, c);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int ox = x, oy = y;
      switch (orientation) {
        case 2:
          ox = w - 1 - x;
          break;  // mirror
        case 3:
          ox = w - 1 - x;
          oy = h - 1 - y;
          break;  // rotate 180
        case 4:
          oy = h - 1 - y;
          break;  // flip
        case 5:
          ox = y;
          oy = x;
          break;  // transpose
        case 6:
          ox = h - 1 - y;
          oy = x;
          break;  // rotate 90 clockwise
        case 7:
          ox = h - 1 - y;
          oy = w - 1 - x;
          break;  // transverse
        case 8:
          ox = y;
          oy = w - 1 - x;
          break;  // rotate 270 clockwise
      }
      std::memcpy(out.row(oy) + static_cast<size_t>(ox) * c,
                  image.row(y) + static_cast<size_t>(x) * c, c);
    }
  }
  return out;
}

}  // namespace reel::pipeline::internal
