// The tokenizer without the reference library: small hand-checked tokenizer.json files (merge
// order, added-token flags, byte fallback, invalid UTF-8), refusals of what it cannot honour,
// the regex engine's semantics, and the hand-written split matchers against the general engine
// on random text.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "llm/tokenizer/byte_level.h"
#include "llm/tokenizer/pre_tokenizer.h"
#include "llm/tokenizer/regex.h"
#include "llm/tokenizer/split_pattern.h"
#include "llm/tokenizer/tokenizer.h"
#include "llm/tokenizer/utf8.h"
#include "tests/support/tokenizer_reference.h"

namespace reel::llm {
namespace {

using nlohmann::json;

// A tiny BPE tokenizer: characters a b c d and ' ', merges in the given order.
json TinyTokenizer() {
  return {{"version", "1.0"},
          {"added_tokens", json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", nullptr},
          {"model",
           {{"type", "BPE"},
            {"vocab",
             {{"a", 0},
              {"b", 1},
              {"c", 2},
              {"d", 3},
              {" ", 4},
              {"ab", 5},
              {"bc", 6},
              {"abc", 7},
              {"aa", 8},
              {"<unk>", 9},
              {"cd", 10}}},
            {"merges", {"a b", "b c", "ab c", "a a", "c d"}}}}};
}

Tokenizer Make(const json& j) {
  Result<Tokenizer> t = Tokenizer::FromJson(j.dump(), "test.json");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) std::abort();
  return std::move(t).value();
}

Status LoadError(const json& j) {
  Result<Tokenizer> t = Tokenizer::FromJson(j.dump(), "test.json");
  return t.ok() ? Status::Ok() : t.status();
}

TEST(TokenizerTest, MergesLowestRankFirstThenLeftmost) {
  Tokenizer t = Make(TinyTokenizer());
  // "abc": a+b (rank 0) before b+c (rank 1), then ab+c.
  EXPECT_EQ(t.Encode("abc"), (std::vector<uint32_t>{7}));
  // "aaa": a+a at the left first.
  EXPECT_EQ(t.Encode("aaa"), (std::vector<uint32_t>{8, 0}));
  // "bcd": b+c (rank 1) before c+d (rank 4).
  EXPECT_EQ(t.Encode("bcd"), (std::vector<uint32_t>{6, 3}));
  // Without an unk token, unknown characters are dropped, as the library does.
  EXPECT_EQ(t.Encode("axc"), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(t.Encode("axb"), (std::vector<uint32_t>{5}));  // a and b meet once x is gone
  EXPECT_EQ(t.Decode(std::vector<uint32_t>{7, 4, 0}), "abc   a");
}

TEST(TokenizerTest, LongPiecesMergeLikeShortOnes) {
  Tokenizer t = Make(TinyTokenizer());
  std::string long_text;
  std::vector<uint32_t> expected;
  for (int i = 0; i < 100; ++i) {
    long_text += "abcd";
    expected.push_back(7);
    expected.push_back(3);
  }
  EXPECT_EQ(t.Encode(long_text), expected);  // one piece of 400 characters: the heap path
}

TEST(TokenizerTest, LargeIdsNeverPassForAnotherPair) {
  // Merge lookups key a pair by 21 bits per id. A vocabulary id above that range (no merge may
  // use one) used to spill into the left id's bits: ("a" 0, "e" 2^21 + 1) read as ("b" 1, "b"
  // 1) and merged into "bb".
  json j = TinyTokenizer();
  j["model"]["vocab"]["bb"] = 11;
  j["model"]["vocab"]["e"] = (1u << 21) + 1;
  j["model"]["merges"].push_back("b b");
  Tokenizer t = Make(j);
  EXPECT_EQ(t.Encode("bb"), (std::vector<uint32_t>{11}));
  EXPECT_EQ(t.Encode("ae"), (std::vector<uint32_t>{0, (1u << 21) + 1}));
  EXPECT_EQ(t.Encode("eb"), (std::vector<uint32_t>{(1u << 21) + 1, 1}));
}

TEST(TokenizerTest, LargeMergedIdsInByteLevelPieces) {
  // A byte-level tokenizer (GPT-2 split, every byte a token: ids 0-255) whose merge "a b"
  // makes an id above the merge table's 21-bit field. Looked up unclamped, (ab, "b") would
  // pass for (id 10, "b") and take the merge "\n b" (id 10 is the byte token of "\n").
  json j = {{"version", "1.0"},
            {"added_tokens", json::array()},
            {"normalizer", nullptr},
            {"pre_tokenizer",
             {{"type", "ByteLevel"},
              {"add_prefix_space", false},
              {"trim_offsets", true},
              {"use_regex", true}}},
            {"post_processor", nullptr},
            {"decoder", nullptr}};
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[internal::ByteLevelUtf8(static_cast<uint8_t>(b))] = b;
  const std::string nl(internal::ByteLevelUtf8(static_cast<uint8_t>(10)));
  const uint32_t ab = (1u << 21) + 10;
  vocab["ab"] = ab;
  vocab[nl + "b"] = 300;
  j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"a b", nl + " b"}}};
  Tokenizer t = Make(j);
  EXPECT_EQ(t.Encode("abb"), (std::vector<uint32_t>{ab, 'b'}));
  EXPECT_EQ(t.Encode("\nb"), (std::vector<uint32_t>{10, 'b'}));  // (split apart: \n is \s)
}

