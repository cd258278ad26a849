// EXIF orientation: JPEG stills come out upright.
#include <gtest/gtest.h>

#include "pipeline/image_codec.h"

namespace reel::pipeline {
namespace {

// A 64x32 image with four coloured quadrants: red, green / blue, white.
Image Quadrants() {
  Image image = MakeImage(64, 32);
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 64; ++x) {
      uint8_t* p = image.row(y) + 3 * x;
      bool right = x >= 32, bottom = y >= 16;
      uint8_t r = !bottom && !right ? 255 : (bottom && right ? 255 : 0);
      uint8_t g = !bottom && right ? 255 : (bottom && right ? 255 : 0);
      uint8_t b = bottom ? 255 : 0;
      p[0] = r;
      p[1] = g;
      p[2] = b;
    }
  }
  return image;
}

// Inserts an APP1 EXIF segment with one orientation entry right after SOI (big- or
// little-endian TIFF).
std::vector<uint8_t> WithOrientation(std::vector<uint8_t> jpeg, int orientation, bool little) {
  std::vector<uint8_t> tiff;
  auto u16 = [&](uint32_t v) {
    if (little) {
      tiff.push_back(v & 0xFF);
      tiff.push_back(v >> 8);
    } else {
      tiff.push_back(v >> 8);
      tiff.push_back(v & 0xFF);
    }
  };
  auto u32 = [&](uint32_t v) {
    if (little) {
      u16(v & 0xFFFF);
      u16(v >> 16);
    } else {
      u16(v >> 16);
      u16(v & 0xFFFF);
    }
  };
  tiff.push_back(little ? 'I' : 'M');
  tiff.push_back(little ? 'I' : 'M');
  u16(42);
  u32(8);
  u16(2);  // two entries: ImageWidth (ignored), Orientation
  u16(0x0100), u16(3), u32(1), u16(64), u16(0);
  u16(0x0112), u16(3), u32(1), u16(orientation), u16(0);
  u32(0);
  std::vector<uint8_t> segment = {0xFF, 0xE1};
  size_t length = 2 + 6 + tiff.size();
  segment.push_back(length >> 8);
  segment.push_back(length & 0xFF);
  for (char c : std::string("Exif\0\0", 6)) segment.push_back(static_cast<uint8_t>(c));
  segment.insert(segment.end(), tiff.begin(), tiff.end());
  jpeg.insert(jpeg.begin() + 2, segment.begin(), segment.end());
  return jpeg;
}

// The colour at the centre of a quadrant of `image`: 'R', 'G', 'B', 'W' or '?'.
char At(const Image& image, bool right, bool bottom) {
  int x = right ? image.width * 3 / 4 : image.width / 4;
  int y = bottom ? image.height * 3 / 4 : image.height / 4;
  const uint8_t* p = image.row(y) + 3 * x;
  bool r = p[0] > 128, g = p[1] > 128, b = p[2] > 128;
  if (r && g && b) return 'W';
  if (r && !g && !b) return 'R';
  if (!r && g && !b) return 'G';
  if (!r && !g && b) return 'B';
  return '?';
}

TEST(ExifOrientationTest, EveryOrientationComesOutUpright) {
  auto jpeg = EncodeJpeg(Quadrants(), 95);
  ASSERT_TRUE(jpeg.ok());
  // Stored pixels: R G / B W. For each tag, the quadrants after turning upright
  // (top-left, top-right, bottom-left, bottom-right) and whether the sides swap.
  struct Case {
    int orientation;
    std::string quadrants;
    bool swapped;
  };
  for (const Case& c : {Case{1, "RGBW", false}, Case{2, "GRWB", false}, Case{3, "WBGR", false},
                        Case{4, "BWRG", false}, Case{5, "RBGW", true}, Case{6, "BRWG", true},
                        Case{7, "WGBR", true}, Case{8, "GWRB", true}}) {
    for (bool little : {false, true}) {
      auto bytes = WithOrientation(*jpeg, c.orientation, little);
      auto image = DecodeImage(bytes.data(), bytes.size(), "photo.jpg");
      ASSERT_TRUE(image.ok()) << image.status().ToString();
      EXPECT_EQ(image->width, c.swapped ? 32 : 64) << c.orientation;
      std::string got = {At(*image, false, false), At(*image, true, false), At(*image, false, true),
                         At(*image, true, true)};
      EXPECT_EQ(got, c.quadrants) << "orientation " << c.orientation;
    }
  }
}

TEST(ExifOrientationTest, DamagedExifIsIgnored) {
  auto jpeg = EncodeJpeg(Quadrants(), 95);
  auto bytes = WithOrientation(*jpeg, 6, false);
  bytes[2 + 4 + 6 + 4] = 0xFF;  // IFD offset points far outside the segment
  auto image = DecodeImage(bytes.data(), bytes.size(), "photo.jpg");
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 64);
}

}  // namespace
}  // namespace reel::pipeline
