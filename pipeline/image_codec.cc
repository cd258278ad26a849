// JPEG through libjpeg-turbo's TurboJPEG API, PNG through libpng's simplified (png_image) API,
// resizing through swscale (image_resize.cc). This is the only file in Reel that includes
// turbojpeg.h or png.h.
//
// Every function here is thread-safe: each call creates and owns its own library handles.
//
// Decisions worth knowing:
// - JPEG warnings are errors. libjpeg reports damaged entropy-coded data ("bad Huffman code",
//   "premature end of JPEG file", "N extraneous bytes before marker") as warnings and carries on,
//   filling what it could not decode with grey or garbage. TurboJPEG does not say how much was
//   lost, so we stop at the first warning (TJFLAG_STOPONWARNING) and fail with kCorruptData
//   quoting it. The cost: the rare file with harmless junk before its end marker is rejected too.
// - PNG warnings are not errors. libpng makes every defect in the pixel data (bad IDAT CRC,
//   zlib errors, too little data, truncation) a hard error; its warnings concern ancillary chunks
//   (an odd ICC profile, a bad tEXt CRC) and leave the pixels intact.
// - Adobe CMYK/YCCK JPEGs store inverted ink values (the Adobe APP14 marker says so); CMYK JPEGs
//   without that marker are taken as plain ink. Conversion to RGB is the naive, profile-free
//   R = (1 - C)(1 - K), as PIL and FFmpeg do.
// - 16-bit PNGs without gAMA/sRGB chunks are read as sRGB (PNG_IMAGE_FLAG_16BIT_sRGB), not as
//   libpng's default of linear light, so a 16-bit file gives the same 8-bit pixels as its 8-bit
//   twin. Alpha is composited on black by libpng (in linear light, as the simplified API does).
// - Encoded JPEGs use 4:2:0 chroma for RGB, like most encoders.
// - EXIF orientation is not applied: pixels come out in stored order.

#include "pipeline/image_codec.h"

#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "base/file_util.h"
#include "pipeline/internal/exif.h"
#include "pipeline/internal/image_checks.h"

namespace reel::pipeline {
namespace {

using internal::CheckImage;
using internal::CheckPixelLimit;
using internal::SizeText;

// ---------------------------------------------------------------------------------------------
// JPEG.

struct TjHandleDeleter {
  void operator()(void* handle) const { tjDestroy(handle); }
};
using UniqueTjHandle = std::unique_ptr<void, TjHandleDeleter>;  // tjhandle is a void*

std::string TjError(const UniqueTjHandle& handle) { return tjGetErrorStr2(handle.get()); }

// True if the JPEG has an Adobe APP14 segment before its first scan. Photoshop and every other
// writer of such files store CMYK inverted (255 = no ink).
bool HasAdobeMarker(const uint8_t* data, size_t size) {
  size_t pos = 2;  // after SOI
  while (pos + 4 <= size) {
    if (data[pos] != 0xFF) return false;
    uint8_t marker = data[pos + 1];
    if (marker == 0xFF) {  // fill byte
      ++pos;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) return false;          // SOS or EOI: no more headers
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {  // segments without a length
      pos += 2;
      continue;
    }
    size_t length = (static_cast<size_t>(data[pos + 2]) << 8) | data[pos + 3];
    if (length < 2) return false;
    if (marker == 0xEE && length >= 2 + 5 && pos + 4 + 5 <= size &&
        std::memcmp(data + pos + 4, "Adobe", 5) == 0) {
      return true;
    }
    pos += 2 + length;
  }
  return false;
}

uint8_t MulDiv255(int a, int b) { return static_cast<uint8_t>((a * b + 127) / 255); }

// Converts packed CMYK (4 bytes a pixel) to packed RGB in place; `pixels` shrinks to 3 bytes a
// pixel. Writing pixel i at 3i never overtakes reading it at 4i.
void CmykToRgbInPlace(std::vector<uint8_t>& pixels, bool inverted) {
  size_t count = pixels.size() / 4;
  uint8_t* p = pixels.data();
  for (size_t i = 0; i < count; ++i) {
    int c = p[4 * i], m = p[4 * i + 1], y = p[4 * i + 2], k = p[4 * i + 3];
    if (!inverted) {
      c = 255 - c;
      m = 255 - m;
      y = 255 - y;
      k = 255 - k;
    }
    // Now each value is 255 - ink.
    p[3 * i] = MulDiv255(c, k);
    p[3 * i + 1] = MulDiv255(m, k);
    p[3 * i + 2] = MulDiv255(y, k);
  }
  pixels.resize(count * 3);
}

Result<Image> DecodeJpeg(const uint8_t* data, size_t size, const std::string& name,
                         int64_t max_pixels) {
  UniqueTjHandle handle(tjInitDecompress());
  if (!handle) {
    return Internal(name + ": cannot create a JPEG decoder: " + tjGetErrorStr2(nullptr));
  }

  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle.get(), data, size, &width, &height, &subsampling, &colorspace) !=
      0) {
    return CorruptData(name + ": bad JPEG header: " + TjError(handle));
  }
  if (width <= 0 || height <= 0) {
    return CorruptData(name + ": JPEG claims to be " + SizeText(width, height));
  }
  REEL_RETURN_IF_ERROR(CheckPixelLimit(width, height, max_pixels, name));

  bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  int pixel_format = cmyk ? TJPF_CMYK : TJPF_RGB;  // gray is expanded to RGB by libjpeg
  Image image;
  image.width = width;
  image.height = height;
  image.channels = 3;
  image.pixels.resize(static_cast<size_t>(width) * height * tjPixelSize[pixel_format]);
  // LIMITSCANS bounds the work a hostile progressive file can cause; see the note at the top for
  // STOPONWARNING.
  int flags = TJFLAG_ACCURATEDCT | TJFLAG_LIMITSCANS | TJFLAG_STOPONWARNING;
  if (tjDecompress2(handle.get(), data, size, image.pixels.data(), width, /*pitch=*/0, height,
                    pixel_format, flags) != 0) {
    bool warning = tjGetErrorCode(handle.get()) == TJERR_WARNING;
    return CorruptData(name + (warning ? ": damaged JPEG data: " : ": cannot decode JPEG: ") +
                       TjError(handle));
  }
  if (cmyk) CmykToRgbInPlace(image.pixels, HasAdobeMarker(data, size));
  return image;
}

// ---------------------------------------------------------------------------------------------
// PNG.
//
// libpng reports errors by longjmp to a setjmp point. A longjmp that crosses a C++ frame skips
// that frame's destructors, so a function that calls setjmp must not own anything with a
// destructor (a vector, a string, a unique_ptr) while the jump can happen. We avoid the problem
// entirely: the simplified png_image API does its setjmp inside libpng (png_safe_execute) and
// returns a flag and a message, so no longjmp ever crosses our frames and our code may use RAII.

// Owns a png_image's libpng state; png_image_free is idempotent and a no-op once libpng has
// released the state itself (after png_image_finish_read, after an error).
class PngImage {
 public:
  PngImage() {
    std::memset(&image_, 0, sizeof(image_));
    image_.version = PNG_IMAGE_VERSION;
  }
  ~PngImage() { png_image_free(&image_); }
  PngImage(const PngImage&) = delete;
  PngImage& operator=(const PngImage&) = delete;

  png_image* get() { return &image_; }
  png_image* operator->() { return &image_; }
  std::string message() const { return image_.message; }

 private:
  png_image image_;
};

Result<Image> DecodePng(const uint8_t* data, size_t size, const std::string& name,
                        int64_t max_pixels) {
  PngImage png;
  if (!png_image_begin_read_from_memory(png.get(), data, size)) {
    return CorruptData(name + ": bad PNG header: " + png.message());
  }
  if (png->width == 0 || png->height == 0) {
    return CorruptData(name + ": PNG claims to be " + SizeText(png->width, png->height));
  }
  REEL_RETURN_IF_ERROR(CheckPixelLimit(png->width, png->height, max_pixels, name));

  png->format = PNG_FORMAT_RGB;  // gray, palette, 16-bit and alpha are converted by libpng
  png->flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
  Image image = MakeImage(static_cast<int>(png->width), static_cast<int>(png->height), 3);
  png_color black = {0, 0, 0};
  if (!png_image_finish_read(png.get(), &black, image.pixels.data(),
                             static_cast<png_int_32>(image.stride()), /*colormap=*/nullptr)) {
    return CorruptData(name + ": damaged PNG data: " + png.message());
  }
  return image;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public functions.

ImageFormat SniffImageFormat(const uint8_t* data, size_t size) {
  static constexpr uint8_t kJpeg[] = {0xFF, 0xD8, 0xFF};
  static constexpr uint8_t kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (data == nullptr) return ImageFormat::kUnknown;
  if (size >= sizeof(kJpeg) && std::memcmp(data, kJpeg, sizeof(kJpeg)) == 0) {
    return ImageFormat::kJpeg;
  }
  if (size >= sizeof(kPng) && std::memcmp(data, kPng, sizeof(kPng)) == 0) return ImageFormat::kPng;
  return ImageFormat::kUnknown;
}

Result<Image> DecodeImage(const uint8_t* data, size_t size, const std::string& name,
                          int64_t max_pixels) {
  if (data == nullptr || size == 0) return CorruptData(name + ": empty file");
  switch (SniffImageFormat(data, size)) {
    case ImageFormat::kJpeg: {
      REEL_ASSIGN_OR_RETURN(Image image, DecodeJpeg(data, size, name, max_pixels));
      int orientation = internal::JpegExifOrientation(data, size);
      if (orientation != 1) return internal::ApplyExifOrientation(image, orientation);
      return image;
    }
    case ImageFormat::kPng:
      return DecodePng(data, size, name, max_pixels);
    case ImageFormat::kUnknown:
      break;
  }
  return CorruptData(name + ": not a JPEG or PNG image");
}

Result<Image> ReadImageFile(const std::string& path, int64_t max_pixels) {
  // A file larger than the raw 16-bit RGBA pixels of the largest accepted image plus 16 MiB of
  // metadata is refused before it is read into memory.
  constexpr uint64_t kHeaders = 16 << 20;
  uint64_t pixels = static_cast<uint64_t>(std::max<int64_t>(max_pixels, 0));
  uint64_t max_bytes = pixels > (UINT64_MAX - kHeaders) / 8 ? UINT64_MAX : pixels * 8 + kHeaders;
  REEL_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path, max_bytes));
  return DecodeImage(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), path,
                     max_pixels);
}

