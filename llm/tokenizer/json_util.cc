#include "llm/tokenizer/json_util.h"

#include <nlohmann/json.hpp>

namespace reel::llm::internal {

using nlohmann::json;

Result<std::string> TypeOf(const json& config, const std::string& what) {
  if (!config.is_object()) return Unsupported(what + " is not an object");
  auto it = config.find("type");
  if (it == config.end() || !it->is_string()) {
    return Unsupported(what + " without a \"type\" (the legacy untagged form is not supported)");
  }
  return it->get<std::string>();
}

Result<bool> GetBool(const json& config, const char* key, const std::string& what) {
  auto it = config.find(key);
  if (it == config.end() || !it->is_boolean()) {
    return Unsupported(what + ": \"" + key + "\" must be true or false");
  }
  return it->get<bool>();
}

Result<bool> GetOptionalBool(const json& config, const char* key, bool fallback,
                             const std::string& what) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return Unsupported(what + ": \"" + key + "\" must be true or false");
  return it->get<bool>();
}

Result<std::string> GetString(const json& config, const char* key, const std::string& what) {
  auto it = config.find(key);
  if (it == config.end() || !it->is_string()) {
    return Unsupported(what + ": \"" + key + "\" must be a string");
  }
  return it->get<std::string>();
}

std::string EscapeRegex(const std::string& s) {
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x80 && std::ispunct(u)) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

Result<Regex> PatternRegex(const json& config, const std::string& what) {
  auto it = config.find("pattern");
  if (it == config.end() || !it->is_object() || it->size() != 1) {
    return Unsupported(what + ": \"pattern\" must be {\"String\": ...} or {\"Regex\": ...}");
  }
  std::string source;
  if (auto s = it->find("String"); s != it->end() && s->is_string()) {
    source = EscapeRegex(s->get<std::string>());
  } else if (auto r = it->find("Regex"); r != it->end() && r->is_string()) {
    source = r->get<std::string>();
  } else {
    return Unsupported(what + ": \"pattern\" must be {\"String\": ...} or {\"Regex\": ...}");
  }
  Result<Regex> regex = Regex::Compile(source);
  if (!regex.ok()) return regex.status().WithPrefix(what);
  return regex;
}

}  // namespace reel::llm::internal
