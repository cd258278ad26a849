// SpaceReserve: room kept on the database's disk (`<database>.reserve`) so that a run that fills
// the disk can still record how it ended. Ownership: owns its file. Movable, not copyable; not
// thread-safe. Details: storage/README.md, "Space reserve".
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace reel::storage {

class SpaceReserve {
 public:
  // The reserve beside `database_path`. kDiskFull when the disk cannot hold it, kIoError when it
  // cannot be made.
  static Result<SpaceReserve> Allocate(const std::string& database_path, int64_t bytes);
  static std::string PathFor(const std::string& database_path);  // `<database>.reserve`

  SpaceReserve() = default;  // holds nothing
  SpaceReserve(SpaceReserve&& other) noexcept;
  SpaceReserve& operator=(SpaceReserve&& other) noexcept;
  SpaceReserve(const SpaceReserve&) = delete;
  SpaceReserve& operator=(const SpaceReserve&) = delete;
  ~SpaceReserve();

  // Deletes the file. Returns whether it held space.
  bool Release();

 private:
  explicit SpaceReserve(std::string path) : path_(std::move(path)) {}
  std::string path_;  // "" once released
};

}  // namespace reel::storage
