// The word-cutting fast path of SentencePiece-style tokenizers (llm/tokenizer/char_words.h)
// against the general path: random small tokenizers whose merges put characters before '▁'
// (places that must not be cut), with byte fallback, unk or both, with and without a Prepend,
// on random texts (runs of spaces, leading and trailing spaces, newlines as added tokens,
// characters without a token, long words); and the cut places and first ids of a hand-made
// vocabulary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "llm/tokenizer/char_words.h"
#include "llm/tokenizer/tokenizer.h"
#include "tests/support/sentencepiece_tokenizers.h"

namespace reel::llm {
namespace {

using internal::CharSubstitution;
using internal::CharWords;
using internal::PieceSpan;
using internal::StringIdMap;
using nlohmann::json;

Tokenizer MakeTokenizer(const json& j) {
  Result<Tokenizer> t = Tokenizer::FromJson(j.dump(), "test.json");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) std::abort();
  return std::move(t).value();
}

bool HasFastPath(const Tokenizer& t) {
  return t.Description().find("fast path: SentencePiece words") != std::string::npos;
}

TEST(CharWordsTest, FastPathGivesTheIdsOfTheGeneralPath) {
  int fast_count = 0;
  for (uint32_t seed = 0; seed < 150; ++seed) {
    testing::SentencePieceTokenizer spec = testing::RandomSentencePieceTokenizer(seed);
    Tokenizer fast = MakeTokenizer(spec.fast), general = MakeTokenizer(spec.general);
    ASSERT_EQ(HasFastPath(fast), spec.expect_fast) << "seed " << seed << "\n" << fast.Description();
    ASSERT_FALSE(HasFastPath(general)) << general.Description();
    fast_count += HasFastPath(fast);
    std::mt19937 rng(seed);
    std::vector<std::string> texts = {"",     " ",    "  ",       "   a",   "a   ",
                                      "\n",   " \n ", "<t>",      "a<t> b", "\xe2\x96\x81",
                                      "> </", "z z",  "\x01 \x01"};
    for (int i = 0; i < 150; ++i) {
      texts.push_back(testing::RandomSentencePieceText(spec, rng, rng() % 40));
    }
    // Words longer than the batched merge takes (64 ids) and than the cache keeps (256 bytes).
    for (size_t length : {70, 300}) {
      std::string word;
      while (word.size() < length) word += spec.alphabet[rng() % 9];  // characters, no spaces
      texts.push_back(word);
      texts.push_back(" " + word + " " + word);
    }
    for (int pass = 0; pass < 2; ++pass) {  // the second with the words cached
      for (const std::string& text : texts) {
        ASSERT_EQ(fast.Encode(text), general.Encode(text))
            << "seed " << seed << ", pass " << pass << ", text \"" << text << "\"";
      }
    }
    // All of them as one text (words of many lines merged together).
    std::string all;
    for (const std::string& text : texts) all += text + "\n";
    ASSERT_EQ(fast.Encode(all), general.Encode(all)) << "seed " << seed;
  }
  EXPECT_GT(fast_count, 60);
}

// A vocabulary where '>' and '▁' come before '▁' inside tokens: "a b> </c  d" is cut before
// the spaces after 'a' and 'c' only.
TEST(CharWordsTest, CutsOnlyWhereNoTokenHasTheCharactersOnBothSides) {
  StringIdMap vocab;
  uint32_t id = 0;
  for (const char* t : {"a", "b", "c", "d", "\xe2\x96\x81", "\xe2\x96\x81\xe2\x96\x81", ">", "<",
                        "/", "</", ">\xe2\x96\x81", "\xe2\x96\x81</", ">\xe2\x96\x81</"}) {
    vocab.Put(t, id++);
  }
  auto words = CharWords::Make(vocab, CharSubstitution{' ', 0x2581, ""}, {});
  ASSERT_NE(words, nullptr);
  EXPECT_EQ(words->Joiners(), (std::vector<uint32_t>{'>', 0x2581}));
  const std::string text = "a b> </c  d";
  std::vector<PieceSpan> spans;
  words->Cut(text, 10, spans);
  std::vector<std::string> got;
  for (const PieceSpan& s : spans) got.push_back(text.substr(s.start - 10, s.end - s.start));
  EXPECT_EQ(got, (std::vector<std::string>{"a", " b> </c", "  d"}));
  // A raw '▁' is cut like a space.
  spans.clear();
  words->Cut(
      "a\xe2\x96\x81"
      "b",
      0, spans);
  EXPECT_EQ(spans.size(), 2u);

  // First ids: the space as '▁'; without a token and without byte fallback: 0.
  uint32_t ids[16];
  EXPECT_EQ(words->FirstIds(" a>", ids), 3u);
  EXPECT_EQ(ids[0], 4u);
  EXPECT_EQ(ids[1], 0u);
  EXPECT_EQ(ids[2], 6u);
  EXPECT_EQ(words->FirstIds("ab\xc3\xa9", ids), 0u);
  std::string substituted;
  words->Substitute(" a  \xc3\xa9", substituted);
  EXPECT_EQ(substituted,
            "\xe2\x96\x81"
            "a\xe2\x96\x81\xe2\x96\x81\xc3\xa9");

  // With byte fallback, a character without a token becomes its bytes' tokens.
  std::vector<uint32_t> bytes(256);
  for (uint32_t b = 0; b < 256; ++b) bytes[b] = 1000 + b;
  auto with_bytes = CharWords::Make(vocab, CharSubstitution{' ', 0x2581, ""}, bytes);
  ASSERT_EQ(with_bytes->FirstIds("a\xc3\xa9 ", ids), 4u);
  EXPECT_EQ(std::vector<uint32_t>(ids, ids + 4),
            (std::vector<uint32_t>{0, 1000 + 0xC3, 1000 + 0xA9, 4}));
  // '▁' must be a token of its own.
  StringIdMap no_space;
  no_space.Put("a", 0);
  EXPECT_EQ(CharWords::Make(no_space, CharSubstitution{' ', 0x2581, ""}, bytes), nullptr);
}

// The fast path is only taken where it is exact: not with a pre-tokenizer that cuts, a
// normalizer that does more than the substitution, or added tokens matched after
// normalization.
TEST(CharWordsTest, OtherSetupsTakeTheGeneralPath) {
  uint32_t seed = 0;
  testing::SentencePieceTokenizer spec = testing::RandomSentencePieceTokenizer(seed);
  while (!spec.expect_fast) spec = testing::RandomSentencePieceTokenizer(++seed);
  ASSERT_TRUE(HasFastPath(MakeTokenizer(spec.fast)));
  json j = spec.fast;
  j["pre_tokenizer"] = {{"type", "WhitespaceSplit"}};
  EXPECT_FALSE(HasFastPath(MakeTokenizer(j)));
  j = spec.fast;
  j["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Removed"}, {"invert", true}};
  EXPECT_FALSE(HasFastPath(MakeTokenizer(j)));
  j = spec.fast;
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers", {j["normalizer"], {{"type", "Lowercase"}}}}};
  EXPECT_FALSE(HasFastPath(MakeTokenizer(j)));
  j = spec.fast;
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", " "}}}, {"content", "\u2581"}};
  EXPECT_FALSE(HasFastPath(MakeTokenizer(j)));
  j = spec.fast;
  j["added_tokens"][1]["normalized"] = true;
  EXPECT_FALSE(HasFastPath(MakeTokenizer(j)));
}

}  // namespace
}  // namespace reel::llm
