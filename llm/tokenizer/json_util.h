// Small helpers for reading tokenizer.json components; every error names the component.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "llm/tokenizer/regex.h"

namespace reel::llm::internal {

// The "type" of a component object; `what` names the component kind ("normalizer").
Result<std::string> TypeOf(const nlohmann::json& config, const std::string& what);

// A required member of the given kind; `what` names the component ("normalizer Strip").
Result<bool> GetBool(const nlohmann::json& config, const char* key, const std::string& what);
Result<std::string> GetString(const nlohmann::json& config, const char* key,
                              const std::string& what);
// A boolean member that may be missing or null (then `fallback`).
Result<bool> GetOptionalBool(const nlohmann::json& config, const char* key, bool fallback,
                             const std::string& what);

// The "pattern" member of Split and Replace: {"String": s} (a literal, matched as the library
// does: the escaped string compiled as a regex) or {"Regex": r}.
Result<Regex> PatternRegex(const nlohmann::json& config, const std::string& what);

// `s` with every ASCII punctuation character escaped, so that it matches literally.
std::string EscapeRegex(const std::string& s);

}  // namespace reel::llm::internal
