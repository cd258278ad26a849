#include "pipeline/image_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "base/file_util.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_environment.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using Bytes = std::vector<uint8_t>;

// A smooth RGB (or gray) gradient: the kind of content JPEG keeps nearly intact.
Image Gradient(int width, int height, int channels = 3) {
  Image image = MakeImage(width, height, channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = image.row(y) + x * channels;
      p[0] = static_cast<uint8_t>(255 * x / (width - 1));
      if (channels == 3) {
        p[1] = static_cast<uint8_t>(255 * y / (height - 1));
        p[2] = static_cast<uint8_t>(128 + 64 * (x + y) / (width + height));
      }
    }
  }
  return image;
}

// Random pixels: only a lossless codec gives them back exactly.
Image Noise(int width, int height, int channels) {
  Image image = MakeImage(width, height, channels);
  std::mt19937 rng(42);
  for (uint8_t& v : image.pixels) v = static_cast<uint8_t>(rng());
  return image;
}

Image Solid(int width, int height, std::vector<uint8_t> colour) {
  Image image = MakeImage(width, height, static_cast<int>(colour.size()));
  for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = colour[i % colour.size()];
  return image;
}

struct Diff {
  int max = 0;
  double mean = 0;
};

Diff Compare(const uint8_t* a, const uint8_t* b, size_t size) {
  Diff diff;
  double sum = 0;
  for (size_t i = 0; i < size; ++i) {
    int d = std::abs(int{a[i]} - int{b[i]});
    diff.max = std::max(diff.max, d);
    sum += d;
  }
  diff.mean = size == 0 ? 0 : sum / static_cast<double>(size);
  return diff;
}

Diff Compare(const Image& a, const Bytes& b) {
  EXPECT_EQ(a.pixels.size(), b.size());
  return Compare(a.pixels.data(), b.data(), std::min(a.pixels.size(), b.size()));
}

Result<Image> Decode(const Bytes& bytes, const std::string& name = "test",
                     int64_t max_pixels = 1LL << 26) {
  return DecodeImage(bytes.data(), bytes.size(), name, max_pixels);
}

Bytes ReadBytes(const std::string& path) {
  Result<std::string> data = ReadFileToString(path);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  if (!data.ok()) return {};
  return Bytes(data->begin(), data->end());
}

// The ffmpeg command line's decode of `path` as packed pixels of `pix_fmt` (rgb24 or gray):
// an independent reference.
Bytes FfmpegDecode(const std::string& path, const std::string& pix_fmt = "rgb24") {
  auto result =
      testing::RunCommand("ffmpeg -hide_banner -loglevel error -i " + testing::ShellQuote(path) +
                          " -f rawvideo -pix_fmt " + pix_fmt + " -");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return Bytes(result.out.begin(), result.out.end());
}

// A generated 64x48 testsrc2 still (sharp colour bars, text) in the pixel format `pix_fmt`.
std::string TestsrcPng(const std::string& pix_fmt) {
  return testing::GeneratedMedia("image_codec_testsrc2_" + pix_fmt + ".png",
                                 "-f lavfi -i testsrc2=s=64x48 -frames:v 1 -pix_fmt " + pix_fmt);
}

std::string SharedMedia(const std::string& name) {
  std::string dir = testing::SharedMediaDir();
  return dir.empty() ? "" : dir + "/" + name;
}

// The PNG chunk CRC (ISO 3309), for forging headers.
uint32_t Crc32(const uint8_t* data, size_t size) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void PutBigEndian32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// ---------------------------------------------------------------------------------------------

TEST(ImageCodecTest, SniffsJpegAndPngByTheirFirstBytes) {
  struct Case {
    Bytes bytes;
    ImageFormat expected;
  };
  const Case cases[] = {
      {{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10}, ImageFormat::kJpeg},
      {{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0}, ImageFormat::kPng},
      {{'G', 'I', 'F', '8', '9', 'a'}, ImageFormat::kUnknown},
      {{0xFF, 0xD8}, ImageFormat::kUnknown},                             // too short
      {{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A}, ImageFormat::kUnknown},  // too short
      {{}, ImageFormat::kUnknown},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SniffImageFormat(c.bytes.data(), c.bytes.size()), c.expected)
        << "case of " << c.bytes.size() << " bytes";
  }
  EXPECT_EQ(SniffImageFormat(nullptr, 0), ImageFormat::kUnknown);
}

