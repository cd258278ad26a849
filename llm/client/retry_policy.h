// When and how long to wait before asking again, as the official OpenAI client does it.
//
// Retried: connection errors, timeouts, and HTTP 408, 409, 429 and 5xx (a server's
// `x-should-retry: true|false` header overrides the status). Never retried here: a too-long
// prompt (the caller re-fits it) and other 4xx. The wait before retry n (0-based) is the
// server's `retry-after-ms` / `retry-after` (seconds or an HTTP date) when it is above 0 and at
// most `max_retry_after_s`, else min(initial * 2^n, max) seconds times a random factor in
// (0.75, 1].
#pragma once

#include <ctime>
#include <optional>
#include <string>

namespace reel::llm {

struct RetryOptions {
  int max_retries = 2;             // retries after the first attempt
  double initial_delay_s = 0.5;    // backoff before the first retry (before jitter)
  double max_delay_s = 8;          // backoff cap (before jitter)
  double max_retry_after_s = 120;  // longer server hints are not honoured (backoff instead)
};

// 408, 409, 429, 5xx.
bool IsRetryableStatus(int status);

// The server's wait hint in seconds, from `retry-after-ms` (milliseconds) or `retry-after`
// (seconds, fractional allowed, or an HTTP date compared with `now`). nullopt when absent or
// unreadable.
std::optional<double> ParseRetryAfter(const std::string& retry_after_ms,
                                      const std::string& retry_after, std::time_t now);

// Seconds to wait before retry number `retry` (0 = the first retry). `unit_random` is a uniform
// number in [0, 1) (passed in so tests are deterministic).
double RetryDelaySeconds(const RetryOptions& options, int retry, std::optional<double> retry_after,
                         double unit_random);

}  // namespace reel::llm
