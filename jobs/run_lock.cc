#include "jobs/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <sstream>

namespace reel::jobs {
namespace {

std::string LockTime() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string HostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "unknown";
  return buffer;
}

Result<int> OpenLockFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return IoError(path + ": cannot open the lock file: " + std::strerror(errno));
  }
  return fd;
}

std::optional<LockOwner> ParseOwner(const std::string& text) {
  std::istringstream in(text);
  LockOwner owner;
  if (!(in >> owner.pid >> owner.host >> owner.started_at)) return std::nullopt;
  return owner;
}

std::optional<LockOwner> ReadOwnerFromFd(int fd) {
  std::string text;
  char buffer[512];
  ssize_t n = pread(fd, buffer, sizeof(buffer), 0);
  if (n <= 0) return std::nullopt;
  text.assign(buffer, static_cast<size_t>(n));
  return ParseOwner(text);
}

// Records this process as the holder. Errors are ignored: the record is for messages only.
void WriteOwner(int fd) {
  std::string record = std::to_string(getpid()) + " " + HostName() + " " + LockTime() + "\n";
  if (ftruncate(fd, 0) != 0) return;
  ssize_t written = pwrite(fd, record.data(), record.size(), 0);
  (void)written;
}

}  // namespace

std::string LockOwner::Describe() const {
  if (pid == 0) return "an unknown process";
  return "pid " + std::to_string(pid) + " on " + host + " since " + started_at;
}

std::string RunLock::LockPathFor(const std::string& database_path) {
  return database_path + ".lock";
}

Result<RunLock> RunLock::TryAcquire(const std::string& database_path, LockOwner* owner) {
  const std::string path = LockPathFor(database_path);
  REEL_ASSIGN_OR_RETURN(int fd, OpenLockFile(path));
  RunLock lock(path, fd);  // owns fd from here on
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      LockOwner holder = ReadOwnerFromFd(fd).value_or(LockOwner{});
      if (owner) *owner = holder;
      return Unavailable(database_path + " is in use by another reel run (" + holder.Describe() +
                         "; lock file " + path + ")");
    }
    return IoError(path + ": cannot lock: " + std::strerror(errno));
  }
  WriteOwner(fd);
  return lock;
}

Result<RunLock> RunLock::Acquire(const std::string& database_path,
                                 const std::function<void(const LockOwner&)>& on_wait,
                                 const std::function<bool()>& should_stop) {
  LockOwner owner;
  Result<RunLock> lock = TryAcquire(database_path, &owner);
  if (lock.ok() || lock.status().code() != ErrorCode::kUnavailable) return lock;
  if (on_wait) on_wait(owner);
  const std::string path = LockPathFor(database_path);
  REEL_ASSIGN_OR_RETURN(int fd, OpenLockFile(path));
  RunLock waiting(path, fd);
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) return IoError(path + ": cannot lock: " + std::strerror(errno));
    if (should_stop && should_stop()) return Cancelled("stopped while waiting for " + path);
  }
  WriteOwner(fd);
  return waiting;
}

bool RunLock::IsHeld(const std::string& database_path) {
  int fd = open(LockPathFor(database_path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // also drops the shared lock if we got it
  return held;
}

std::optional<LockOwner> RunLock::ReadOwner(const std::string& database_path) {
  int fd = open(LockPathFor(database_path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<LockOwner> owner = ReadOwnerFromFd(fd);
  close(fd);
  return owner;
}

RunLock::RunLock(RunLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    Release();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

RunLock::~RunLock() { Release(); }

void RunLock::Release() {
  if (fd_ >= 0) {
    close(fd_);  // closing the last descriptor drops the flock
    fd_ = -1;
  }
}

}  // namespace reel::jobs