TEST(ImageCodecTest, JpegRoundTripOfRgbIsClose) {
  Image original = Gradient(64, 48);
  Result<Bytes> jpeg = EncodeJpeg(original, 95);
  ASSERT_TRUE(jpeg.ok()) << jpeg.status().ToString();
  EXPECT_EQ(SniffImageFormat(jpeg->data(), jpeg->size()), ImageFormat::kJpeg);
  Result<Image> decoded = Decode(*jpeg);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->width, 64);
  EXPECT_EQ(decoded->height, 48);
  EXPECT_EQ(decoded->channels, 3);
  Diff diff = Compare(*decoded, original.pixels);
  EXPECT_LT(diff.mean, 1.5);
  EXPECT_LE(diff.max, 12);
}

TEST(ImageCodecTest, JpegQualityTradesSizeForError) {
  Image original = Noise(64, 48, 3);
  Result<Bytes> low = EncodeJpeg(original, 10);
  Result<Bytes> high = EncodeJpeg(original, 100);
  ASSERT_TRUE(low.ok() && high.ok());
  EXPECT_LT(low->size(), high->size());
  Diff low_diff = Compare(*Decode(*low), original.pixels);
  Diff high_diff = Compare(*Decode(*high), original.pixels);
  EXPECT_LT(high_diff.mean, low_diff.mean);
}

TEST(ImageCodecTest, GrayJpegDecodesToEqualRgbChannels) {
  Image original = Gradient(64, 48, 1);
  Result<Bytes> jpeg = EncodeJpeg(original, 95);
  ASSERT_TRUE(jpeg.ok()) << jpeg.status().ToString();
  Result<Image> decoded = Decode(*jpeg);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->channels, 3);
  Bytes red;
  for (size_t i = 0; i < decoded->pixels.size(); i += 3) {
    EXPECT_EQ(decoded->pixels[i], decoded->pixels[i + 1]);
    EXPECT_EQ(decoded->pixels[i], decoded->pixels[i + 2]);
    red.push_back(decoded->pixels[i]);
  }
  Diff diff = Compare(red.data(), original.pixels.data(), red.size());
  EXPECT_LT(diff.mean, 1.0);
  EXPECT_LE(diff.max, 4);
}

TEST(ImageCodecTest, PngRoundTripIsExact) {
  Image rgb = Noise(61, 47, 3);  // odd sizes: no row padding may creep in
  Result<Bytes> png = EncodePng(rgb);
  ASSERT_TRUE(png.ok()) << png.status().ToString();
  EXPECT_EQ(SniffImageFormat(png->data(), png->size()), ImageFormat::kPng);
  Result<Image> decoded = Decode(*png);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->width, 61);
  EXPECT_EQ(decoded->height, 47);
  EXPECT_EQ(decoded->pixels, rgb.pixels);

  Image gray = Noise(61, 47, 1);
  png = EncodePng(gray);
  ASSERT_TRUE(png.ok()) << png.status().ToString();
  decoded = Decode(*png);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->channels, 3);
  for (size_t i = 0; i < gray.pixels.size(); ++i) {
    ASSERT_EQ(decoded->pixels[3 * i], gray.pixels[i]) << "pixel " << i;
    ASSERT_EQ(decoded->pixels[3 * i + 1], gray.pixels[i]) << "pixel " << i;
    ASSERT_EQ(decoded->pixels[3 * i + 2], gray.pixels[i]) << "pixel " << i;
  }
}

