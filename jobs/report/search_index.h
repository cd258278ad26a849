// The report's search, without a server: index.html loads search-index.js (written beside it:
// one assignment of a JSON array to window.REEL_SEARCH_INDEX, since a page opened from disk
// cannot fetch() a JSON file) and search.js (kSearchJs), which filters it as one types and lists
// the matching items with a snippet. An entry holds an item's file name, path and job, its answers
// (Markdown as plain text, with their prompt ids), and its subtitle, transcript and document text
// (up to kMaxSegmentText bytes of it). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/report_data.h"

namespace reel::jobs::report {

inline constexpr size_t kMaxSegmentText = 8000;

struct SearchEntry {
  int64_t item_id = 0;
  std::string path;
  std::string job;
  std::string excerpt;  // the first answer's excerpt, shown when the match is in the name
  std::string text;     // answers, then subtitles / transcript / document text
};

SearchEntry SearchEntryFor(const storage::ReportItem& item);

// The contents of search-index.js.
std::string SearchIndexJs(const std::vector<SearchEntry>& entries);

// The contents of search.js.
extern const char* const kSearchJs;

}  // namespace reel::jobs::report
