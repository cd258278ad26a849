// Time for the client's waits (backoff, rate limit, circuit pause), behind an interface so tests
// can run them on a simulated clock.
#pragma once

#include <atomic>
#include <string>

namespace reel::llm {

class ClientClock {
 public:
  virtual ~ClientClock() = default;
  // Monotonic seconds.
  virtual double Now() = 0;
  // Waits until Now() >= deadline. Returns false early when `cancel` becomes true.
  virtual bool SleepUntil(double deadline, const std::atomic<bool>* cancel) = 0;

  // The steady clock; cancellation is noticed within 50 ms. Thread-safe.
  static ClientClock* Real();
};

// A wait or a time limit as the client's messages show it: three significant digits, "12.5 s".
std::string WaitText(double seconds);

}  // namespace reel::llm
