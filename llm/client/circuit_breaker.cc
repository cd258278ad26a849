#include "llm/client/circuit_breaker.h"

#include <algorithm>
#include <cstdio>

namespace reel::llm {

CircuitBreaker::CircuitBreaker(CircuitOptions options, ClientClock* clock,
                               std::function<void(bool, const std::string&)> on_change)
    : options_(options), clock_(clock), on_change_(std::move(on_change)) {}

CircuitBreaker::Verdict CircuitBreaker::Await(const std::atomic<bool>* cancel) {
  while (true) {
    double wake = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!open_) return Verdict::kGo;
      const double now = clock_->Now();
      if (now - opened_at_ > options_.give_up_after_s) return Verdict::kGiveUp;
      if (!probe_in_flight_ && now >= next_probe_at_) {
        probe_in_flight_ = true;
        return Verdict::kProbe;
      }
      // Wake at the next probe time, or soon when a probe is out (its outcome decides).
      wake = probe_in_flight_ ? now + 0.05 : next_probe_at_;
      wake = std::min(wake, opened_at_ + options_.give_up_after_s + 0.001);
    }
    if (!clock_->SleepUntil(wake, cancel)) return Verdict::kCancelled;
  }
}

void CircuitBreaker::RecordUp() {
  std::string message;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    consecutive_down_ = 0;
    only_slow_request_ = 0;
    if (!open_) return;
    open_ = false;
    probe_in_flight_ = false;
    const double open_for = clock_->Now() - opened_at_;
    closed_seconds_open_ += open_for;
    char text[128];
    std::snprintf(text, sizeof(text), "the server answers again; resuming after %.1f s", open_for);
    message = text;
  }
  if (on_change_) on_change_(false, message);
}

bool CircuitBreaker::RecordDown(bool probe, const std::string& reason, int64_t slow_request) {
  std::string message;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    last_reason_ = reason;
    if (consecutive_down_ == 0) {
      only_slow_request_ = slow_request > 0 ? slow_request : -1;
    } else if (only_slow_request_ != slow_request) {
      only_slow_request_ = -1;
    }
    ++consecutive_down_;
    const double now = clock_->Now();
    if (open_) {
      if (probe) {
        probe_in_flight_ = false;
        pause_ = std::min(pause_ * 2, options_.max_pause_s);
        next_probe_at_ = now + pause_;
      }
      return true;
    }
    if (options_.failure_threshold <= 0 || consecutive_down_ < options_.failure_threshold ||
        only_slow_request_ > 0) {  // one slow answer is not a server down
      return false;
    }
    open_ = true;
    probe_in_flight_ = false;
    opened_at_ = now;
    pause_ = options_.first_pause_s;
    next_probe_at_ = now + pause_;
    ++times_opened_;
    char text[96];
    std::snprintf(text, sizeof(text), "the server looks down (%d failures in a row); pausing ",
                  consecutive_down_);
    message = std::string(text) + "all requests: " + reason;
  }
  if (on_change_) on_change_(true, message);
  return true;
}

bool CircuitBreaker::open() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_;
}

int CircuitBreaker::times_opened() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return times_opened_;
}

double CircuitBreaker::seconds_open() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_seconds_open_ + (open_ ? clock_->Now() - opened_at_ : 0);
}

std::string CircuitBreaker::last_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_reason_;
}

}  // namespace reel::llm
