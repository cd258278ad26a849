// SIGINT / SIGTERM as a stop request for `reel run` and `reel ask`: the first signal asks the
// run to stop (finished work is kept, requests in flight are cancelled and asked again later), a
// second one leaves at once.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace reel::cli {

// The signal that asked the run to stop (0: none). Written only by the handler.
inline std::atomic<int> g_stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" inline void OnStopSignal(int signal_number) {
  if (g_stop_signal.load() != 0) _exit(128 + signal_number);  // second signal: leave at once
  g_stop_signal.store(signal_number);
}

// Installs the SIGINT / SIGTERM handlers for the lifetime of the object (no SA_RESTART, so a
// blocking flock wakes up) and restores the previous ones after.
class StopSignalHandlers {
 public:
  StopSignalHandlers() {
    struct sigaction action {};
    action.sa_handler = OnStopSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignalHandlers() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignalHandlers(const StopSignalHandlers&) = delete;
  StopSignalHandlers& operator=(const StopSignalHandlers&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace reel::cli
