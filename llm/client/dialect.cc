#include "llm/client/dialect.h"

#include <nlohmann/json.hpp>

namespace reel::llm {

Result<const Dialect*> DialectByName(std::string_view name) {
  if (name == "vllm") return &VllmDialect();
  if (name == "sglang") return &SglangDialect();
  if (name == "openai" || name == "openai-compatible" || name == "generic") {
    return &OpenAiDialect();
  }
  return InvalidArgument("unknown server dialect '" + std::string(name) +
                         "' (choose vllm, sglang, openai, or auto)");
}

const Dialect& DetectDialect(std::string_view models_body) {
  const nlohmann::json doc =
      nlohmann::json::parse(models_body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && doc.contains("data") && doc["data"].is_array()) {
    for (const auto& card : doc["data"]) {
      if (!card.is_object()) continue;
      auto it = card.find("owned_by");
      if (it == card.end() || !it->is_string()) continue;
      const std::string owner = it->get<std::string>();
      for (const Dialect* d : {&VllmDialect(), &SglangDialect()}) {
        if (owner == d->owned_by) return *d;
      }
    }
  }
  return OpenAiDialect();
}

}  // namespace reel::llm
