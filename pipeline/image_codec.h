// Still images in and out: JPEG through libjpeg-turbo's TurboJPEG API, PNG through libpng.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/image.h"

namespace reel::pipeline {

enum class ImageFormat { kJpeg, kPng, kUnknown };

// Recognises JPEG and PNG by their first bytes.
ImageFormat SniffImageFormat(const uint8_t* data, size_t size);

// Decodes a JPEG or PNG to RGB (channels == 3): grayscale, CMYK/YCCK, palette, 16-bit and alpha
// inputs are converted (alpha is dropped, composited on black). JPEGs come out upright: their EXIF
// orientation is applied. `name` prefixes error messages.
// Errors: kCorruptData for damaged or unrecognised data, kLimitExceeded past `max_pixels`.
Result<Image> DecodeImage(const uint8_t* data, size_t size, const std::string& name,
                          int64_t max_pixels = 1LL << 26);
Result<Image> ReadImageFile(const std::string& path, int64_t max_pixels = 1LL << 26);

// Encodes an RGB or gray image. `quality` is 1..100 (JPEG only).
Result<std::vector<uint8_t>> EncodeJpeg(const Image& image, int quality = 90);
Result<std::vector<uint8_t>> EncodePng(const Image& image);

// Encodes by the extension of `path` (.jpg/.jpeg or .png) and writes atomically.
Status WriteImageFile(const std::string& path, const Image& image, int jpeg_quality = 90);

// Bicubic resize of an RGB or gray image (used for still images; video frames are resized in the
// colour conversion pass).
Result<Image> ResizeImage(const Image& image, int width, int height);

}  // namespace reel::pipeline
