// Side-car subtitles and subtitle streams whose text is not UTF-8.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/utf8.h"
#include "pipeline/subtitles.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using namespace std::string_literals;

const std::string kCafe = "Un caf\xC3\xA9 cr\xC3\xA8me";

std::string Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return path;
}

std::string Utf16(const std::u16string& units, bool little_endian, bool bom) {
  std::string out = bom ? (little_endian ? "\xFF\xFE" : "\xFE\xFF") : "";
  for (char16_t u : units) {
    const char lo = static_cast<char>(u & 0xFF), hi = static_cast<char>(u >> 8);
    out += little_endian ? std::string{lo, hi} : std::string{hi, lo};
  }
  return out;
}

struct EncodingCase {
  std::string name;
  std::string bytes;
  std::string encoding;
  EncodingBasis basis;
  bool noteworthy;
};

TEST(SubtitleEncodingTest, SideCarFilesInEveryEncodingReadTheSame) {
  const std::string dir = reel::testing::ScratchDir("SubtitleEncodingTest");
  const std::string srt = "1\n00:00:01,000 --> 00:00:02,000\n" + kCafe + "\n";
  const std::u16string srt16 = u"1\n00:00:01,000 --> 00:00:02,000\nUn caf\u00e9 cr\u00e8me\n";
  const std::vector<EncodingCase> cases = {
      {"utf8.srt", srt, "utf-8", EncodingBasis::kValidUtf8, false},
      {"bom.srt", "\xEF\xBB\xBF" + srt, "utf-8", EncodingBasis::kByteOrderMark, false},
      {"le.srt", Utf16(srt16, true, true), "utf-16le", EncodingBasis::kByteOrderMark, true},
      {"be.srt", Utf16(srt16, false, true), "utf-16be", EncodingBasis::kByteOrderMark, true},
      {"le-nobom.srt", Utf16(srt16, true, false), "utf-16le", EncodingBasis::kUtf16Pattern, true},
      {"latin1.srt", "1\n00:00:01,000 --> 00:00:02,000\nUn caf\xE9 cr\xE8me\n", "windows-1252",
       EncodingBasis::kFallback, true},
      {"v.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nUn caf\xE9 cr\xE8me\n", "windows-1252",
       EncodingBasis::kFallback, true},
  };
  for (const EncodingCase& c : cases) {
    SCOPED_TRACE(c.name);
    TextEncodingInfo info;
    auto cues = ReadSubtitleFile(Write(dir, c.name, c.bytes), {}, &info);
    ASSERT_TRUE(cues.ok()) << cues.status().ToString();
    ASSERT_EQ(cues->size(), 1u);
    EXPECT_EQ((*cues)[0].text, kCafe);
    EXPECT_DOUBLE_EQ((*cues)[0].start_s, 1.0);
    EXPECT_EQ(info.encoding, c.encoding);
    EXPECT_EQ(info.basis, c.basis);
    EXPECT_EQ(info.Noteworthy(), c.noteworthy);
  }
}

TEST(SubtitleEncodingTest, FallbackIsConfigurable) {
  const std::string dir = reel::testing::ScratchDir("SubtitleEncodingTest_Fallback");
  const std::string path =
      Write(dir, "ru.srt", "1\n00:00:01,000 --> 00:00:02,000\n\xEF\xF0\xE8\xE2\xE5\xF2\n");
  auto cues = ReadSubtitleFile(path, {.fallback_encoding = "windows-1251"});
  ASSERT_TRUE(cues.ok()) << cues.status().ToString();
  EXPECT_EQ((*cues)[0].text, "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82");
  // "utf-8": no guessing, the bytes become U+FFFD.
  TextEncodingInfo info;
  cues = ReadSubtitleFile(path, {.fallback_encoding = "utf-8"}, &info);
  ASSERT_TRUE(cues.ok());
  EXPECT_TRUE(IsValidUtf8((*cues)[0].text));
  EXPECT_EQ(info.replaced, 6u);  // six lone lead bytes, one U+FFFD each
}

TEST(SubtitleEncodingTest, UnknownFallbackNamesTheFile) {
  const std::string dir = reel::testing::ScratchDir("SubtitleEncodingTest_Unknown");
  const std::string path = Write(dir, "x.srt", "1\n00:00:01,000 --> 00:00:02,000\nx\xE9\n");
  auto cues = ReadSubtitleFile(path, {.fallback_encoding = "no-such-encoding"});
  ASSERT_FALSE(cues.ok());
  EXPECT_EQ(cues.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(cues.status().message().find(path), std::string::npos);
  EXPECT_NE(cues.status().message().find("no-such-encoding"), std::string::npos);
}

TEST(SubtitleEncodingTest, StreamWithLegacyTextIsConvertedNotDropped) {
  const std::string dir = reel::testing::ScratchDir("SubtitleEncodingTest_Stream");
  const std::string srt = Write(dir, "latin.srt",
                                "1\n00:00:00,000 --> 00:00:01,000\nUn caf\xE9 cr\xE8me\n\n"
                                "2\n00:00:01,000 --> 00:00:02,000\nplain ascii\n\n");
  const std::string mkv = dir + "/muxed.mkv";
  auto made = reel::testing::RunCommand(
      "ffmpeg -y -hide_banner -loglevel error -f lavfi -i testsrc=s=64x48:r=10:d=2 -i " +
      reel::testing::ShellQuote(srt) + " -map 0 -map 1 -c:v mpeg4 -c:s copy " +
      reel::testing::ShellQuote(mkv));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::vector<StreamTextEncoding> encodings;
  auto cues = ExtractSubtitleStreams(mkv, {}, &encodings);
  ASSERT_TRUE(cues.ok()) << cues.status().ToString();
  ASSERT_EQ(cues->size(), 2u);
  EXPECT_EQ((*cues)[0].text, kCafe);
  EXPECT_EQ((*cues)[1].text, "plain ascii");
  ASSERT_EQ(encodings.size(), 1u);
  EXPECT_EQ(encodings[0].stream_index, 1);
  EXPECT_EQ(encodings[0].cues, 1);
  EXPECT_EQ(encodings[0].info.encoding, "windows-1252");
}

}  // namespace
}  // namespace reel::pipeline
