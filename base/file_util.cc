#include "base/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace reel {

Result<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return NotFound(path + ": no such file");
  if (std::filesystem::is_directory(status)) return InvalidArgument(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open: " + std::strerror(errno));
  auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) {
    return LimitExceeded(path + ": file is " + std::to_string(size) + " bytes, the limit is " +
                         std::to_string(max_bytes));
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  return out.str();
}

Status WriteFileAtomically(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  // A failed write (often a full disk) leaves no temporary file behind.
  auto failed = [&tmp](const std::string& what, int error) {
    ::unlink(tmp.c_str());
    std::string message = tmp + ": " + what + ": " + std::strerror(error);
    if (error == ENOSPC || error == EDQUOT) return DiskFull(message + " (disk full)");
    return IoError(message);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int error = errno;
    std::string message = tmp + ": cannot create: " + std::strerror(error);
    if (error == ENOSPC || error == EDQUOT) return DiskFull(message + " (disk full)");
    return IoError(message);
  }
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::close(fd);
      return failed("write failed", error);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return failed("write failed", errno);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return IoError(path + ": cannot rename into place");
  }
  return Status::Ok();
}

Status MakeDirectories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    std::string message = path + ": cannot create directory: " + ec.message();
    if (ec.value() == ENOSPC || ec.value() == EDQUOT) return DiskFull(message + " (disk full)");
    return IoError(message);
  }
  if (!std::filesystem::is_directory(path))
    return IoError(path + ": exists and is not a directory");
  return Status::Ok();
}

std::vector<std::string> FilesBeside(const std::string& path,
                                     const std::function<bool(const std::string& name)>& accept) {
  std::vector<std::string> found;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code error;
  std::filesystem::directory_iterator it(parent.empty() ? "." : parent, error);
  if (error) return found;
  for (const auto& entry : it) {
    std::error_code type_error;
    if (!entry.is_regular_file(type_error)) continue;
    const std::string name = entry.path().filename().string();
    if (accept(name)) found.push_back((parent / name).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace reel
