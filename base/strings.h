// ASCII string helpers that every module needs: case folding, trimming and joining. They treat
// bytes >= 0x80 as opaque (UTF-8 passes through unchanged). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace reel {

// What C's isspace() counts as space in the "C" locale.
inline constexpr std::string_view kAsciiSpace = " \t\n\v\f\r";

// `text` with A-Z turned to a-z; every other byte as it is.
std::string Lower(std::string_view text);

// `text` without the leading and trailing bytes that are in `chars`.
std::string_view Trim(std::string_view text, std::string_view chars = kAsciiSpace);

// `parts` with `separator` between each two.
std::string Join(const std::vector<std::string>& parts, std::string_view separator);

}  // namespace reel
