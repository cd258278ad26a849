// A client-side rate limit: requests and tokens per minute, each a token bucket, so a shared
// endpoint is never sent a whole minute's quota at once. Tokens are reserved before sending and
// corrected with Adjust. Thread-safe. Details: llm/README.md, "Rate limiter".
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "llm/client/client_clock.h"

namespace reel::llm {

struct RateLimitOptions {
  double requests_per_minute = 0;  // 0 = no limit
  double tokens_per_minute = 0;    // 0 = no limit
};

class RateLimiter {
 public:
  explicit RateLimiter(RateLimitOptions options, ClientClock* clock = ClientClock::Real());

  // Waits until one request of `tokens` may be sent and takes it. Returns the seconds waited, or
  // -1 when `cancel` became true (nothing is taken then).
  double Acquire(int64_t tokens, const std::atomic<bool>* cancel);

  // A reservation of `reserved` tokens turned out to be `actual`: the difference goes back to
  // (or is taken from) the bucket.
  void Adjust(int64_t reserved, int64_t actual);

  bool enabled() const {
    return options_.requests_per_minute > 0 || options_.tokens_per_minute > 0;
  }

 private:
  void RefillLocked(double now);

  RateLimitOptions options_;
  ClientClock* clock_;
  std::mutex mutex_;
  double last_ = 0;
  double requests_ = 0;  // available
  double tokens_ = 0;    // available (may be negative: debt)
  double request_capacity_ = 0;
  double token_capacity_ = 0;
};

}  // namespace reel::llm
