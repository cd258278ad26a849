#include "llm/client/retry_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace reel::llm {
namespace {

std::optional<double> ParseNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const char* begin = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin) return std::nullopt;
  while (*end == ' ') ++end;
  if (*end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

// An IMF-fixdate ("Wed, 21 Oct 2015 07:28:00 GMT"), the form HTTP servers send.
std::optional<std::time_t> ParseHttpDate(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return timegm(&tm);
}

}  // namespace

bool IsRetryableStatus(int status) {
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

std::optional<double> ParseRetryAfter(const std::string& retry_after_ms,
                                      const std::string& retry_after, std::time_t now) {
  if (auto ms = ParseNumber(retry_after_ms)) return *ms / 1000.0;
  if (auto s = ParseNumber(retry_after)) return *s;
  if (auto date = ParseHttpDate(retry_after)) return std::difftime(*date, now);
  return std::nullopt;
}

double RetryDelaySeconds(const RetryOptions& options, int retry, std::optional<double> retry_after,
                         double unit_random) {
  if (retry_after && *retry_after > 0 && *retry_after <= options.max_retry_after_s) {
    return *retry_after;
  }
  const int n = std::clamp(retry, 0, 1000);
  const double base = std::min(options.initial_delay_s * std::pow(2.0, n), options.max_delay_s);
  const double jitter = 1.0 - 0.25 * std::clamp(unit_random, 0.0, 1.0);
  return std::max(0.0, base * jitter);
}

}  // namespace reel::llm
