// A regular-expression engine with Oniguruma's semantics, for the patterns tokenizer.json files
// carry (Split pre-tokenizers, Replace normalizers). The Hugging Face library compiles those
// patterns with Oniguruma 6.9 (onig crate, ONIG_SYNTAX_ONIGURUMA, no options, UTF-8), so this
// engine matches the way Oniguruma does: a backtracking search, leftmost match, alternatives in
// order, greedy/lazy/possessive quantifiers, look-ahead and fixed-length look-behind, atomic
// groups, ^ and $ as line anchors, '.' not matching "\n", Unicode classes from the tables in
// unicode.h.
//
// Compile() refuses, with a message naming the construct, anything it does not reproduce
// exactly: back-references, subroutine calls, conditionals, absent groups, POSIX brackets,
// class set operations, unknown properties, case-insensitive classes, and case-insensitive
// literals that multi-character case folding could match differently ("ss", "st", "ff", ...).
// Patterns of tokenizers are tiny; nothing here is tuned for speed (the common split patterns
// have hand-written matchers, see split_pattern.h).
//
// Work is polynomial in the text's length, never exponential, whatever the pattern (a hostile
// tokenizer.json's `(a+)+$` included): once a search has done more work than an ordinary pattern
// needs (a few dozen steps per byte), the matcher remembers the states (instruction, position)
// from which no match was found, and never explores one twice. Only failures are remembered, so
// the matches are exactly those of the plain backtracking search. Without look-around, a whole
// FindAll visits each state at most once; memory follows the states visited (64 positions to a
// 16-byte entry), not the text's length.
//
// Thread safety: a compiled Regex is immutable; searches may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace reel::llm::internal {

class Regex {
 public:
  static Result<Regex> Compile(std::string_view pattern);

  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();

  // The first match that starts at or after byte `from` of `text` (valid UTF-8; `from` on a
  // character boundary). Look-behind and anchors see the whole text.
  bool Search(std::string_view text, size_t from, size_t& start, size_t& end) const;

  // When failed states are remembered: after the first stretch of work (kAuto, the default),
  // from the start (kAlways) or never (kNever: the plain backtracking search, for tests that
  // compare the two; exponential on patterns like `(a+)+$`).
  enum class Memo { kAuto, kAlways, kNever };
  // What a FindAll did: `steps` counts instructions run, backtracking steps and characters
  // scanned by repetitions; `memoized` says whether failed states were remembered.
  struct Stats {
    uint64_t steps = 0;
    bool memoized = false;
  };

  // Every match, as the onig crate's find_iter yields them: after an empty match at the end of
  // the previous match the search moves one character on.
  void FindAll(std::string_view text, std::vector<std::pair<size_t, size_t>>& out,
               Memo memo = Memo::kAuto, Stats* stats = nullptr) const;

  const std::string& pattern() const;

  struct Program;

 private:
  explicit Regex(std::unique_ptr<Program> program);
  std::unique_ptr<Program> program_;
};

}  // namespace reel::llm::internal