TEST(TokenizerTest, UnknownTokenAndByteFallback) {
  json j = TinyTokenizer();
  j["model"]["unk_token"] = "<unk>";
  j["model"]["fuse_unk"] = true;
  EXPECT_EQ(Make(j).Encode("axyb"), (std::vector<uint32_t>{0, 9, 1}));
  j["model"]["fuse_unk"] = false;
  EXPECT_EQ(Make(j).Encode("axyb"), (std::vector<uint32_t>{0, 9, 9, 1}));
  j["model"]["byte_fallback"] = true;
  j["model"]["vocab"]["<0x78>"] = 11;  // 'x' has a byte token, 'y' has none
  EXPECT_EQ(Make(j).Encode("axyb"), (std::vector<uint32_t>{0, 11, 9, 1}));
}

TEST(TokenizerTest, AddedTokenFlags) {
  json j = TinyTokenizer();
  auto add = [&](const std::string& content, bool lstrip, bool rstrip, bool single_word) {
    j["added_tokens"].push_back({{"id", 0},
                                 {"content", content},
                                 {"single_word", single_word},
                                 {"lstrip", lstrip},
                                 {"rstrip", rstrip},
                                 {"normalized", false},
                                 {"special", true}});
  };
  add("<s>", false, false, false);     // id 11: after the 11 vocabulary entries (0-10)
  add("<L>", true, false, false);      // 12
  add("<R>", false, true, false);      // 13
  add("ab", false, false, true);       // "ab" is in the vocabulary: keeps id 5
  add("<s><s>", false, false, false);  // 14: the longest match wins
  Tokenizer t = Make(j);
  EXPECT_EQ(t.TokenToId("<s>"), 11u);
  EXPECT_EQ(t.TokenToId("<s><s>"), 14u);
  EXPECT_EQ(t.Encode("a<s>b"), (std::vector<uint32_t>{0, 11, 1}));
  EXPECT_EQ(t.Encode("a  <L>b"), (std::vector<uint32_t>{0, 12, 1}));  // spaces swallowed
  EXPECT_EQ(t.Encode("a<R>  b"), (std::vector<uint32_t>{0, 13, 1}));
  EXPECT_EQ(t.Encode("<s><s><s>"), (std::vector<uint32_t>{14, 11}));
  // single_word: "ab" is a token only when not inside a word.
  EXPECT_EQ(t.Encode("ab c"), (std::vector<uint32_t>{5, 4, 2}));
  EXPECT_EQ(t.Encode("cabd"), (std::vector<uint32_t>{2, 5, 3}));  // merged by the model instead
  EXPECT_TRUE(t.IsSpecial(11));
  EXPECT_EQ(t.Decode(std::vector<uint32_t>{0, 11, 1}, /*skip_special_tokens=*/true), "a b");
}

