// A circuit that pauses the whole run while the server is down, instead of failing every item:
// every request asks Await; after `failure_threshold` consecutive down failures requests wait for
// a probe, the first answer closes it, and past `give_up_after_s` waiting requests fail.
// Thread-safe; one breaker per endpoint, shared by its requests.
// What counts as down, and timeouts: llm/README.md, "Circuit breaker".
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "llm/client/client_clock.h"

namespace reel::llm {

struct CircuitOptions {
  int failure_threshold = 5;  // consecutive down failures that open the circuit; 0 = never
  double first_pause_s = 5;
  double max_pause_s = 60;
  double give_up_after_s = 1800;
};

class CircuitBreaker {
 public:
  enum class Verdict { kGo, kProbe, kGiveUp, kCancelled };

  // `on_change(open, message)` is called when the circuit opens or closes (for the run's log).
  explicit CircuitBreaker(CircuitOptions options, ClientClock* clock = ClientClock::Real(),
                          std::function<void(bool, const std::string&)> on_change = nullptr);

  // Waits while the circuit is open. kProbe: this request tests whether the server is back
  // (pass probe=true to the Record call that follows).
  Verdict Await(const std::atomic<bool>* cancel);

  // The server answered (anything but a down status).
  void RecordUp();
  // A down failure. `slow_request`: for a timeout, a number that identifies the request (the
  // same for its retries; 0 for any other failure). Returns true when the circuit is open
  // afterwards (the request should wait and try again without counting a retry).
  bool RecordDown(bool probe, const std::string& reason, int64_t slow_request = 0);

  bool open() const;
  int times_opened() const;
  double seconds_open() const;  // total, including the current opening
  std::string last_reason() const;

 private:
  CircuitOptions options_;
  ClientClock* clock_;
  std::function<void(bool, const std::string&)> on_change_;
  mutable std::mutex mutex_;
  int consecutive_down_ = 0;
  // Of the consecutive down failures: the request whose timeouts they all are (> 0), or -1 when
  // another failure or another request is among them (0 when there are none).
  int64_t only_slow_request_ = 0;
  bool open_ = false;
  bool probe_in_flight_ = false;
  double opened_at_ = 0;
  double next_probe_at_ = 0;
  double pause_ = 0;
  int times_opened_ = 0;
  double closed_seconds_open_ = 0;  // from earlier openings
  std::string last_reason_;
};

}  // namespace reel::llm
