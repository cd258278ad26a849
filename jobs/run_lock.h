// RunLock: one `reel run` per results database at a time, across processes and hosts sharing a
// local file system (an flock(2) on `<database>.lock`, dropped by the kernel when its holder dies).
// Ownership: owns the lock file's descriptor (unlocked on destruction). Movable, not copyable.
// Not thread-safe; one per process. Details: jobs/README.md, "Run lock".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"

namespace reel::jobs {

// Who holds a lock, as the holder wrote it. Fields are empty / 0 if the file was unreadable.
struct LockOwner {
  int64_t pid = 0;
  std::string host;
  std::string started_at;  // ISO-8601 UTC
  // "pid 1234 on host-a since 2024-05-01T12:00:00Z", or "an unknown process".
  std::string Describe() const;
};

class RunLock {
 public:
  // `<database_path>.lock`.
  static std::string LockPathFor(const std::string& database_path);

  // Takes the lock without waiting. Errors: kUnavailable if another process holds it (then
  // `*owner`, if given, says who; the message names it too); kIoError if the file cannot be
  // opened or locked.
  static Result<RunLock> TryAcquire(const std::string& database_path, LockOwner* owner = nullptr);

  // Waits until the lock is free. `on_wait` is called once, with the current holder, if the
  // lock was busy at the first attempt. When a signal interrupts the wait and `should_stop`
  // returns true, gives up with kCancelled.
  static Result<RunLock> Acquire(const std::string& database_path,
                                 const std::function<void(const LockOwner&)>& on_wait = {},
                                 const std::function<bool()>& should_stop = {});

  // Whether some process holds the lock now (false if there is no lock file). Creates and
  // writes nothing.
  static bool IsHeld(const std::string& database_path);

  // Reads the holder recorded in the lock file, without locking (nullopt if none recorded).
  static std::optional<LockOwner> ReadOwner(const std::string& database_path);

  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

  const std::string& path() const { return path_; }

 private:
  RunLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  void Release();

  std::string path_;
  int fd_ = -1;
};

}  // namespace reel::jobs