TEST(TokenizerTest, InvalidUtf8CountsAsReplacementCharacters) {
  json j = TinyTokenizer();
  j["model"]["vocab"]["\xef\xbf\xbd"] = 11;
  Tokenizer t = Make(j);
  EXPECT_EQ(t.Encode("a\xff"
                     "b\xe2\x82"),
            (std::vector<uint32_t>{0, 11, 1, 11}));
  EXPECT_EQ(internal::ToValidUtf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(internal::ToValidUtf8("\xf0\x9f\x98"), "\xef\xbf\xbd");
}

TEST(TokenizerTest, RefusesWhatItCannotReproduce) {
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
  };
  std::vector<Case> cases = {
      {"model WordPiece", [](json& j) { j["model"]["type"] = "WordPiece"; }},
      {"dropout", [](json& j) { j["model"]["dropout"] = 0.1; }},
      {"normalizer BertNormalizer",
       [](json& j) {
         j["normalizer"] = {{"type", "BertNormalizer"}};
       }},
      {"pre_tokenizer Metaspace",
       [](json& j) {
         j["pre_tokenizer"] = {{"type", "Metaspace"}};
       }},
      {"decoder WordPiece",
       [](json& j) {
         j["decoder"] = {{"type", "WordPiece"}};
       }},
      {"back-reference",
       [](json& j) {
         j["pre_tokenizer"] = {{"type", "Split"},
                               {"pattern", {{"Regex", "(a)\\1"}}},
                               {"behavior", "Isolated"},
                               {"invert", false}};
       }},
      {"not in the vocabulary", [](json& j) { j["model"]["merges"].push_back("a x"); }},
      {"unk_token", [](json& j) { j["model"]["unk_token"] = "<missing>"; }},
      {"version", [](json& j) { j["version"] = "2.0"; }},
  };
  for (const Case& c : cases) {
    json j = TinyTokenizer();
    c.edit(j);
    Status s = LoadError(j);
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_NE(s.message().find("test.json"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.what == std::string("back-reference") ? "\\1" : c.what),
              std::string::npos)
        << s.message();
  }
  EXPECT_EQ(Tokenizer::FromJson("{\"model\": ", "x.json").status().code(), ErrorCode::kCorruptData);
  EXPECT_EQ(Tokenizer::Load("/nonexistent/tokenizer.json").status().code(), ErrorCode::kNotFound);
}

// Valid JSON in a shape a tokenizer.json does not have is named for what it is, with the entry;
// only text that is not JSON is "not valid JSON".
TEST(TokenizerTest, MalformedMergesAndIdsSayWhatIsWrong) {
  struct Case {
    json merges;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {json::array({json::array({"a", "b"}), json::array({"b"})}),
       "merge 2 ([\"b\"]) has one part: a merge is \"a b\" or [\"a\", \"b\"]"},
      {json::array({json::array({"a", "b", "c"})}), "merge 1 ([\"a\",\"b\",\"c\"]) has 3 parts"},
      {json::array({json::array({"a", 1})}), "has a part that is not a string"},
      {json::array({json::array({"a", "b"}), "b c"}), "merges mix the"},
      {json::array({json::array()}), "has no parts"},
  };
  for (const Case& c : cases) {
    json j = TinyTokenizer();
    j["model"]["merges"] = c.merges;
    Status s = LoadError(j);
    ASSERT_FALSE(s.ok()) << c.merges.dump();
    EXPECT_EQ(s.code(), ErrorCode::kUnsupported) << s.message();
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find("not valid JSON"), std::string::npos) << s.message();
  }
  json j = TinyTokenizer();
  j["model"]["vocab"]["ab"] = -5;
  Status s = LoadError(j);
  EXPECT_NE(s.message().find("the id of \"ab\" (-5) is not a valid token id"), std::string::npos)
      << s.message();
  // Broken JSON inside the merges is still reported as such, with where.
  std::string text = TinyTokenizer().dump();
  text.replace(text.find("[\"a b\""), 6, "[\"a b");
  s = Tokenizer::FromJson(text, "x.json").status();
  EXPECT_EQ(s.code(), ErrorCode::kCorruptData);
  EXPECT_NE(s.message().find("not valid JSON"), std::string::npos) << s.message();
}

std::vector<std::pair<size_t, size_t>> All(const std::string& re, const std::string& text) {
  auto r = internal::Regex::Compile(re);
  EXPECT_TRUE(r.ok()) << re << ": " << r.status().ToString();
  std::vector<std::pair<size_t, size_t>> out;
  if (r.ok()) r->FindAll(text, out);
  return out;
}
using Spans = std::vector<std::pair<size_t, size_t>>;

