// Page references in a model's answer about a document: "p. 12", "page 12", "pp. 3-5",
// "pages 3 to 5", "Seite 4", "第12页",, found with their byte spans, the counterpart of
// base/time_references.h for documents (whose page pictures are frames timed by page number).
//
// The grammar, case-insensitive for ASCII words:
//   single  (p. | p | pg. | pg | page | Seite) N    N: 1-6 digits, not followed by a letter or
//           digit ("page12" and "p 12" count; "p12x", "app. 3" and "pagesize 3" do not: the
//           word must start a word and end before the number)
//   range   (pp. | pp | pgs. | pgs | pages | Seiten) A (- | – | — | to | through | bis) B, B >= A
//           (a plural word with one number is a single page: "pages 7")
//   CJK     第N页, 第N頁
// A reference is written as text, so "12" alone is never a page. Pure functions; thread-safe;
// any bytes are accepted.
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
