// What the library calls a Pattern: something that finds the matches of a Split pre-tokenizer
// (or of Digits, WhitespaceSplit) in a piece of text. The common split patterns of byte-level
// BPE tokenizers (GPT-2, cl100k/Llama 3/Qwen, o200k/M3, DeepSeek V3's three) have hand-written
// matchers that give the same matches as Oniguruma without a regex engine; anything else runs on
// Regex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel::llm::internal {

struct PatternMatch {
  uint32_t start;
  uint32_t end;
  bool is_match;  // false: the text between two matches
};

class SplitPattern {
 public:
  virtual ~SplitPattern() = default;
  // Appends spans that cover `text` (valid UTF-8, not empty) in order: the matches, found as
  // the onig crate's find_iter finds them, and the gaps between them, like the library's
  // Pattern::find_matches.
  virtual void FindMatches(std::string_view text, std::vector<PatternMatch>& out) const = 0;
  // A short description for messages and benchmarks ("o200k (hand-written)").
  virtual const char* Name() const = 0;
};

// The matcher for a regex source: hand-written when the source is one of the known patterns
// exactly (and `allow_fast`), else the general engine. Fails if the regex is not supported.
Result<std::unique_ptr<SplitPattern>> MakeRegexPattern(std::string_view source,
                                                       bool allow_fast = true);

// The hand-written matcher for `source`, or nullptr if there is none.
std::unique_ptr<SplitPattern> MakeFastPattern(std::string_view source);

// The regex sources that have a hand-written matcher (for tests that compare the two).
std::vector<std::string> FastPatternSources();

// Patterns of a character predicate, as the library's `impl Pattern for Fn(char) -> bool`:
// every matching character is a match of its own.
enum class CharClassPattern { kNumeric, kWhitespace };
std::unique_ptr<SplitPattern> MakeCharPattern(CharClassPattern which);

// The GPT-2 pattern used by the ByteLevel pre-tokenizer when use_regex is set.
extern const char kGpt2Pattern[];

}  // namespace reel::llm::internal
