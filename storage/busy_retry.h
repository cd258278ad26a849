// RetryBusy: the one place a write waits out another writer that held the database too long.
//
// Two layers, both here or named here: SQLite's busy timeout (DatabaseOptions::busy_timeout_ms,
// set on every connection by Database::Open) makes a writer wait for the write lock; a write
// whose wait ran out fails with kUnavailable (SQLITE_BUSY / SQLITE_LOCKED, mapped in
// internal/sqlite.cc), which IsBusy recognizes. RetryBusy runs such a write again, at most
// kBusyAttempts times in all, pausing 100 ms, 200 ms, ... between attempts. Every Store write is
// one transaction, so running it again is safe.
#pragma once

#include <type_traits>

#include "base/status.h"

namespace reel::storage {

inline constexpr int kBusyAttempts = 5;

// True for the error of a write that found the database locked past the busy timeout.
bool IsBusy(const Status& status);

// Sleeps before attempt `attempt` + 1 (attempt counts from 0): 100 ms * (attempt + 1).
void PauseBeforeBusyRetry(int attempt);

// Runs `write` (returning Status or Result<T>) until it succeeds, fails with anything but
// IsBusy, or has run kBusyAttempts times; returns its last result.
template <typename Fn>
auto RetryBusy(Fn&& write) -> decltype(write()) {
  for (int attempt = 0;; ++attempt) {
    auto result = write();
    const Status* status;
    if constexpr (std::is_same_v<decltype(result), Status>) {
      status = &result;
    } else {
      status = &result.status();
    }
    if (!IsBusy(*status) || attempt + 1 >= kBusyAttempts) return result;
    PauseBeforeBusyRetry(attempt);
  }
}

}  // namespace reel::storage
