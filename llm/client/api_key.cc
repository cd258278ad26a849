#include "llm/client/api_key.h"

#include <cstdlib>

namespace reel::llm {

Result<ApiKey> ApiKey::FromEnvironment(const std::string& env_name) {
  ApiKey key;
  if (env_name.empty()) return key;
  const char* value = std::getenv(env_name.c_str());
  if (value == nullptr || *value == '\0') {
    return InvalidArgument("the API key variable $" + env_name + " is not set");
  }
  key.secret_ = value;
  // Keys copied from a web page often carry a trailing newline or spaces.
  while (!key.secret_.empty() &&
         (key.secret_.back() == '\n' || key.secret_.back() == '\r' || key.secret_.back() == ' ')) {
    key.secret_.pop_back();
  }
  if (key.secret_.empty()) {
    return InvalidArgument("the API key variable $" + env_name + " is empty");
  }
  key.env_name_ = env_name;
  return key;
}

ApiKey ApiKey::FromSecret(std::string secret) {
  ApiKey key;
  key.secret_ = std::move(secret);
  return key;
}

std::string ApiKey::AuthorizationHeader() const {
  if (secret_.empty()) return "";
  return "Authorization: Bearer " + secret_;
}

std::string ApiKey::Redact(std::string_view text) const {
  std::string out(text);
  if (secret_.empty()) return out;
  size_t pos = 0;
  while ((pos = out.find(secret_, pos)) != std::string::npos) {
    out.replace(pos, secret_.size(), "[redacted]");
    pos += 10;
  }
  return out;
}

std::string ApiKey::Describe() const {
  if (secret_.empty()) return "none";
  return env_name_.empty() ? "set" : "set (from $" + env_name_ + ")";
}

}  // namespace reel::llm
