#include "base/file_util.h"

#include <unistd.h>
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
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError(tmp + ": cannot create: " + std::strerror(errno));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) return IoError(tmp + ": write failed");
  }
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
  if (ec) return IoError(path + ": cannot create directory: " + ec.message());
  if (!std::filesystem::is_directory(path))
    return IoError(path + ": exists and is not a directory");
  return Status::Ok();
}

}  // namespace reel
