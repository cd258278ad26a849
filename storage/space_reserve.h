// SpaceReserve: room kept on the database's disk so that a run that fills the disk can still
// record how it ended (the run row, `failed`, with the reason).
//
// Allocate() makes `<database>.reserve`, `bytes` long and allocated (posix_fallocate: the blocks
// are the file's, not a sparse promise). Release() deletes it, giving the space back to SQLite:
// the runner calls it when a write failed for lack of space, just before it writes the run's end.
// The destructor deletes it too, so the file exists only while a run holds the database's lock
// (a run killed with -9 leaves it behind; the next run takes it over).
//
// Ownership: a SpaceReserve owns its file. Movable, not copyable; not thread-safe.
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
