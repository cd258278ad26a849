// Small file-system helpers shared by every module. All return errors as values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel {

// Reads a whole file. Fails with kNotFound, kIoError, or kLimitExceeded past `max_bytes`.
Result<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes = UINT64_MAX);

// Writes `data` to `path` through a temporary file and a rename, so readers never see a
// half-written file. kDiskFull when the disk (or a quota) is full; no temporary file is left.
Status WriteFileAtomically(const std::string& path, std::string_view data);

// Creates `path` and its parents if missing.
Status MakeDirectories(const std::string& path);

// The files beside `path` (a video's side-car subtitles or documents): the regular files in its
// directory (".", when `path` names none) whose file name `accept` takes, each as `path`'s
// directory joined with the name (relative when `path` is), sorted. An unreadable directory
// gives none. `path` itself is listed too if `accept` takes its name.
std::vector<std::string> FilesBeside(const std::string& path,
                                     const std::function<bool(const std::string& name)>& accept);

}  // namespace reel
