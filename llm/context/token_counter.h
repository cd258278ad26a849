// Counting the tokens of prompt text: exactly, with the model's tokenizer.json (Tokenizer), or,
// when a job names none, by a safe estimate.
//
// The estimate is 0.6 tokens per ASCII byte plus 1 token per byte of any other character, times
// 1.05. A byte-level BPE never makes more tokens than bytes, so non-ASCII text is never
// under-counted; over the 1,172 documents of real text in ~60 languages of the tokenizer tests
// (6.7 MB, tests/llm/make_corpus.py) the unscaled estimate was at least 97.6% of the exact count
// for every document with the GPT-4o, Llama 3, Qwen 3, DeepSeek-V3, Mistral Nemo and Gemma 3
// tokenizers (2.3x to 2.7x above it in total): the 5% keeps every one of them covered. It
// overcounts English about 2.5x and CJK about 3x, so contexts built from an estimate fit with room.
//
// Thread safety: const methods may run concurrently (the Tokenizer's are).
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
