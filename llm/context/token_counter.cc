#include "llm/context/token_counter.h"

#include <cmath>

#include "llm/tokenizer/tokenizer.h"

namespace reel::llm {

TokenCounter::TokenCounter(const Tokenizer* tokenizer, std::string description)
    : tokenizer_(tokenizer), description_(std::move(description)) {}

TokenCounter::TokenCounter(std::vector<std::string> special_tokens)
    : special_tokens_(std::move(special_tokens)) {}

int64_t TokenCounter::Estimate(std::string_view text) {
  int64_t ascii = 0, other = 0;
  for (unsigned char c : text) (c < 0x80 ? ascii : other) += 1;
  return static_cast<int64_t>(
      std::ceil(1.05 * (0.6 * static_cast<double>(ascii) + static_cast<double>(other))));
}

int64_t TokenCounter::Count(std::string_view text) const {
  if (tokenizer_ != nullptr) return static_cast<int64_t>(tokenizer_->Count(text));
  // Special tokens count one each; the text between them is estimated.
  int64_t total = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t best = std::string_view::npos, best_len = 0;
    for (const std::string& s : special_tokens_) {
      size_t at = text.find(s, pos);
      if (at != std::string_view::npos && (at < best || (at == best && s.size() > best_len))) {
        best = at;
        best_len = s.size();
      }
    }
    if (best == std::string_view::npos) {
      total += Estimate(text.substr(pos));
      break;
    }
    total += Estimate(text.substr(pos, best - pos)) + 1;
    pos = best + best_len;
  }
  return total;
}

std::string TokenCounter::Method() const {
  if (tokenizer_ != nullptr) return "tokenizer " + description_;
  return "estimate: ceil(1.05 * (0.6 * ASCII bytes + other bytes)), special tokens 1 each";
}

}  // namespace reel::llm
