// Language codes and the choice of the audio stream that carries the speech.
#include <gtest/gtest.h>

#include "pipeline/audio/audio_stream.h"
#include "pipeline/audio/language_code.h"

namespace reel::pipeline {
namespace {

TEST(LanguageCodeTest, EverySpellingOfALanguageGivesItsShortCode) {
  struct Case {
    const char* text;
    const char* code;
  };
  const Case cases[] = {
      {"en", "en"},
      {"eng", "en"},
      {"EN", "en"},
      {"English", "en"},
      {"en-US", "en"},
      {"en_GB", "en"},
      {"ger", "de"},
      {"deu", "de"},
      {"german", "de"},
      {"fre", "fr"},
      {"fra", "fr"},
      {"chi", "zh"},
      {"zho", "zh"},
      {"zh-Hans", "zh"},
      {"pt_BR", "pt"},
      {"nob", "no"},
      {"nb", "no"},
      {"iw", "he"},
      {"jv", "jw"},
      {"haw", "haw"},
      {"cantonese", "yue"},
      {" spa ", "es"},
      {"haitian creole", "ht"},
  };
  for (const Case& c : cases) EXPECT_EQ(LanguageCode(c.text), c.code) << c.text;
  for (const char* none : {"", "und", "mul", "zxx", "xx", "klingon", "-", "e"}) {
    EXPECT_EQ(LanguageCode(none), "") << none;
  }
  EXPECT_EQ(LanguageName("deu"), "german");
  EXPECT_TRUE(SameLanguage("eng", "en-US"));
  EXPECT_TRUE(SameLanguage("ger", "deu"));
  EXPECT_FALSE(SameLanguage("eng", "ger"));
  EXPECT_FALSE(SameLanguage("", ""));
  EXPECT_FALSE(SameLanguage("und", "und"));
}

TEST(ChooseAudioStreamTest, LanguageThenDefaultThenFirst) {
  const std::vector<AudioStreamCandidate> streams = {
      {1, "eng", false}, {2, "ger", true}, {3, "fre", false}, {4, "ger", false}};
  auto pick = [&](const char* language) { return ChooseAudioStream(streams, language); };

  ASSERT_TRUE(pick("de"));
  EXPECT_EQ(pick("de")->index, 2);  // two German streams: the default one
  EXPECT_TRUE(pick("de")->language_matched);
  EXPECT_EQ(pick("English")->index, 1);
  EXPECT_EQ(pick("fra")->index, 3);
  EXPECT_EQ(pick("fra")->reason, "stream #3 (fre): language 'fra'");

  // No stream in the language: the default one, and the reason says so.
  EXPECT_EQ(pick("ja")->index, 2);
  EXPECT_FALSE(pick("ja")->language_matched);
  EXPECT_EQ(pick("ja")->reason, "stream #2 (ger): the default stream (no stream in language 'ja')");
  EXPECT_EQ(pick("")->index, 2);

  // No default: the first.
  const std::vector<AudioStreamCandidate> plain = {{0, "", false}, {5, "spa", false}};
  EXPECT_EQ(ChooseAudioStream(plain, "")->index, 0);
  EXPECT_EQ(ChooseAudioStream(plain, "")->reason, "stream #0: the first audio stream");
  EXPECT_EQ(ChooseAudioStream(plain, "es")->index, 5);
  EXPECT_EQ(ChooseAudioStream({{7, "", true}}, "")->reason, "stream #7: the audio stream");
  EXPECT_FALSE(ChooseAudioStream({}, "en"));
}

}  // namespace
}  // namespace reel::pipeline
