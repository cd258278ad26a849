// Page references in a model's answer about a document ("p. 12", "pp. 3-5", "Seite 4", "第12页"),
// found with their byte spans: the counterpart of base/time_references.h for documents. A number
// alone is never a page. Pure functions; thread-safe; any bytes are accepted.
// The grammar: base/README.md, "Page references".
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace reel {

struct PageReference {
  size_t begin = 0;             // byte offset of the first byte in the text
  size_t end = 0;               // one past the last byte
  int page = 0;                 // 1-based; the first page of a range
  std::optional<int> end_page;  // a range's last page (>= page)
  bool operator==(const PageReference&) const = default;
};

// Every page reference in `text`, in order, not overlapping.
std::vector<PageReference> FindPageReferences(std::string_view text);

}  // namespace reel
