// Counting the tokens of prompt text: exactly, with the model's tokenizer.json, or, when a job
// names none, by an estimate that never under-counts. Const methods may run concurrently.
// How the estimate was checked: llm/context/README.md, "Token counter".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reel::llm {

class Tokenizer;

class TokenCounter {
 public:
  // Exact counts through `tokenizer` (not owned; must outlive the counter). `description` says
  // which file it is (e.g. its path and SHA-256) for manifests.
  TokenCounter(const Tokenizer* tokenizer, std::string description);
  // Estimated counts; `special_tokens` (a template's) count one token each.
  explicit TokenCounter(std::vector<std::string> special_tokens);

  // Tokens of `text` as the server tokenizes it (no special tokens added around it).
  int64_t Count(std::string_view text) const;
  bool exact() const { return tokenizer_ != nullptr; }
  // "tokenizer <description>" or "estimate: ..." for manifests.
  std::string Method() const;
  const Tokenizer* tokenizer() const { return tokenizer_; }

  // The estimate of text with no special tokens in it.
  static int64_t Estimate(std::string_view text);

 private:
  const Tokenizer* tokenizer_ = nullptr;
  std::string description_;
  std::vector<std::string> special_tokens_;
};

}  // namespace reel::llm
