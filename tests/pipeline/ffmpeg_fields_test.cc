// Enum fields FFmpeg fills from the file are read as raw ints (pipeline/internal/ffmpeg.h): a
// damaged file can leave any number in them, and loading such a number as the enum is undefined
// behaviour. This file is built with -fsanitize=enum (tests/CMakeLists.txt), so reading a field
// the old way (`par.color_range == AVCOL_RANGE_JPEG`) stops the test with "load of value 7,
// which is not a valid value for type 'AVColorRange'".
#include <gtest/gtest.h>

#include <cstring>

#include "pipeline/internal/ffmpeg.h"

namespace reel::pipeline::internal {
namespace {

// Puts `raw` into an enum field byte for byte, as a demuxer or decoder writing an int would.
template <typename Enum>
void Poke(Enum& field, int raw) {
  static_assert(sizeof(Enum) == sizeof(int));
  std::memcpy(&field, &raw, sizeof raw);
}

TEST(FfmpegFieldsTest, OutOfRangeColorRangeIsReadAsAnIntNotAnEnum) {
  AVCodecParameters par;
  std::memset(&par, 0, sizeof par);
  par.format = AV_PIX_FMT_YUV420P;
  Poke(par.color_range, 7);  // AVCOL_RANGE_NB is 3
  EXPECT_EQ(RawEnumValue(par.color_range), 7);
  EXPECT_FALSE(StreamFullRange(par));
  Poke(par.color_range, -5);
  EXPECT_FALSE(StreamFullRange(par));
  Poke(par.color_range, AVCOL_RANGE_JPEG);
  EXPECT_TRUE(StreamFullRange(par));
  Poke(par.color_range, AVCOL_RANGE_MPEG);
  EXPECT_FALSE(StreamFullRange(par));
  // A yuvj format is full range whatever the field says.
  par.format = AV_PIX_FMT_YUVJ420P;
  Poke(par.color_range, 1000);
  EXPECT_TRUE(StreamFullRange(par));
}

TEST(FfmpegFieldsTest, OutOfRangeMediaTypeAndCodecIdAreReadAsInts) {
  AVCodecParameters par;
  std::memset(&par, 0, sizeof par);
  Poke(par.codec_type, 77);
  Poke(par.codec_id, 0x7fffffff);
  EXPECT_EQ(RawEnumValue(par.codec_type), 77);
  EXPECT_EQ(RawEnumValue(par.codec_id), 0x7fffffff);
}

}  // namespace
}  // namespace reel::pipeline::internal
