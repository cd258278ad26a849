#include "base/text_encoding.h"

#include <gtest/gtest.h>

#include <string>

#include "base/utf8.h"

namespace reel {
namespace {

using namespace std::string_literals;

TEST(TextEncodingTest, Utf8AndBoms) {
  auto decoded = DecodeText("caf\xC3\xA9");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->text, "caf\xC3\xA9");
  EXPECT_FALSE(decoded->info.Noteworthy());

  decoded = DecodeText(
      "\xEF\xBB\xBF"
      "caf\xC3\xA9");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->text, "caf\xC3\xA9");
  EXPECT_EQ(decoded->info.basis, EncodingBasis::kByteOrderMark);

  decoded = DecodeText(
      "\xFF\xFE"
      "c\0a\0f\0\xE9\0"s);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->text, "caf\xC3\xA9");
  EXPECT_EQ(decoded->info.encoding, "utf-16le");
  EXPECT_EQ(decoded->info.Describe(), "UTF-16LE (byte-order mark)");

  decoded = DecodeText(
      "\xFE\xFF"
      "\0c\0a\0f\0\xE9\xD8\x3C\xDF\xAC"s);  // + U+1F3AC (a pair)
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->text, "caf\xC3\xA9\xF0\x9F\x8E\xAC");
  EXPECT_EQ(decoded->info.encoding, "utf-16be");

  decoded = DecodeText(
      "\xFF\xFE\0\0"
      "c\0\0\0"s);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->text, "c");
  EXPECT_EQ(decoded->info.encoding, "utf-32le");
}

TEST(TextEncodingTest, Utf16WithoutBomByItsZeroBytes) {
  auto decoded = DecodeText("1\0\n\0c\0a\0f\0\xE9\0"s);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->text, "1\ncaf\xC3\xA9");
  EXPECT_EQ(decoded->info.basis, EncodingBasis::kUtf16Pattern);
}

TEST(TextEncodingTest, LegacyFallback) {
  // Windows-1252: e-acute, the euro sign (0x80) and curly quotes (0x93, 0x94).
  auto decoded = DecodeText("caf\xE9 \x80 \x93ok\x94");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->text, "caf\xC3\xA9 \xE2\x82\xAC \xE2\x80\x9Cok\xE2\x80\x9D");
  EXPECT_EQ(decoded->info.encoding, "windows-1252");
  EXPECT_EQ(decoded->info.basis, EncodingBasis::kFallback);
  EXPECT_TRUE(decoded->info.Noteworthy());
  EXPECT_EQ(decoded->info.Describe(),
            "not valid UTF-8; read as windows-1252 (the fallback encoding)");

  // A configurable fallback: Windows-1251 (Cyrillic) "привет".
  decoded = DecodeText("\xEF\xF0\xE8\xE2\xE5\xF2", {.fallback_encoding = "windows-1251"});
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->text, "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82");

  // Bytes the encoding does not define become U+FFFD and are counted (0x81 in Windows-1252).
  decoded = DecodeText(
      "a\x81"
      "b");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->info.replaced, 1u);
  EXPECT_TRUE(IsValidUtf8(decoded->text));

  // "utf-8" as the fallback: never guess.
  decoded = DecodeText("caf\xE9", {.fallback_encoding = "utf-8"});
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->text, "caf\xEF\xBF\xBD");
  EXPECT_EQ(decoded->info.replaced, 1u);
}

TEST(TextEncodingTest, MostlyUtf8KeepsUtf8) {
  auto decoded = DecodeText(
      "\xC3\xA9t\xC3\xA9, \xC3\xA0 \xC3\xA7"
      "a, stray \xE9");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->info.encoding, "utf-8");
  EXPECT_EQ(decoded->info.basis, EncodingBasis::kMostlyUtf8);
  EXPECT_EQ(decoded->info.replaced, 1u);
  EXPECT_TRUE(decoded->info.Noteworthy());
}

TEST(TextEncodingTest, UnknownFallbackIsAnError) {
  EXPECT_TRUE(CheckTextEncoding("windows-1252").ok());
  EXPECT_TRUE(CheckTextEncoding("ISO-8859-15").ok());
  EXPECT_TRUE(CheckTextEncoding("utf-8").ok());
  Status bad = CheckTextEncoding("klingon-1");
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("klingon-1"), std::string::npos);
  auto decoded = DecodeText("caf\xE9", {.fallback_encoding = "klingon-1"});
  EXPECT_FALSE(decoded.ok());
  // Valid UTF-8 never needs the fallback, so it is not an error then.
  EXPECT_TRUE(DecodeText("plain", {.fallback_encoding = "klingon-1"}).ok());
}

TEST(TextEncodingTest, TruncatedUtf16IsRepairedNotRejected) {
  auto decoded = DecodeText(
      "\xFF\xFE"
      "a\0\x3D\xD8"s);  // a lone high surrogate at the end
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(IsValidUtf8(decoded->text));
  EXPECT_EQ(decoded->text.substr(0, 1), "a");
  EXPECT_GE(decoded->info.replaced, 1u);
}

}  // namespace
}  // namespace reel