// PNGs written by ffmpeg in the formats libpng must convert, against ffmpeg's own decode.
TEST(ImageCodecTest, PngPixelFormatsMatchFfmpeg) {
  std::string rgb24 = TestsrcPng("rgb24");
  ASSERT_FALSE(rgb24.empty());
  Result<Image> reference = ReadImageFile(rgb24);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  EXPECT_EQ(Compare(*reference, FfmpegDecode(rgb24)).max, 0);

  struct Case {
    std::string pix_fmt;
    int max_diff;  // against ffmpeg's rgb24 decode of the same file
  };
  const Case cases[] = {
      {"pal8", 0},     // palette
      {"gray", 0},     // 8-bit gray
      {"rgb48be", 1},  // 16-bit: libpng and ffmpeg round 16 to 8 bits differently
      {"gray16be", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pix_fmt);
    std::string path = TestsrcPng(c.pix_fmt);
    ASSERT_FALSE(path.empty());
    Result<Image> decoded = ReadImageFile(path);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(decoded->width, 64);
    EXPECT_EQ(decoded->height, 48);
    EXPECT_EQ(decoded->channels, 3);
    EXPECT_LE(Compare(*decoded, FfmpegDecode(path)).max, c.max_diff);
  }

  // A 16-bit file gives the same picture as its 8-bit twin (it is read as sRGB: read as linear
  // light, mid-tones would come out tens of levels brighter).
  Result<Image> deep = ReadImageFile(TestsrcPng("rgb48be"));
  ASSERT_TRUE(deep.ok());
  Diff diff = Compare(*deep, reference->pixels);
  EXPECT_LE(diff.max, 2);
  EXPECT_LT(diff.mean, 0.5);
}

// Checks `decoded` against ffmpeg's RGBA decode of `path`: opaque pixels exact, transparent ones
// black, partly transparent ones darker than the colour (but not black).
void ExpectCompositedOnBlack(const std::string& path, int* transparent, int* partial) {
  Result<Image> decoded = ReadImageFile(path);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->channels, 3);
  Bytes rgba = FfmpegDecode(path, "rgba");
  size_t count = static_cast<size_t>(decoded->width) * decoded->height;
  ASSERT_EQ(rgba.size(), 4 * count);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* in = &rgba[4 * i];
    const uint8_t* out = &decoded->pixels[3 * i];
    for (int c = 0; c < 3; ++c) {
      if (in[3] == 255) {
        ASSERT_EQ(out[c], in[c]) << "opaque pixel " << i;
      } else if (in[3] == 0) {
        ASSERT_EQ(out[c], 0) << "transparent pixel " << i;
      } else if (in[c] > 0) {
        ASSERT_GT(out[c], 0) << "partly transparent pixel " << i;
        ASSERT_LT(out[c], in[c]) << "partly transparent pixel " << i;
      }
    }
    *transparent += in[3] == 0;
    *partial += in[3] != 0 && in[3] != 255;
  }
}

TEST(ImageCodecTest, PngAlphaIsCompositedOnBlack) {
  // Left quarter transparent, second quarter half transparent, right half opaque.
  std::string path = testing::GeneratedMedia(
      "image_codec_alpha.png",
      "-f lavfi -i color=c=0xC86432:s=64x48 -frames:v 1 -vf "
      "\"format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='if(lt(X,16),0,if(lt(X,32),128,255))'\""
      " -pix_fmt rgba");
  ASSERT_FALSE(path.empty());
  int transparent = 0, partial = 0;
  ExpectCompositedOnBlack(path, &transparent, &partial);
  EXPECT_EQ(transparent, 16 * 48);
  EXPECT_EQ(partial, 16 * 48);
}

TEST(ImageCodecTest, PaletteWithTransparencyIsCompositedOnBlack) {
  // A palette PNG with a tRNS chunk whose transparent entry is bright green.
  std::string path = testing::GeneratedMedia(
      "image_codec_trns_pal8.png",
      "-f lavfi -i color=c=0xC86432:s=64x48:d=0.04 -frames:v 1 -vf "
      "\"format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='if(lt(X,32),0,255)',split[a][b];"
      "[a]palettegen=reserve_transparent=1[p];[b][p]paletteuse=alpha_threshold=128\" -pix_fmt "
      "pal8");
  ASSERT_FALSE(path.empty());
  int transparent = 0, partial = 0;
  ExpectCompositedOnBlack(path, &transparent, &partial);
  EXPECT_EQ(transparent, 32 * 48);
}

// ---------------------------------------------------------------------------------------------
// Real JPEGs from the shared corpus, against ffmpeg's decode.

