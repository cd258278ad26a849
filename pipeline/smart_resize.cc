#include "pipeline/smart_resize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace reel::pipeline {

double RoundHalfEven(double x) {
  // std::nearbyint rounds to even under the default FE_TONEAREST mode, as Python's round() does.
  return std::nearbyint(x);
}

static std::string SizeText(Size s) {
  return std::to_string(s.width) + "x" + std::to_string(s.height);
}

Result<Size> SmartResize(Size source, const SmartResizeOptions& options) {
  const double h = source.height, w = source.width;
  const double f = options.factor;
  if (source.width <= 0 || source.height <= 0) {
    return InvalidArgument("cannot resize an empty image (" + SizeText(source) + ")");
  }
  if (options.factor <= 0 || options.min_pixels < 0 || options.max_pixels <= 0 ||
      options.min_pixels > options.max_pixels) {
    return InvalidArgument("bad smart-resize settings");
  }
  if (std::max(h, w) / std::min(h, w) > options.max_aspect_ratio) {
    return InvalidArgument("aspect ratio of " + SizeText(source) + " is over " +
                           std::to_string(static_cast<int>(options.max_aspect_ratio)) + ":1");
  }
  // Each step mirrors the reference's Python expressions, in the same order, in doubles.
  double h_bar = std::max(f, RoundHalfEven(h / f) * f);
  double w_bar = std::max(f, RoundHalfEven(w / f) * f);
  if (h_bar * w_bar > static_cast<double>(options.max_pixels)) {
    double beta = std::sqrt((h * w) / static_cast<double>(options.max_pixels));
    h_bar = std::max(f, std::floor(h / beta / f) * f);
    w_bar = std::max(f, std::floor(w / beta / f) * f);
  } else if (h_bar * w_bar < static_cast<double>(options.min_pixels)) {
    double beta = std::sqrt(static_cast<double>(options.min_pixels) / (h * w));
    h_bar = std::ceil(h * beta / f) * f;
    w_bar = std::ceil(w * beta / f) * f;
  }
  return Size{static_cast<int>(w_bar), static_cast<int>(h_bar)};
}

Result<Size> LongSideResize(Size source, const LongSideResizeOptions& options) {
  if (source.width <= 0 || source.height <= 0) {
    return InvalidArgument("cannot resize an empty image (" + SizeText(source) + ")");
  }
  if (options.factor <= 0 || options.max_long_side <= 0) {
    return InvalidArgument("bad long-side resize settings");
  }
  const int m = options.factor;
  double ratio = 1.0;
  int max_dim = std::max(source.width, source.height);
  if (max_dim > options.max_long_side) ratio = static_cast<double>(options.max_long_side) / max_dim;
  auto align_up = [m](int v) { return v % m == 0 ? v : v + (m - v % m); };
  int new_w = static_cast<int>(RoundHalfEven(source.width * ratio));
  int new_h = static_cast<int>(RoundHalfEven(source.height * ratio));
  // A side that rounds to 0 still needs one patch window.
  new_w = std::max(align_up(new_w), m);
  new_h = std::max(align_up(new_h), m);
  return Size{new_w, new_h};
}

Size DisplaySize(Size storage, SampleAspect aspect) {
  if (storage.width <= 0 || aspect.num <= 0 || aspect.den <= 0 || aspect.square()) {
    return storage;
  }
  // Exact rational arithmetic, halves rounded up; no overflow for any int sizes and ratios.
  const int64_t product = int64_t{storage.width} * aspect.num;
  int64_t scaled = product / aspect.den;
  if (2 * (product % aspect.den) >= aspect.den) ++scaled;
  return Size{static_cast<int>(std::clamp<int64_t>(scaled, 1, int64_t{1} << 30)), storage.height};
}

Result<Size> TargetSize(Size source, const ResizeOptions& options) {
  switch (options.mode) {
    case ResizeMode::kSmart:
      return SmartResize(source, options.smart);
    case ResizeMode::kLongSide:
      return LongSideResize(source, options.long_side);
    case ResizeMode::kNone:
      if (source.width <= 0 || source.height <= 0) return InvalidArgument("empty image");
      return source;
  }
  return Internal("unknown resize mode");
}

}  // namespace reel::pipeline