TEST(RegexTest, OnigurumaSemantics) {
  EXPECT_EQ(All("a|ab", "ab"), (Spans{{0, 1}}));  // first alternative wins
  EXPECT_EQ(All("a+?b", "aaab"), (Spans{{0, 4}}));
  EXPECT_EQ(All("\\s+(?!\\S)", "a   b"), (Spans{{1, 3}}));  // backtracks one space
  EXPECT_EQ(All("a*+a", "aaa"), (Spans{}));                 // possessive: no give-back
  EXPECT_EQ(All("(?>a*)b|a", "aa"), (Spans{{0, 1}, {1, 2}}));
  EXPECT_EQ(All("(?<=x)y", "xy y"), (Spans{{1, 2}}));
  EXPECT_EQ(All("(?<!x)y", "xy y"), (Spans{{3, 4}}));
  EXPECT_EQ(All("^a|b$", "a\na b\nb"), (Spans{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));  // line anchors
  EXPECT_EQ(All("\\bis\\b", "this is"), (Spans{{5, 7}}));
  EXPECT_EQ(All("", "ab"), (Spans{{0, 0}, {1, 1}, {2, 2}}));  // empty matches, one per place
  EXPECT_EQ(All("x*", "axx"), (Spans{{0, 0}, {1, 3}}));       // none right after a match
  EXPECT_EQ(All("\\p{N}{1,3}", "12345"), (Spans{{0, 3}, {3, 5}}));
  EXPECT_EQ(All("[^\\s\\p{L}]+", "ab, 12!"), (Spans{{2, 3}, {4, 7}}));
  EXPECT_EQ(All(".", "a\nb"), (Spans{{0, 1}, {2, 3}}));
  EXPECT_EQ(All("(?i:'s)", "'S '\xc5\xbf 's"), (Spans{{0, 2}, {3, 6}, {7, 9}}));
  EXPECT_EQ(All("\\x{65e5}|\\u672c", "日本"), (Spans{{0, 3}, {3, 6}}));
  EXPECT_EQ(All("a{2}|b{,2}c", "aaabbbc"), (Spans{{0, 2}, {4, 7}}));
  EXPECT_EQ(All("[-a]|\\{x}", "-{x}a"), (Spans{{0, 1}, {1, 4}, {4, 5}}));
}

TEST(RegexTest, RefusesConstructsItDoesNotReproduce) {
  for (const char* re : {"(a)\\1", "(?i)ss", "(?i:[a-z])", "[[:alpha:]]", "[a&&b]", "\\p{Greek}",
                         "(a*)*", "(?<=a+)b", "a**", "(?x)a", "\\R", "\\xff"}) {
    EXPECT_FALSE(internal::Regex::Compile(re).ok()) << re;
  }
}

// The hand-written matchers find exactly what the general engine finds.
TEST(SplitPatternTest, HandWrittenMatchersAgreeWithTheEngine) {
  const char* sources[] = {
      internal::kGpt2Pattern,
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      // DeepSeek V3's three, as its tokenizer.json holds them after JSON unescaping.
      R"(\p{N}{1,3})",
      "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
      "[!\"#$%&'()*+,\\-./"
      ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
      "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
  };
  // Every pattern with a hand-written matcher is among them.
  for (const std::string& source : internal::FastPatternSources()) {
    EXPECT_TRUE(std::find(std::begin(sources), std::end(sources), source) != std::end(sources))
        << source;
  }
  // Random text from an alphabet of every class the patterns care about.
  const char* alphabet[] = {"a",
                            "Z",
                            "é",
                            "É",
                            "ǅ",
                            "ʰ",
                            "日",
                            "ا",
                            "\xcc\x81",
                            "\xe0\xa4\xbe",
                            "1",
                            "٣",
                            "½",
                            "Ⅻ",
                            " ",
                            "  ",
                            "\t",
                            "\n",
                            "\r",
                            "\r\n",
                            "\xc2\xa0",
                            "\xe3\x80\x80",
                            "\xc2\x85",
                            "'",
                            "'s",
                            "'S",
                            "'\xc5\xbf",
                            "'ll",
                            "'RE",
                            "/",
                            "//",
                            ".",
                            "!",
                            "😀",
                            "\xe2\x80\x8d",
                            "_",
                            "-",
                            "$",
                            "+",
                            "\xe2\x82\xac",  // euro sign (Sc)
                            "\xc2\xa1",      // inverted ! (Po)
                            "\x0b",          // vertical tab: \s, not [\r\n]
                            "\xe3\x81\x81",  // hiragana small a
                            "\xe3\x82\xa2",  // katakana a
                            "\xe3\x82\xa0",  // U+30A0 (Pd, in DeepSeek's CJK range)
                            "\xe9\xbe\xa5",  // U+9FA5, the last of the CJK range
                            "\xe9\xbe\xa6",  // U+9FA6, just past it
                            "\xe3\x90\x80",  // U+3400 (CJK extension A, not in it)
                            "A",
                            "12345"};
  std::mt19937 rng(11);
  std::vector<std::string> texts;
  for (int i = 0; i < 3000; ++i) {
    std::string t;
    int n = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) t += alphabet[rng() % (sizeof alphabet / sizeof *alphabet)];
    texts.push_back(t);
  }
  std::string corpus = testing::TokenizerCorpusDir();
  if (!corpus.empty()) {
    for (const std::string& d : testing::ReadDocs(corpus + "/synthetic.docs")) {
      texts.push_back(internal::ToValidUtf8(d));
    }
  }
  for (const char* source : sources) {
    auto fast = internal::MakeFastPattern(source);
    ASSERT_NE(fast, nullptr) << source;
    auto slow = internal::MakeRegexPattern(source, /*allow_fast=*/false);
    ASSERT_TRUE(slow.ok());
    int failures = 0;
    for (const std::string& t : texts) {
      std::vector<internal::PatternMatch> a, b;
      fast->FindMatches(t, a);
      (*slow)->FindMatches(t, b);
      bool same = a.size() == b.size();
      for (size_t i = 0; same && i < a.size(); ++i) {
        same = a[i].start == b[i].start && a[i].end == b[i].end && a[i].is_match == b[i].is_match;
      }
      if (!same && failures++ < 3) ADD_FAILURE() << fast->Name() << " differs on \"" << t << "\"";
    }
  }
}

