// Text from a server that is not JSON (an HTML error page, a cut body) may be any bytes; what
// Reel records must be valid UTF-8 (SQLite TEXT, JSON exports).
#pragma once

#include <string>
#include <string_view>

namespace reel::llm {

// `bytes` with each byte that is not part of well-formed UTF-8 (base/utf8.h) replaced by U+FFFD,
// one per byte (unlike ReplaceInvalidUtf8's one per maximal subpart: a cut "\xE7\x8C" gives two),
// and control characters other than tab and newline replaced by spaces.
std::string SanitizedUtf8(std::string_view bytes);

}  // namespace reel::llm
