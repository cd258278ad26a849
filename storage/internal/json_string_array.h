#pragma once

#include <string>
#include <vector>

namespace reel::storage::internal {

// The strings as a JSON array (for SQLite's json_each and for stored lists): quotes, backslashes
// and control characters escaped; other bytes kept as they are (callers pass valid UTF-8).
std::string JsonStringArray(const std::vector<std::string>& items);

}  // namespace reel::storage::internal
