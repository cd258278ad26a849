#include "pipeline/sampling/scene_detector.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace reel::pipeline {
namespace {

// Sum of absolute differences of one row of 8-bit samples.
uint64_t RowSad8(const uint8_t* a, const uint8_t* b, int n) {
  uint64_t sad = 0;
  int x = 0;
#if defined(__SSE2__)
  __m128i sum = _mm_setzero_si128();
  for (; x + 16 <= n; x += 16) {
    __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + x));
    __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + x));
    sum = _mm_add_epi64(sum, _mm_sad_epu8(va, vb));
  }
  uint64_t lanes[2];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), sum);
  sad = lanes[0] + lanes[1];
#endif
  for (; x < n; ++x) sad += static_cast<uint64_t>(std::abs(a[x] - b[x]));
  return sad;
}

// The same for 16-bit samples.
uint64_t RowSad16(const uint8_t* a_bytes, const uint8_t* b_bytes, int n) {
  uint64_t sad = 0;
  for (int x = 0; x < n; ++x) {
    uint16_t a, b;
    std::memcpy(&a, a_bytes + 2 * x, 2);
    std::memcpy(&b, b_bytes + 2 * x, 2);
    sad += static_cast<uint64_t>(std::abs(static_cast<int>(a) - static_cast<int>(b)));
  }
  return sad;
}

}  // namespace

bool SceneDetector::SameGeometry(const ScenePicture& picture) const {
  const ScenePicture& p = previous_geometry_;
  if (p.planes != picture.planes || p.bit_depth != picture.bit_depth) return false;
  for (int i = 0; i < picture.planes; ++i) {
    if (p.width[i] != picture.width[i] || p.height[i] != picture.height[i]) return false;
  }
  return true;
}

bool SceneDetector::Feed(const ScenePicture& picture, double time_s) {
  const int bytes = picture.bit_depth > 8 ? 2 : 1;
  bool cut = false;
  last_score_ = 0;
  if (!has_previous_) {
    cut = true;
  } else if (SameGeometry(picture)) {
    uint64_t sad = 0, count = 0;
    for (int i = 0; i < picture.planes; ++i) {
      const size_t row_bytes = static_cast<size_t>(picture.width[i]) * bytes;
      for (int y = 0; y < picture.height[i]; ++y) {
        const uint8_t* now = picture.data[i] + static_cast<std::ptrdiff_t>(y) * picture.linesize[i];
        const uint8_t* before = previous_[i].data() + row_bytes * y;
        sad += bytes == 1 ? RowSad8(now, before, picture.width[i])
                          : RowSad16(now, before, picture.width[i]);
      }
      count += static_cast<uint64_t>(picture.width[i]) * picture.height[i];
    }
    if (count > 0) {
      // FFmpeg's expression, in the same order.
      double mafd = static_cast<double>(sad) / static_cast<double>(count) /
                    static_cast<double>(uint64_t{1} << (picture.bit_depth - 8));
      double diff = std::fabs(mafd - previous_mafd_);
      last_score_ = std::clamp(std::min(mafd, diff) / 100.0, 0.0, 1.0);
      previous_mafd_ = mafd;
    }
    cut = last_score_ > threshold_ && time_s - last_cut_s_ >= min_shot_s_;
  }
  if (cut) last_cut_s_ = time_s;
  // Keep this picture as the reference for the next one.
  previous_geometry_ = picture;
  for (int i = 0; i < picture.planes; ++i) {
    const size_t row_bytes = static_cast<size_t>(picture.width[i]) * bytes;
    previous_[i].resize(row_bytes * picture.height[i]);
    for (int y = 0; y < picture.height[i]; ++y) {
      std::memcpy(previous_[i].data() + row_bytes * y,
                  picture.data[i] + static_cast<std::ptrdiff_t>(y) * picture.linesize[i],
                  row_bytes);
    }
  }
  has_previous_ = true;
  return cut;
}

}  // namespace reel::pipeline
