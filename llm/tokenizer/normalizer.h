// Normalizers of a tokenizer.json ("normalizer"), reproducing the Hugging Face library's text
// transformations (offsets are not tracked: Reel needs ids and counts only).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace reel::llm::internal {

// A normalizer that only replaces one character by another (code points `from` -> `to`) and
// maybe prepends `prefix` to non-empty text (SentencePiece-style files: ' ' -> '▁').
struct CharSubstitution {
  uint32_t from = 0;
  uint32_t to = 0;
  std::string prefix;
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Normalizes `in` into `out` (cleared first). Returns false, leaving `out` untouched, when
  // the text is certainly unchanged (the caller then keeps using `in`).
  virtual bool Normalize(std::string_view in, std::string& out) const = 0;
  // Describes this normalizer as a CharSubstitution when it is exactly one: a Replace of a
  // one-character string by one character, alone or in a Sequence with a Prepend whose text
  // does not contain the replaced character (then the order does not matter).
  virtual bool Substitution(CharSubstitution& out) const { return false; }
};

// Builds the normalizer described by a "normalizer" object (null is handled by the caller).
// Unsupported types are refused with a message naming them.
Result<std::unique_ptr<Normalizer>> MakeNormalizer(const nlohmann::json& config);

}  // namespace reel::llm::internal
