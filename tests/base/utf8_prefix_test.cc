// ValidUtf8Prefix (the vector validator, 32 bytes a step) against a walk one sequence at a time
// with Utf8SequenceLength, on long texts whose invalid or cut sequences fall anywhere, block
// boundaries included.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "base/utf8.h"

namespace reel {
namespace {

size_t PrefixOneAtATime(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t length = Utf8SequenceLength(s, pos);
    if (length == 0) return pos;
    pos += length;
  }
  return pos;
}

TEST(Utf8PrefixTest, VectorValidatorAgreesWithTheSequenceWalk) {
  const char* pieces[] = {"a", "Hello, world, in plain ASCII ", "\xc3\xa9", "\xe6\x97\xa5",
                          "\xf0\x9f\x98\x80", "\xed\x9f\xbf", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf",
                          // invalid: lone continuation, overlong, surrogate, > U+10FFFF, cut
                          "\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                          "\xf5", "\xff", "\xc3", "\xe6\x97", "\xf0\x9f\x98"};
  std::mt19937 rng(11);
  int invalid = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const int n = static_cast<int>(rng() % 120);
    for (int k = 0; k < n; ++k) {
      size_t which = rng() % (sizeof pieces / sizeof *pieces);
      if (which >= 8 && rng() % 40 != 0) which = rng() % 8;  // mostly valid
      s += pieces[which];
    }
    const size_t expected = PrefixOneAtATime(s);
    ASSERT_EQ(ValidUtf8Prefix(s), expected) << i;
    EXPECT_EQ(IsValidUtf8(s), expected == s.size());
    invalid += expected < s.size();
  }
  EXPECT_GT(invalid, 1000);  // both outcomes were tried
  EXPECT_GT(20000 - invalid, 1000);
}

TEST(Utf8PrefixTest, ErrorAfterManyValidBlocks) {
  std::string s(1000, 'x');
  s += "\xe6\x97\xa5";
  EXPECT_EQ(ValidUtf8Prefix(s), s.size());
  s.insert(777, "\xed\xa0\x80");  // a surrogate deep inside
  EXPECT_EQ(ValidUtf8Prefix(s), 777u);
  std::string cut(64, 'y');
  cut += "\xf0\x9f\x98";  // cut at the end, after whole blocks
  EXPECT_EQ(ValidUtf8Prefix(cut), 64u);
}

}  // namespace
}  // namespace reel
