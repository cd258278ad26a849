// A regular-expression engine with Oniguruma's semantics, for the patterns tokenizer.json files
// carry. Compile() refuses anything it does not reproduce exactly, naming the construct; work is
// polynomial in the text's length whatever the pattern. Thread safety: a compiled Regex is
// immutable; searches may run concurrently.
// What is supported, and why it stays polynomial: llm/tokenizer/README.md, "Regex".
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
