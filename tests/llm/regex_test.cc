// The regex engine's work on hostile patterns (a tokenizer.json is outside input): patterns that
// make a plain backtracking search exponential (`(a+)+$`, issue 18 item 9) or polynomial take
// linear work, and remembering outcomes never changes a match (checked against the plain search
// on the tokenizers' own patterns, the semantics cases, and random patterns and texts).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <random>
#include <string>
#include <vector>

#include "llm/tokenizer/regex.h"
#include "llm/tokenizer/split_pattern.h"
#include "llm/tokenizer/tokenizer.h"

namespace reel::llm {
namespace {

using internal::Regex;
using Spans = std::vector<std::pair<size_t, size_t>>;

Regex Compile(const std::string& pattern) {
  Result<Regex> r = Regex::Compile(pattern);
  EXPECT_TRUE(r.ok()) << pattern << ": " << r.status().ToString();
  if (!r.ok()) std::abort();
  return std::move(r).value();
}

Spans FindAll(const Regex& re, const std::string& text, Regex::Memo memo,
              Regex::Stats* stats = nullptr) {
  Spans out;
  re.FindAll(text, out, memo, stats);
  return out;
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Patterns a backtracking search takes exponential (or high polynomial) time on, each with the
// text that triggers it (made of `unit` repeated, then `tail`).
struct Hostile {
  const char* pattern;
  const char* unit;
  const char* tail;
};
const Hostile kHostile[] = {
    {"(a+)+$", "a", "!"},                         // the issue's tokenizer.json
    {"(a+)+b", "a", "!"},                         //
    {"^(a|a)+$", "a", "!"},                       // overlapping alternatives
    {"(a|aa)+$", "a", "!"},                       //
    {"(?:a+){2,}c", "a", "!"},                    // a counted loop of a loop
    {"(\\w+\\s?)+$", "ab ", "!"},                 // the classic e-mail/word-list shape
    {"(.*a){12}", "a", "!"},                      // polynomial of degree 12
    {"(a+)+?b|(a+)*c", "a", "!"},                 // lazy and greedy loops
    {"(?:a+?)+$", "a", "!"},                      //
    {"(?=(a+)+$)a", "a", "!"},                    // inside a look-ahead, at every position
    {"(?>(a+)+$)|a(?<=a)x", "a", "!"},            // inside an atomic group
    {"(?:[a-z]+|\\w+)+\\d", "abc", "!"},          //
    {"(a+)+(?!a)!x", "a", "!"},                   //
    {"\\s*(?:\\s+\\S?)+\\s*;", " ", "x"},         //
    {"(?:a+?b*?)+c", "ab", "!"},                  //
    {"\\p{L}*\\p{L}*\\p{L}*\\p{L}*x", "a", "!"},  // a*a*a*a*x: degree 4
    {"(?=a*)(?:a|b)", "a", ""},                   // a look-ahead scanning the run at each start
};

// The plain search and the remembering one find the same matches; the remembering one stays
// linear where the plain one explodes.
TEST(RegexWorkTest, HostilePatternsTakeLinearWork) {
  for (const Hostile& h : kHostile) {
    SCOPED_TRACE(h.pattern);
    const Regex re = Compile(h.pattern);
    // About 9 characters: the plain search is exponential.
    const std::string small = Repeat(h.unit, 9 / std::string(h.unit).size()) + h.tail;
    EXPECT_EQ(FindAll(re, small, Regex::Memo::kAlways), FindAll(re, small, Regex::Memo::kNever));
    for (size_t n : {size_t{30}, size_t{1000}, size_t{100000}}) {
      const std::string text = Repeat(h.unit, n) + h.tail;
      Regex::Stats stats;
      Spans spans = FindAll(re, text, Regex::Memo::kAuto, &stats);
      // At most the work before remembering starts (64 steps a byte), then a bounded number of
      // steps per state: linear in the text (counted, not timed: the sanitizer build is slow).
      EXPECT_LE(stats.steps, 64 * (text.size() + 1) + 4096 + 400 * (text.size() + 1))
          << "n " << n << ", " << spans.size() << " matches";
      if (n == 30) {
        EXPECT_EQ(spans, FindAll(re, text, Regex::Memo::kAlways));
      }
    }
  }
}

// The issue's numbers: `(a+)+$` over 26 'a's took 4.4 s, over 30 72 s. Now a few thousand steps;
// the plain search (Memo::kNever) is what the engine did before.
TEST(RegexWorkTest, TheIssuesPatternOnThirtyLetters) {
  const Regex re = Compile("(a+)+$");
  const std::string text = std::string(30, 'a') + "!";
  Regex::Stats stats;
  EXPECT_TRUE(FindAll(re, text, Regex::Memo::kAuto, &stats).empty());
  EXPECT_TRUE(stats.memoized);
  EXPECT_LT(stats.steps, 20000u);
  Regex::Stats plain;  // 2^16 times more work per extra letter... measured on 16 letters
  EXPECT_TRUE(FindAll(re, std::string(16, 'a') + "!", Regex::Memo::kNever, &plain).empty());
  EXPECT_GT(plain.steps, 100000u);
}

// Ordinary patterns never start remembering: the tokenizers' own patterns on mixed text do well
// under the 64 steps a byte at which the matcher starts to.
TEST(RegexWorkTest, OrdinaryPatternsStayOnThePlainSearch) {
  std::string text;
  const char* words[] = {"Hello", " world", ",",  " 12345", "  ", "\n\n",  " l'été", " 日本語",
                         "'s",    " don't", "\t", " Ωmega", "!!", " 3.14", " ok?",   " x"};
  std::mt19937 rng(7);
  while (text.size() < 200000) text += words[rng() % std::size(words)];
  for (const std::string& source : internal::FastPatternSources()) {
    SCOPED_TRACE(source);
    const Regex re = Compile(source);
    Regex::Stats stats;
    Spans spans = FindAll(re, text, Regex::Memo::kAuto, &stats);
    EXPECT_FALSE(stats.memoized);
    EXPECT_LT(stats.steps, 40 * text.size()) << static_cast<double>(stats.steps) / text.size();
    EXPECT_EQ(spans, FindAll(re, text, Regex::Memo::kAlways));
  }
}

// Remembering never changes a match: every construct the engine has, on random patterns and
// texts over a small alphabet (so states meet often), against the plain search.
std::string RandomPattern(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::string atom;
  switch (pick(depth > 2 ? 5 : 11)) {
    case 0:
      atom = "a";
      break;
    case 1:
      atom = "b";
      break;
    case 2:
      atom = "[ab]";
      break;
    case 3:
      atom = ".";
      break;
    case 4:
      atom = pick(2) ? "$" : "^";
      break;
    case 5:
    case 6:
      atom = "(" + RandomPattern(rng, depth + 1) + "|" + RandomPattern(rng, depth + 1) + ")";
      break;
    case 7:
      atom = "(?:" + RandomPattern(rng, depth + 1) + RandomPattern(rng, depth + 1) + ")";
      break;
    case 8:
      atom = (pick(2) ? "(?=" : "(?!") + RandomPattern(rng, depth + 1) + ")";
      break;
    case 9:
      atom = "(?>" + RandomPattern(rng, depth + 1) + ")";
      break;
    default:
      atom = pick(2) ? "(?<=a)" : "(?<!b)";
      break;
  }
  const char* quantifiers[] = {"", "", "*", "+", "?", "*?", "+?", "*+", "++", "{1,3}", "{2,}"};
  std::string q = quantifiers[pick(static_cast<int>(std::size(quantifiers)))];
  if (atom == "$" || atom == "^" || atom.starts_with("(?=") || atom.starts_with("(?!") ||
      atom.starts_with("(?<")) {
    q = "";
  }
  std::string out = atom + q;
  if (pick(3) == 0) out += RandomPattern(rng, depth + 1);
  return out;
}

TEST(RegexWorkTest, RememberingNeverChangesAMatch) {
  std::mt19937 rng(20241118);
  int compared = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::string pattern = RandomPattern(rng, 0);
    Result<Regex> re = Regex::Compile(pattern);
    if (!re.ok()) continue;  // e.g. a repeated group that can match the empty string
    for (int t = 0; t < 6; ++t) {
      std::string text;
      const size_t length = rng() % 14;
      for (size_t k = 0; k < length; ++k) text += "aab\n"[rng() % 4];
      ASSERT_EQ(FindAll(*re, text, Regex::Memo::kAlways), FindAll(*re, text, Regex::Memo::kNever))
          << "/" << pattern << "/ on \"" << text << "\"";
      ++compared;
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(RegexWorkTest, RememberingMatchesThePlainSearchOnTokenizerPatterns) {
  std::vector<std::string> sources = internal::FastPatternSources();
  sources.push_back(R"( ?\p{L}+|\s+)");
  sources.push_back(R"(\s+(?!\S)|\s+|[^\s]+?(?=\s|$))");
  std::mt19937 rng(5);
  const char* pieces[] = {"a",    "Z", "é",  "日", "1", "٣", " ", "  ",   "\t",      "\n",
                          "\r\n", "'", "'s", "!",  "?", "/", "-", "x'LL", "\xcc\x81"};
  for (const std::string& source : sources) {
    SCOPED_TRACE(source);
    const Regex re = Compile(source);
    for (int t = 0; t < 300; ++t) {
      std::string text;
      const size_t length = rng() % 30;
      for (size_t k = 0; k < length; ++k) text += pieces[rng() % std::size(pieces)];
      ASSERT_EQ(FindAll(re, text, Regex::Memo::kAlways), FindAll(re, text, Regex::Memo::kNever))
          << text;
    }
  }
}

// End to end: a tokenizer.json whose Split pre-tokenizer carries the hostile pattern loads and
// encodes a long run in linear time, with the same pieces the plain search gives on a short one.
TEST(RegexWorkTest, HostileTokenizerFileEncodesLongText) {
  nlohmann::json j = {
      {"version", "1.0"},
      {"added_tokens", nlohmann::json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Split"},
        {"pattern", {{"Regex", "(a+)+$"}}},
        {"behavior", "Isolated"},
        {"invert", false}}},
      {"post_processor", nullptr},
      {"decoder", nullptr},
      {"model",
       {{"type", "BPE"}, {"vocab", {{"a", 0}, {"!", 1}, {"aa", 2}}}, {"merges", {"a a"}}}}};
  Result<Tokenizer> t = Tokenizer::FromJson(j.dump(), "hostile.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // With the '!' the pattern matches nothing (the search backtracks over every split of the
  // run); without it, the whole run is one piece.
  EXPECT_EQ(t->Encode("aaaaa!"), (std::vector<uint32_t>{2, 2, 0, 1}));
  // The plain search would never end on this run (RegexWorkTest above counts the steps).
  std::vector<uint32_t> ids = t->Encode(std::string(200000, 'a') + "!");
  EXPECT_EQ(ids.size(), 100001u);
  EXPECT_EQ(ids.back(), 1u);
}

}  // namespace
}  // namespace reel::llm