TEST(ImageCodecTest, GradientJpegMatchesFfmpeg) {
  std::string path = SharedMedia("gradient.jpg");
  if (path.empty()) REEL_SKIP_WITHOUT_REFERENCE(kSharedMedia) << "no shared media";
  Result<Image> decoded = ReadImageFile(path);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->width, 1280);
  EXPECT_EQ(decoded->height, 720);
  // Different IDCTs and chroma upsampling: close on average, a few levels apart at worst.
  Diff diff = Compare(*decoded, FfmpegDecode(path));
  EXPECT_LT(diff.mean, 1.5);
  EXPECT_LE(diff.max, 8);
}

TEST(ImageCodecTest, GrayscaleJpegMatchesFfmpeg) {
  std::string path = SharedMedia("grayscale.jpg");
  if (path.empty()) REEL_SKIP_WITHOUT_REFERENCE(kSharedMedia) << "no shared media";
  Result<Image> decoded = ReadImageFile(path);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  Bytes gray = FfmpegDecode(path, "gray");
  ASSERT_EQ(gray.size(), static_cast<size_t>(decoded->width) * decoded->height);
  Bytes red;
  for (size_t i = 0; i < gray.size(); ++i) {
    const uint8_t* p = decoded->pixels.data() + 3 * i;
    ASSERT_TRUE(p[0] == p[1] && p[1] == p[2]) << "pixel " << i << " is not gray";
    red.push_back(p[0]);
  }
  Diff diff = Compare(red.data(), gray.data(), gray.size());
  EXPECT_LT(diff.mean, 0.5);
  EXPECT_LE(diff.max, 4);
}

TEST(ImageCodecTest, CmykJpegMatchesFfmpeg) {
  std::string path = SharedMedia("cmyk.jpg");
  if (path.empty()) REEL_SKIP_WITHOUT_REFERENCE(kSharedMedia) << "no shared media";
  Result<Image> decoded = ReadImageFile(path);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->width, 1280);
  EXPECT_EQ(decoded->height, 720);
  // Reading the inks the wrong way round would give a photographic negative: differences of
  // around 128 on average.
  Diff diff = Compare(*decoded, FfmpegDecode(path));
  EXPECT_LT(diff.mean, 1.5);
  EXPECT_LE(diff.max, 6);
}

// ---------------------------------------------------------------------------------------------
// Damaged input.

TEST(ImageCodecTest, CorruptInputsAreCorruptData) {
  // Noise, so that most of each file is pixel data.
  Bytes jpeg = *EncodeJpeg(Noise(64, 48, 3), 90);
  Bytes png = *EncodePng(Noise(64, 48, 3));
  std::mt19937 rng(7);
  Bytes random(4096);
  for (uint8_t& v : random) v = static_cast<uint8_t>(rng());
  Bytes jpeg_magic_then_random = {0xFF, 0xD8, 0xFF};
  jpeg_magic_then_random.insert(jpeg_magic_then_random.end(), random.begin(), random.end());
  Bytes png_magic_then_random(png.begin(), png.begin() + 8);
  png_magic_then_random.insert(png_magic_then_random.end(), random.begin(), random.end());
  // A flipped byte in the middle of the PNG's pixel data fails its chunk CRC.
  Bytes png_flipped = png;
  png_flipped[png.size() / 2] ^= 0x55;
  // A JPEG whose entropy-coded data has been overwritten with 1 bits (stuffed 0xFF 0x00 pairs):
  // no Huffman code is all ones, so libjpeg warns "bad Huffman code" and carries on.
  Bytes jpeg_scribbled = jpeg;
  const uint8_t sos[] = {0xFF, 0xDA};
  size_t scan =
      std::search(jpeg.begin(), jpeg.end(), std::begin(sos), std::end(sos)) - jpeg.begin();
  ASSERT_LT(scan + 100, jpeg.size());
  for (size_t i = scan + 40; i < scan + 80; i += 2) {
    jpeg_scribbled[i] = 0xFF;
    jpeg_scribbled[i + 1] = 0x00;
  }

  struct Case {
    const char* name;
    Bytes bytes;
  };
  const Case cases[] = {
      {"empty", {}},
      {"random", random},
      {"jpeg_magic_then_random", jpeg_magic_then_random},
      {"png_magic_then_random", png_magic_then_random},
      {"jpeg_header_only", Bytes(jpeg.begin(), jpeg.begin() + 200)},
      {"jpeg_truncated_half", Bytes(jpeg.begin(), jpeg.begin() + jpeg.size() / 2)},
      {"jpeg_without_end_marker", Bytes(jpeg.begin(), jpeg.end() - 2)},  // a warning: refused
      {"jpeg_scribbled", jpeg_scribbled},
      {"png_truncated_half", Bytes(png.begin(), png.begin() + png.size() / 2)},
      {"png_truncated_near_the_end", Bytes(png.begin(), png.end() - 30)},  // inside IDAT
      {"png_flipped_byte", png_flipped},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Image> decoded = Decode(c.bytes, c.name);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.status().code(), ErrorCode::kCorruptData) << decoded.status().ToString();
    // The message names the item and gives a reason after it.
    EXPECT_EQ(decoded.status().message().rfind(std::string(c.name) + ": ", 0), 0u)
        << decoded.status().message();
    EXPECT_GT(decoded.status().message().size(), std::string(c.name).size() + 5);
  }
}