Result<std::vector<uint8_t>> EncodeJpeg(const Image& image, int quality) {
  REEL_RETURN_IF_ERROR(CheckImage(image, "EncodeJpeg"));
  if (quality < 1 || quality > 100) {
    return InvalidArgument("EncodeJpeg: quality " + std::to_string(quality) + " is outside 1..100");
  }
  UniqueTjHandle handle(tjInitCompress());
  if (!handle) {
    return Internal(std::string("cannot create a JPEG encoder: ") + tjGetErrorStr2(nullptr));
  }

  bool gray = image.channels == 1;
  int subsampling = gray ? TJSAMP_GRAY : TJSAMP_420;
  unsigned long buffer_size = tjBufSize(image.width, image.height, subsampling);
  if (buffer_size == static_cast<unsigned long>(-1)) {
    return InvalidArgument("EncodeJpeg: " + SizeText(image.width, image.height) +
                           " is too large for JPEG: " + TjError(handle));
  }
  // tjBufSize is the worst case, so with NOREALLOC TurboJPEG writes into our vector and never
  // allocates a buffer we would have to tjFree.
  std::vector<uint8_t> jpeg(buffer_size);
  unsigned char* out = jpeg.data();
  unsigned long out_size = buffer_size;
  if (tjCompress2(handle.get(), image.pixels.data(), image.width, static_cast<int>(image.stride()),
                  image.height, gray ? TJPF_GRAY : TJPF_RGB, &out, &out_size, subsampling, quality,
                  TJFLAG_NOREALLOC | TJFLAG_ACCURATEDCT) != 0) {
    return Internal("EncodeJpeg: " + TjError(handle));
  }
  jpeg.resize(out_size);
  return jpeg;
}

Result<std::vector<uint8_t>> EncodePng(const Image& image) {
  REEL_RETURN_IF_ERROR(CheckImage(image, "EncodePng"));
  PngImage png;
  png->width = static_cast<png_uint_32>(image.width);
  png->height = static_cast<png_uint_32>(image.height);
  png->format = image.channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  // An upper bound on the encoded size, so one compression pass suffices.
  png_alloc_size_t size = PNG_IMAGE_PNG_SIZE_MAX(*png.get());
  std::vector<uint8_t> bytes(size);
  if (!png_image_write_to_memory(png.get(), bytes.data(), &size, /*convert_to_8bit=*/0,
                                 image.pixels.data(), static_cast<png_int_32>(image.stride()),
                                 /*colormap=*/nullptr)) {
    return Internal("EncodePng: " + png.message());
  }
  bytes.resize(size);
  return bytes;
}

Status WriteImageFile(const std::string& path, const Image& image, int jpeg_quality) {
  std::string extension;
  if (size_t dot = path.rfind('.'); dot != std::string::npos && path.find('/', dot) == path.npos) {
    extension = path.substr(dot + 1);
  }
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  bool jpeg = extension == "jpg" || extension == "jpeg";
  if (!jpeg && extension != "png") {
    return InvalidArgument(path + ": unknown image extension (use .jpg, .jpeg or .png)");
  }
  Result<std::vector<uint8_t>> encoded = jpeg ? EncodeJpeg(image, jpeg_quality) : EncodePng(image);
  if (!encoded.ok()) return encoded.status().WithPrefix(path);
  return WriteFileAtomically(
      path, std::string_view(reinterpret_cast<const char*>(encoded->data()), encoded->size()));
}

}  // namespace reel::pipeline
