#include "llm/client/client_clock.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

namespace reel::llm {
namespace {

class RealClock final : public ClientClock {
 public:
  double Now() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  bool SleepUntil(double deadline, const std::atomic<bool>* cancel) override {
    while (true) {
      if (cancel != nullptr && cancel->load()) return false;
      const double left = deadline - Now();
      if (left <= 0) return true;
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, 0.05)));
    }
  }
};

}  // namespace

ClientClock* ClientClock::Real() {
  static RealClock* const kClock = new RealClock;
  return kClock;
}

std::string WaitText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g s", seconds);
  return text;
}

}  // namespace reel::llm