// Seeded random damage: every outcome is an image or a clean error, never a crash (run under
// AddressSanitizer to make "never" mean something).
TEST(ImageCodecTest, RandomDamageGivesAnImageOrCorruptData) {
  std::mt19937 rng(1234);
  for (const Bytes& original :
       {*EncodeJpeg(Gradient(64, 48), 80), *EncodeJpeg(Gradient(40, 30, 1), 80),
        *EncodePng(Gradient(64, 48)), *EncodePng(Noise(40, 30, 1))}) {
    for (int round = 0; round < 150; ++round) {
      Bytes damaged = original;
      int flips = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < flips; ++k) {
        damaged[rng() % damaged.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
      }
      if (round % 3 == 0) damaged.resize(rng() % damaged.size());
      Result<Image> decoded = Decode(damaged, "damaged", 1 << 20);
      if (decoded.ok()) {
        EXPECT_EQ(decoded->pixels.size(), decoded->stride() * decoded->height);
      } else {
        ErrorCode code = decoded.status().code();
        EXPECT_TRUE(code == ErrorCode::kCorruptData || code == ErrorCode::kLimitExceeded)
            << decoded.status().ToString();
      }
    }
  }
}

// A PNG cut after its last pixel data, before IEND, still holds the whole picture: accepted.
TEST(ImageCodecTest, PngWithoutEndChunkDecodes) {
  Image image = Noise(64, 48, 3);
  Bytes png = *EncodePng(image);
  ASSERT_EQ(std::string(png.end() - 8, png.end() - 4), "IEND");
  Result<Image> decoded = Decode(Bytes(png.begin(), png.end() - 12));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->pixels, image.pixels);
}

TEST(ImageCodecTest, DamagedSampleJpegsAreCorruptData) {
  if (testing::SharedMediaDir().empty())
    REEL_SKIP_WITHOUT_REFERENCE(kSharedMedia) << "no shared media";
  for (const char* name : {"corrupt.jpg", "bad_huffman.jpg"}) {
    SCOPED_TRACE(name);
    std::string path = SharedMedia(name);
    Result<Image> decoded = ReadImageFile(path);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.status().code(), ErrorCode::kCorruptData) << decoded.status().ToString();
    EXPECT_NE(decoded.status().message().find(path), std::string::npos);
    EXPECT_NE(decoded.status().message().find("Corrupt JPEG data"), std::string::npos)
        << decoded.status().message();
  }
}

TEST(ImageCodecTest, MissingFileIsNotFound) {
  std::string path = testing::ScratchDir("ImageCodecMissing") + "/nothing.png";
  EXPECT_EQ(ReadImageFile(path).status().code(), ErrorCode::kNotFound);
}

// ---------------------------------------------------------------------------------------------
// The pixel limit.

