// The index of a report: one page per `page_size` items (index.html, index-2.html, ...), each
// with a search box over every item of the report (search_index.h), a pager, counts by status,
// and a table of its items (thumbnail, file name linking to the item's page with the first
// answer's excerpt below it, kind, status, duration, frames, answers, tokens, cost, failures);
// the first page also has the batch section (the newest runs, linking to batch.html). Pure
// rendering; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jobs/report/item_page.h"
#include "storage/report_data.h"

namespace reel::jobs::report {

struct IndexPage {
  int64_t page = 1;   // 1-based
  int64_t pages = 1;  // at least 1
  int64_t total_items = 0;
  int64_t first_item = 0;  // 0-based position of rows[0] among all items
  std::optional<std::string> job;
  std::vector<storage::ReportItemRow> rows;
  std::vector<std::optional<AnswerExcerpt>> excerpts;  // by row (missing = none)
  bool search = true;  // search-index.js and search.js are written beside the page
  std::vector<std::pair<std::string, int64_t>> status_counts;
  std::string runs_html;  // the batch section (first page only); "" = none
  storage::ReportColumns columns;
  std::string database;
  std::string generated_at;
};

std::string RenderIndexPage(const IndexPage& page);

}  // namespace reel::jobs::report
