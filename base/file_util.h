// Small file-system helpers shared by every module. All return errors as values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace reel {

// Reads a whole file. Fails with kNotFound, kIoError, or kLimitExceeded past `max_bytes`.
Result<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes = UINT64_MAX);

// Writes `data` to `path` through a temporary file and a rename, so readers never see a
// half-written file. kDiskFull when the disk (or a quota) is full; no temporary file is left.
Status WriteFileAtomically(const std::string& path, std::string_view data);

// Creates `path` and its parents if missing.
Status MakeDirectories(const std::string& path);

}  // namespace reel