// A Sequence of Isolated Splits and the plain ByteLevel mapping (DeepSeek V3's setup) runs
// fused as one chained pattern; its pieces are the ones the split-list path makes.
TEST(PreTokenizerTest, ChainedIsolatedSplitsMatchTheSplitListPath) {
  json split = {{"type", "Split"}, {"behavior", "Isolated"}, {"invert", false}};
  json digits = split, cjk = split, words = split;
  digits["pattern"] = {{"Regex", R"(\p{N}{1,3})"}};
  cjk["pattern"] = {{"Regex", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"}};
  words["pattern"] = {{"Regex", R"( ?\p{L}+|\s+)"}};  // a general-engine pattern among them
  json config = {{"type", "Sequence"},
                 {"pretokenizers",
                  {digits,
                   cjk,
                   words,
                   {{"type", "ByteLevel"},
                    {"add_prefix_space", false},
                    {"trim_offsets", true},
                    {"use_regex", false}}}}};
  auto pre = internal::MakePreTokenizer(config);
  ASSERT_TRUE(pre.ok()) << pre.status().ToString();
  internal::FusedSplit fused;
  ASSERT_TRUE((*pre)->Fused(fused));
  EXPECT_TRUE(fused.keep_matches && fused.keep_gaps && fused.byte_level);
  for (std::string text : {"abc 12345 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\x8bx7  y!!\n",
                           "1", "   ", "\xe3\x82\xa2\xe3\x82\xa2 99999999 a1b2 , .", ""}) {
    if (text.empty()) continue;
    std::vector<internal::PatternMatch> spans;
    fused.pattern->FindMatches(text, spans);
    std::vector<std::string> from_fused;
    for (const auto& m : spans) from_fused.push_back(text.substr(m.start, m.end - m.start));
    internal::SplitList list;
    list.buffer = text;
    list.splits = {{0, static_cast<uint32_t>(text.size()), false}};
    (*pre)->Apply(list);
    std::vector<std::string> from_list;
    for (const auto& s : list.splits) {
      // The list path marks pieces byte-level without writing the mapping out.
      from_list.emplace_back(list.Text(s));
    }
    EXPECT_EQ(from_fused, from_list) << text;
  }
}

}  // namespace
}  // namespace reel::llm
