// Still images: JPEG (libjpeg-turbo, with EXIF orientation) and PNG (libpng) decoding, then a
// resize and both encoders. Invariants: no crash or sanitizer report (libpng and libjpeg report
// errors through longjmp: nothing may leak or be left half-built); a decoded image has a size
// within the limit and as many bytes as its size says; a failure is kCorruptData or
// kLimitExceeded.
#include "pipeline/image_codec.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr int64_t kMaxPixels = 1 << 20;
  auto image = reel::pipeline::DecodeImage(data, size, "fuzz", kMaxPixels);
  if (!image.ok()) {
    const reel::ErrorCode code = image.status().code();
    Require(code == reel::ErrorCode::kCorruptData || code == reel::ErrorCode::kLimitExceeded ||
                code == reel::ErrorCode::kUnsupported,
            "image error kind", image.status().ToString());
    return 0;
  }
  Require(
      image->width > 0 && image->height > 0 && int64_t{image->width} * image->height <= kMaxPixels,
      "decoded size");
  Require(image->channels == 3, "decoded to RGB");
  Require(image->pixels.size() == image->stride() * image->height, "pixel buffer size");
  auto small = reel::pipeline::ResizeImage(*image, 28, 28);
  Require(small.ok(), "resize of a decoded image", small.status().ToString());
  Require(reel::pipeline::EncodeJpeg(*small, 80).ok(), "JPEG encode");
  Require(reel::pipeline::EncodePng(*small).ok(), "PNG encode");
  return 0;
}
