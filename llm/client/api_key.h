// The API key: read from the environment variable a job names, sent only in the Authorization
// header, never printed.
//
// An ApiKey has no accessor that returns the secret and no stream operator; the HTTP client is its
// only reader (through AuthorizationHeader). Every text Reel records from a server response goes
// through Redact first, so a server that echoes the key in an error message does not make it leak
// into the database, the logs or an export.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace reel::llm {

class ApiKey {
 public:
  ApiKey() = default;  // no key: no Authorization header

  // The key in variable `env_name`. "" names no variable (no key). A named variable that is unset
  // or empty is an error that names the variable (never a value).
  static Result<ApiKey> FromEnvironment(const std::string& env_name);
  // For tests and for callers that got the key elsewhere.
  static ApiKey FromSecret(std::string secret);

  bool empty() const { return secret_.empty(); }

  // "Authorization: Bearer <key>", or "" without a key.
  std::string AuthorizationHeader() const;

  // `text` with every occurrence of the key replaced by "[redacted]".
  std::string Redact(std::string_view text) const;

  // Describes the key for messages without revealing it: "none" or "set (from $NAME)".
  std::string Describe() const;

 private:
  std::string secret_;
  std::string env_name_;
};

}  // namespace reel::llm
