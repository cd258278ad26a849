#include "storage/space_reserve.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace reel::storage {

std::string SpaceReserve::PathFor(const std::string& database_path) {
  return database_path + ".reserve";
}

Result<SpaceReserve> SpaceReserve::Allocate(const std::string& database_path, int64_t bytes) {
  const std::string path = PathFor(database_path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    std::string message = path + ": cannot create: " + std::strerror(error);
    if (error == ENOSPC || error == EDQUOT) return DiskFull(message + " (disk full)");
    return IoError(message);
  }
  const int error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));  // errno-style result
  ::close(fd);
  if (error != 0) {
    ::unlink(path.c_str());
    std::string message =
        path + ": cannot reserve " + std::to_string(bytes) + " bytes: " + std::strerror(error);
    if (error == ENOSPC || error == EDQUOT) return DiskFull(message + " (disk full)");
    return IoError(message);
  }
  return SpaceReserve(path);
}

SpaceReserve::SpaceReserve(SpaceReserve&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

SpaceReserve& SpaceReserve::operator=(SpaceReserve&& other) noexcept {
  if (this != &other) {
    Release();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

SpaceReserve::~SpaceReserve() { Release(); }

bool SpaceReserve::Release() {
  if (path_.empty()) return false;
  const bool removed = ::unlink(path_.c_str()) == 0;
  path_.clear();
  return removed;
}

}  // namespace reel::storage
