// Normalizers of a tokenizer.json ("normalizer"), reproducing the Hugging Face library's text
// transformations (offsets are not tracked: Reel needs ids and counts only).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace reel::llm::internal {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Normalizes `in` into `out` (cleared first). Returns false, leaving `out` untouched, when
  // the text is certainly unchanged (the caller then keeps using `in`).
  virtual bool Normalize(std::string_view in, std::string& out) const = 0;
};

// Builds the normalizer described by a "normalizer" object (null is handled by the caller).
// Unsupported types are refused with a message naming them.
Result<std::unique_ptr<Normalizer>> MakeNormalizer(const nlohmann::json& config);

}  // namespace reel::llm::internal
