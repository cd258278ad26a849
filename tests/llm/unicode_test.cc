// Normalization without the reference library: NormalizeChanged (which normalizes only the
// stretches that fail the quick check) against Normalize of the whole text, on random text made
// of the characters where the two could differ.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "llm/tokenizer/unicode.h"

namespace reel::llm::internal {
namespace {

TEST(NormalizationTest, NormalizingStretchesEqualsNormalizingTheWhole) {
  const char* alphabet[] = {
      "a",
      "e",
      "A",
      " ",
      "\n",
      "1",
      "\xc3\xa9",          // é (precomposed)
      "\xcc\x81",          // U+0301 combining acute (ccc 230)
      "\xcc\xa3",          // U+0323 combining dot below (ccc 220)
      "\xcd\x85",          // U+0345 ypogegrammeni (ccc 240)
      "\xe0\xa4\xbc",      // U+093C nukta (ccc 7)
      "\xe0\xa4\x95",      // U+0915 DEVANAGARI KA
      "\xe1\x84\x80",      // U+1100 Hangul L jamo
      "\xe1\x85\xa1",      // U+1161 Hangul V jamo
      "\xe1\x86\xa8",      // U+11A8 Hangul T jamo
      "\xea\xb0\x80",      // U+AC00 Hangul LV syllable
      "\xea\xb0\x81",      // U+AC01 Hangul LVT syllable
      "\xe2\x84\xab",      // U+212B ANGSTROM SIGN (singleton decomposition)
      "\xef\xac\x81",      // U+FB01 ligature fi (compatibility)
      "\xc2\xbd",          // ½ (compatibility)
      "\xe0\xbd\xb3",      // U+0F73 (decomposes to two non-starters)
      "\xe0\xbe\x81",      // U+0F81
      "\xe0\xbd\xb1",      // U+0F71 (ccc 129)
      "\xe0\xbd\xb2",      // U+0F72 (ccc 130)
      "\xe3\x82\xab",      // U+30AB katakana KA
      "\xe3\x82\x99",      // U+3099 combining voiced mark
      "\xe6\x97\xa5",      // 日
      "\xf0\x9f\x98\x80",  // emoji
      "\xf0\x9d\x85\x9e",  // U+1D15E musical symbol (composition exclusion)
      "\xe0\xa7\x87",      // U+09C7 BENGALI VOWEL SIGN E
      "\xe0\xa6\xbe",      // U+09BE BENGALI VOWEL SIGN AA (composes with U+09C7)
  };
  std::mt19937 rng(7);
  const NormalizationForm forms[] = {NormalizationForm::kNfc, NormalizationForm::kNfd,
                                     NormalizationForm::kNfkc, NormalizationForm::kNfkd};
  int changed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string t;
    int n = 1 + static_cast<int>(rng() % 24);
    for (int k = 0; k < n; ++k) t += alphabet[rng() % (sizeof alphabet / sizeof *alphabet)];
    for (NormalizationForm form : forms) {
      std::string whole = Normalize(t, form);
      std::string out = "untouched";
      if (NormalizeChanged(t, form, out)) {
        ++changed;
        ASSERT_EQ(out, whole) << "form " << static_cast<int>(form) << " of \"" << t << "\"";
      } else {
        ASSERT_EQ(out, "untouched");
        ASSERT_EQ(t, whole) << "form " << static_cast<int>(form) << " of \"" << t << "\"";
      }
    }
  }
  EXPECT_GT(changed, 10000);  // the alphabet exercises the normalizing path
}

}  // namespace
}  // namespace reel::llm::internal
