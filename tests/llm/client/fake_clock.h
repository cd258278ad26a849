// A simulated clock for the client's waits: SleepUntil jumps time forward at once.
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "llm/client/client_clock.h"

namespace reel::llm::testing {

class FakeClock final : public ClientClock {
 public:
  double Now() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return now_;
  }
  bool SleepUntil(double deadline, const std::atomic<bool>* cancel) override {
    if (cancel != nullptr && cancel->load()) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    if (deadline > now_) {
      sleeps_.push_back(deadline - now_);
      now_ = deadline;
    }
    return true;
  }
  void Advance(double s) {
    std::lock_guard<std::mutex> lock(mutex_);
    now_ += s;
  }
  std::vector<double> sleeps() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sleeps_;
  }

 private:
  std::mutex mutex_;
  double now_ = 1000;
  std::vector<double> sleeps_;
};

}  // namespace reel::llm::testing
