// Decoders of a tokenizer.json ("decoder"): turn token strings back into text, as the Hugging
// Face library's decode_chain does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace reel::llm::internal {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void DecodeChain(std::vector<std::string>& tokens) const = 0;
};

Result<std::unique_ptr<Decoder>> MakeDecoder(const nlohmann::json& config);

// Rust's String::from_utf8_lossy: one U+FFFD per maximal invalid subpart.
std::string Utf8Lossy(const std::string& bytes);

}  // namespace reel::llm::internal
