// The tokenizer's UTF-8 helpers (llm/tokenizer/utf8.h) against base/utf8.h, on random bytes that
// are mostly valid UTF-8 with an invalid or cut sequence here and there.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "base/utf8.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {
namespace {

TEST(TokenizerUtf8Test, ValidPrefixEndsAtTheFirstInvalidSequence) {
  const char* pieces[] = {"a", "Hello, world ", "\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x98\x80",
                          "\xed\x9f\xbf", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf",
                          // invalid: lone continuation, overlong, surrogate, above U+10FFFF, cut
                          "\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                          "\xf5", "\xff", "\xc3", "\xe6\x97", "\xf0\x9f\x98"};
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    // Short texts, and long ones (the vector check takes 32 bytes at a time).
    int n = static_cast<int>(i % 2 == 0 ? rng() % 12 : rng() % 80);
    for (int k = 0; k < n; ++k) {
      size_t which = rng() % (sizeof pieces / sizeof *pieces);
      if (which >= 8 && rng() % 12 != 0) which = rng() % 8;  // mostly valid
      s += pieces[which];
    }
    const size_t prefix = ValidUtf8Prefix(s);
    ASSERT_LE(prefix, s.size());
    EXPECT_TRUE(IsValidUtf8(s.substr(0, prefix))) << s;
    EXPECT_EQ(prefix == s.size(), IsValidUtf8(s)) << s;
    const std::string repaired = ToValidUtf8(s);
    EXPECT_TRUE(IsValidUtf8(repaired));
    EXPECT_EQ(repaired, ReplaceInvalidUtf8(s)) << s;
    if (prefix < s.size()) {
      // The repair keeps the valid prefix and replaces what follows it.
      EXPECT_EQ(repaired.substr(0, prefix + 3), s.substr(0, prefix) + "\xef\xbf\xbd") << s;
    }
  }
}

}  // namespace
}  // namespace reel::llm::internal
