// A client-side rate limit, so a shared endpoint is not hammered: requests per minute and tokens
// per minute, each a token bucket.
//
// Each bucket refills continuously at its per-minute rate and holds at most 10 seconds' worth
// (at least one request; a request larger than that waits for a full bucket and then leaves it
// in debt), so a run starts at once but never bursts a whole minute's quota into the server.
// Tokens are reserved before sending (the prompt estimate plus the output cap, as the hosted
// services count them) and corrected with Adjust once the server's usage is known.
//
// Thread-safe; waiters are served as capacity appears (not strictly first come, first served).
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
