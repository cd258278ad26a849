// Post-processors of a tokenizer.json ("post_processor"): the special tokens added around an
// encoded text when special tokens are asked for (TemplateProcessing, BertProcessing,
// RobertaProcessing, ByteLevel, Sequence), for a single sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace reel::llm::internal {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Replaces `ids` (the encoded text) by the processed sequence.
  virtual void Process(std::vector<uint32_t>& ids) const = 0;
};

Result<std::unique_ptr<PostProcessor>> MakePostProcessor(const nlohmann::json& config);

}  // namespace reel::llm::internal
