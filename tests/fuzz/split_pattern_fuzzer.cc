// libFuzzer target for the tokenizer's fast paths against their plain counterparts, on any text
// (outside input: every prompt is tokenized). Invariants:
// - each hand-written split matcher (GPT-2, cl100k, Qwen's one-digit variant, o200k as GPT-4o
//   and MiniMax-M3 use it, Tekken) finds exactly the matches of the general regex engine;
// - normalizing only the stretches that fail the quick check (NormalizeChanged) gives what
//   normalizing the whole text gives, in all four forms;
// - the valid UTF-8 prefix ends where the repair (ToValidUtf8) first changes the text;
// - patterns a plain backtracking search takes exponential time on (a hostile tokenizer.json's
//   `(a+)+$`, ...) finish on the whole text (the engine remembers failed states: the target's
//   30 s timeout catches a regression), and remembering gives the plain search's matches (on the
//   first 12 bytes, where the plain search is still quick).
// The text is the input repaired to valid UTF-8 (as Encode does), at most 4 KB.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llm/tokenizer/regex.h"
#include "llm/tokenizer/split_pattern.h"
#include "llm/tokenizer/unicode.h"
#include "llm/tokenizer/utf8.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using reel::llm::internal::PatternMatch;
using reel::llm::internal::SplitPattern;

using reel::llm::internal::Regex;

struct Matchers {
  std::vector<std::unique_ptr<SplitPattern>> fast, general;
  std::vector<Regex> hostile;
  Matchers() {
    for (const std::string& source : reel::llm::internal::FastPatternSources()) {
      fast.push_back(reel::llm::internal::MakeFastPattern(source));
      general.push_back(
          std::move(reel::llm::internal::MakeRegexPattern(source, /*allow_fast=*/false)).value());
    }
    for (const char* source : {"(a+)+$", "(\\w+\\s?)+$", "(a|aa)+b", "(.*a){8}", "(?=(\\S+)+!)\\S",
                               "(?:\\p{L}+?\\s*)+\\d", "(?>(\\s+\\S)+)x|\\s+(?!\\S)"}) {
      hostile.push_back(std::move(Regex::Compile(source)).value());
    }
  }
};

bool Same(const std::vector<PatternMatch>& a, const std::vector<PatternMatch>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].is_match != b[i].is_match) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Matchers matchers;
  using reel::fuzz::Require;
  const std::string_view raw(reinterpret_cast<const char*>(data), size < 4096 ? size : 4096);
  const size_t valid = reel::llm::internal::ValidUtf8Prefix(raw);
  const std::string text = reel::llm::internal::ToValidUtf8(raw);
  Require(text.compare(0, valid, raw.substr(0, valid)) == 0, "the valid prefix is kept");
  Require((valid == raw.size()) == (text == raw), "the prefix is all of valid text only");
  Require(reel::llm::internal::ValidUtf8Prefix(text) == text.size(), "the repair is valid");
  if (text.empty()) return 0;

  for (size_t i = 0; i < matchers.fast.size(); ++i) {
    std::vector<PatternMatch> fast, general;
    matchers.fast[i]->FindMatches(text, fast);
    matchers.general[i]->FindMatches(text, general);
    Require(Same(fast, general), "hand-written matcher == regex engine", matchers.fast[i]->Name());
  }

  for (const Regex& re : matchers.hostile) {
    std::vector<std::pair<size_t, size_t>> remembered, plain, whole;
    re.FindAll(text, whole);  // must finish
    size_t cut = text.size() < 12 ? text.size() : 12;
    while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) ++cut;
    const std::string_view head(text.data(), cut);
    re.FindAll(head, remembered, Regex::Memo::kAlways);
    re.FindAll(head, plain, Regex::Memo::kNever);
    Require(remembered == plain, "remembering failed states changes no match",
            re.pattern().c_str());
  }

  using reel::llm::internal::NormalizationForm;
  for (NormalizationForm form : {NormalizationForm::kNfc, NormalizationForm::kNfd,
                                 NormalizationForm::kNfkc, NormalizationForm::kNfkd}) {
    const std::string whole = reel::llm::internal::Normalize(text, form);
    std::string stretches;
    if (reel::llm::internal::NormalizeChanged(text, form, stretches)) {
      Require(stretches == whole, "normalizing stretches == normalizing the whole");
    } else {
      Require(text == whole, "text said unchanged is unchanged");
    }
  }
  return 0;
}
