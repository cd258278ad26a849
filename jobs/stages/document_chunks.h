// Splitting a plain-text or Markdown document into searchable chunks. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace reel::jobs {

struct ChunkOptions {
  size_t target_chars = 1200;  // paragraphs are joined up to about this size
  size_t max_chars = 2400;     // a longer paragraph is cut at a space near target_chars
};

// Paragraphs are separated by blank lines; a Markdown heading ("# ...") always starts a new
// chunk. Consecutive short paragraphs are joined (with a blank line) up to target_chars; a
// paragraph longer than max_chars is cut at whitespace. CRLF becomes LF, a UTF-8 BOM is dropped,
// surrounding blank space is trimmed, and empty chunks are never returned.
std::vector<std::string> SplitDocument(std::string_view text, const ChunkOptions& options = {});

}  // namespace reel::jobs
