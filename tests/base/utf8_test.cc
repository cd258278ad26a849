#include "base/utf8.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace reel {
namespace {

using namespace std::string_literals;

TEST(Utf8Test, Validity) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii, long enough to take the eight-byte path"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x8E\xAC"));
  EXPECT_TRUE(IsValidUtf8("nul \0 inside"s));
  EXPECT_FALSE(IsValidUtf8("caf\xE9"));               // Latin-1 e-acute
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));              // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));          // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));      // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));              // cut short
  EXPECT_FALSE(IsValidUtf8("abcdefgh\x80xyz"));       // after the fast path
  EXPECT_FALSE(IsValidUtf8("\xF8\x88\x80\x80\x80"));  // 5-byte form
}

TEST(Utf8Test, ReplacesMaximalSubparts) {
  size_t replaced = 0;
  EXPECT_EQ(ReplaceInvalidUtf8("caf\xE9", &replaced), "caf\xEF\xBF\xBD");
  EXPECT_EQ(replaced, 1u);
  // A truncated 3-byte sequence is one maximal subpart: one U+FFFD, as in the Unicode standard.
  EXPECT_EQ(ReplaceInvalidUtf8("a\xE2\x82z", &replaced), "a\xEF\xBF\xBDz");
  EXPECT_EQ(replaced, 1u);
  // The Unicode standard's example (Table 3-8): 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
  EXPECT_EQ(ReplaceInvalidUtf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64", &replaced),
            "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD"
            "d");
  EXPECT_EQ(replaced, 6u);
  EXPECT_EQ(ReplaceInvalidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(Utf8Test, EscapeLeavesOrdinaryNamesAlone) {
  for (std::string name : {"clip.mp4",
                           "/tmp/caf\xC3\xA9/v\xC3\xAD"
                           "deo.mkv",
                           "a\\b", "C:\\dir"}) {
    EXPECT_EQ(EscapeInvalidUtf8(name), name);
  }
}

TEST(Utf8Test, EscapeShowsBadBytes) {
  EXPECT_EQ(EscapeInvalidUtf8("clip\xE9.mkv"), "clip\\xE9.mkv");
  EXPECT_EQ(EscapeInvalidUtf8("\xFF\xFE"), "\\xFF\\xFE");
  // A backslash before something that would read as an escape is doubled.
  EXPECT_EQ(EscapeInvalidUtf8("a\\xE9"), "a\\\\xE9");
  EXPECT_EQ(EscapeInvalidUtf8("a\\\\b"), "a\\\\\\b");
  EXPECT_EQ(EscapeInvalidUtf8("a\\\xE9"), "a\\\\\\xE9");
  EXPECT_EQ(UnescapeInvalidUtf8("clip\\xE9.mkv"), "clip\xE9.mkv");
  EXPECT_EQ(UnescapeInvalidUtf8("clip\\xe9.mkv"), "clip\xE9.mkv");
}

TEST(Utf8Test, EscapeIsOneToOneAndReversible) {
  // The Latin-1 name and the valid name spelled with a literal "\xE9" must not collide.
  EXPECT_NE(EscapeInvalidUtf8("clip\xE9"), EscapeInvalidUtf8("clip\\xE9"));
  std::mt19937 random(7);
  const std::string alphabet = "ax\\E9\xC3\xA9\xE9\xFF\x80\xE2\x82\xAC/.";
  for (int round = 0; round < 20000; ++round) {
    std::string bytes;
    const int length = static_cast<int>(random() % 12);
    for (int i = 0; i < length; ++i) bytes += alphabet[random() % alphabet.size()];
    const std::string escaped = EscapeInvalidUtf8(bytes);
    ASSERT_TRUE(IsValidUtf8(escaped)) << escaped;
    ASSERT_EQ(UnescapeInvalidUtf8(escaped), bytes) << escaped;
  }
}

TEST(Utf8Test, SafeUtf8) {
  EXPECT_EQ(SafeUtf8("fine \\x41"), "fine \\x41");  // valid: untouched
  EXPECT_EQ(SafeUtf8("clip\xE9.mkv: truncated"), "clip\\xE9.mkv: truncated");
}

}  // namespace
}  // namespace reel
