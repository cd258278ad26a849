#include "llm/client/rate_limiter.h"

#include <algorithm>

namespace reel::llm {
namespace {
constexpr double kBurstSeconds = 10;
}  // namespace

RateLimiter::RateLimiter(RateLimitOptions options, ClientClock* clock)
    : options_(options), clock_(clock) {
  request_capacity_ = std::max(1.0, options_.requests_per_minute / 60 * kBurstSeconds);
  token_capacity_ = std::max(1.0, options_.tokens_per_minute / 60 * kBurstSeconds);
  requests_ = request_capacity_;
  tokens_ = token_capacity_;
  last_ = clock_->Now();
}

void RateLimiter::RefillLocked(double now) {
  const double dt = std::max(0.0, now - last_);
  last_ = now;
  if (options_.requests_per_minute > 0) {
    requests_ = std::min(request_capacity_, requests_ + dt * options_.requests_per_minute / 60);
  }
  if (options_.tokens_per_minute > 0) {
    tokens_ = std::min(token_capacity_, tokens_ + dt * options_.tokens_per_minute / 60);
  }
}

double RateLimiter::Acquire(int64_t tokens, const std::atomic<bool>* cancel) {
  if (!enabled()) return 0;
  const double start = clock_->Now();
  while (true) {
    double wait = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const double now = clock_->Now();
      RefillLocked(now);
      const double need_tokens = std::min<double>(static_cast<double>(tokens), token_capacity_);
      double wait_r = 0, wait_t = 0;
      if (options_.requests_per_minute > 0 && requests_ < 1) {
        wait_r = (1 - requests_) * 60 / options_.requests_per_minute;
      }
      if (options_.tokens_per_minute > 0 && tokens_ < need_tokens) {
        wait_t = (need_tokens - tokens_) * 60 / options_.tokens_per_minute;
      }
      wait = std::max(wait_r, wait_t);
      if (wait <= 0) {
        if (options_.requests_per_minute > 0) requests_ -= 1;
        if (options_.tokens_per_minute > 0) tokens_ -= static_cast<double>(tokens);
        return now - start;
      }
    }
    if (!clock_->SleepUntil(clock_->Now() + wait, cancel)) return -1;
  }
}

void RateLimiter::Adjust(int64_t reserved, int64_t actual) {
  if (options_.tokens_per_minute <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  tokens_ = std::min(token_capacity_, tokens_ + static_cast<double>(reserved - actual));
}

}  // namespace reel::llm