TEST(ImageCodecTest, MaxPixelsIsEnforced) {
  Image image = Gradient(64, 48);
  for (const Bytes& bytes : {*EncodeJpeg(image), *EncodePng(image)}) {
    EXPECT_TRUE(Decode(bytes, "x", 64 * 48).ok());
    Result<Image> refused = Decode(bytes, "x", 64 * 48 - 1);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), ErrorCode::kLimitExceeded);
    EXPECT_NE(refused.status().message().find("64x48"), std::string::npos)
        << refused.status().message();
  }
}

// Headers that claim huge images are refused from the header alone: were the decoder to
// allocate first, these would ask for gigabytes.
TEST(ImageCodecTest, AbsurdDimensionsAreRefusedBeforeDecoding) {
  Bytes jpeg = *EncodeJpeg(Gradient(64, 48));
  // SOF0: FF C0, length (2), precision (1), height (2), width (2).
  const uint8_t sof_marker[] = {0xFF, 0xC0};
  auto sof = std::search(jpeg.begin(), jpeg.end(), std::begin(sof_marker), std::end(sof_marker));
  ASSERT_NE(sof, jpeg.end());
  size_t at = static_cast<size_t>(sof - jpeg.begin());
  jpeg[at + 5] = 0xEA;  // height 60000
  jpeg[at + 6] = 0x60;
  jpeg[at + 7] = 0xEA;  // width 60000
  jpeg[at + 8] = 0x60;
  Result<Image> decoded = Decode(jpeg, "huge.jpg");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), ErrorCode::kLimitExceeded) << decoded.status().ToString();
  EXPECT_NE(decoded.status().message().find("60000x60000"), std::string::npos);

  Bytes png = *EncodePng(Gradient(64, 48));
  // IHDR: signature (8), length (4), "IHDR" (4), width (4), height (4), ..., CRC over type+data.
  ASSERT_EQ(std::string(png.begin() + 12, png.begin() + 16), "IHDR");
  PutBigEndian32(&png[16], 1000000);
  PutBigEndian32(&png[20], 1000000);
  PutBigEndian32(&png[29], Crc32(&png[12], 17));
  decoded = Decode(png, "huge.png");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), ErrorCode::kLimitExceeded) << decoded.status().ToString();
  EXPECT_NE(decoded.status().message().find("1000000x1000000"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Encoding and writing.

TEST(ImageCodecTest, EncodersRejectInvalidImages) {
  Image wrong_channels = MakeImage(8, 8, 4);
  Image short_buffer = MakeImage(8, 8, 3);
  short_buffer.pixels.pop_back();
  for (const Image& image : {Image{}, wrong_channels, short_buffer}) {
    EXPECT_EQ(EncodeJpeg(image).status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(EncodePng(image).status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(ResizeImage(image, 4, 4).status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(EncodeJpeg(Gradient(8, 8), 0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(EncodeJpeg(Gradient(8, 8), 101).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ImageCodecTest, WriteImageFileEncodesByExtension) {
  std::string dir = testing::ScratchDir("ImageCodecWrite");
  Image image = Noise(32, 24, 3);
  struct Case {
    const char* file;
    ImageFormat format;
  };
  const Case cases[] = {
      {"a.png", ImageFormat::kPng},   {"b.PNG", ImageFormat::kPng},  {"c.jpg", ImageFormat::kJpeg},
      {"d.jpeg", ImageFormat::kJpeg}, {"e.JPG", ImageFormat::kJpeg},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    std::string path = dir + "/" + c.file;
    Status status = WriteImageFile(path, image, 90);
    ASSERT_TRUE(status.ok()) << status.ToString();
    Bytes bytes = ReadBytes(path);
    EXPECT_EQ(SniffImageFormat(bytes.data(), bytes.size()), c.format);
    Result<Image> decoded = ReadImageFile(path);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(decoded->width, 32);
    EXPECT_EQ(decoded->height, 24);
    if (c.format == ImageFormat::kPng) {
      EXPECT_EQ(decoded->pixels, image.pixels);
    }
  }

  for (const char* file : {"f.bmp", "g", "dir.png/h"}) {
    SCOPED_TRACE(file);
    std::string path = dir + "/" + file;
    Status status = WriteImageFile(path, image);
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.ToString();
    EXPECT_NE(status.message().find(path), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(path));
  }

  // Encoder errors name the file too.
  Status status = WriteImageFile(dir + "/bad.jpg", Image{});
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("bad.jpg"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Resizing.

TEST(ImageCodecTest, ResizeGivesTheRequestedSize) {
  const int sizes[][2] = {{32, 24}, {37, 23}, {128, 96}, {1, 1}, {200, 3}};
  for (int channels : {1, 3}) {
    for (const auto& size : sizes) {
      Result<Image> resized = ResizeImage(Gradient(64, 48, channels), size[0], size[1]);
      ASSERT_TRUE(resized.ok()) << resized.status().ToString();
      EXPECT_EQ(resized->width, size[0]);
      EXPECT_EQ(resized->height, size[1]);
      EXPECT_EQ(resized->channels, channels);
      EXPECT_EQ(resized->pixels.size(), static_cast<size_t>(size[0]) * size[1] * channels);
    }
  }
  EXPECT_EQ(ResizeImage(Gradient(8, 8), 0, 4).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ResizeImage(Gradient(8, 8), 4, -1).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ResizeImage(Gradient(8, 8), 100000, 100000).status().code(), ErrorCode::kLimitExceeded);
}

TEST(ImageCodecTest, ResizeKeepsASolidColour) {
  const std::vector<uint8_t> colours[] = {{200, 30, 90},   {255, 0, 0}, {0, 0, 255}, {0, 0, 0},
                                          {255, 255, 255}, {17},        {240}};
  for (const auto& colour : colours) {
    for (const auto& size : {std::pair{37, 23}, std::pair{150, 101}}) {
      SCOPED_TRACE(::testing::Message() << "colour of " << colour.size() << " channels, first "
                                        << int{colour[0]} << ", to " << size.first);
      Result<Image> resized = ResizeImage(Solid(64, 48, colour), size.first, size.second);
      ASSERT_TRUE(resized.ok()) << resized.status().ToString();
      Image expected = Solid(size.first, size.second, colour);
      EXPECT_LE(Compare(*resized, expected.pixels).max, 1);
    }
  }
}

TEST(ImageCodecTest, ResizeKeepsWhereThingsAre) {
  // Left half black, right half white, top quarter red: halved, the regions stay put.
  Image image = MakeImage(64, 48, 3);
  for (int y = 0; y < 48; ++y) {
    for (int x = 0; x < 64; ++x) {
      uint8_t* p = image.row(y) + 3 * x;
      if (y < 12) {
        p[0] = 255;
      } else if (x >= 32) {
        p[0] = p[1] = p[2] = 255;
      }
    }
  }
  Result<Image> resized = ResizeImage(image, 32, 24);
  ASSERT_TRUE(resized.ok()) << resized.status().ToString();
  auto pixel = [&](int x, int y) {
    const uint8_t* p = resized->row(y) + 3 * x;
    return std::vector<int>{p[0], p[1], p[2]};
  };
  auto near = [](std::vector<int> a, std::vector<int> b) {
    for (int c = 0; c < 3; ++c) {
      if (std::abs(a[c] - b[c]) > 2) return false;
    }
    return true;
  };
  EXPECT_TRUE(near(pixel(2, 2), {255, 0, 0}));
  EXPECT_TRUE(near(pixel(29, 2), {255, 0, 0}));
  EXPECT_TRUE(near(pixel(2, 20), {0, 0, 0}));
  EXPECT_TRUE(near(pixel(29, 20), {255, 255, 255}));
  // The edge between black and white falls between columns 15 and 16.
  EXPECT_LT(pixel(14, 20)[1], 64);
  EXPECT_GT(pixel(17, 20)[1], 191);
}

TEST(ImageCodecTest, ResizeToTheSameSizeIsACopy) {
  Image image = Noise(33, 17, 3);
  Result<Image> resized = ResizeImage(image, 33, 17);
  ASSERT_TRUE(resized.ok());
  EXPECT_EQ(resized->pixels, image.pixels);
}

}  // namespace
}  // namespace reel::pipeline
