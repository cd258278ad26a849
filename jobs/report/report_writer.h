// `reel report`: writes a static report folder from a results database.
//
//   DIR/index.html, index-2.html, ...   the items, `page_size` per page, and the runs
//   DIR/items/<id>.html                 one storyboard page per item (jobs/report/item_page.h)
//   DIR/batch.html                      the batch report (jobs/report/batch_report.h)
//   DIR/plots/run-<id>.svg              each run's throughput plot, standalone
//   DIR/thumbs/ab/<sha256>.jpg          thumbnails, copied out of the database's blobs once
//   DIR/report.css
//   DIR/search-index.js, search.js      the index's search box (jobs/report/search_index.h)
// No server, no network: the folder opens from disk (file://) and can be copied anywhere; the only
// script is the index's search, over the index file written with it. A
// thumbnail already in DIR with the right size is not written again, so rerunning is cheap.
//
// The database is opened read-only. Errors: kNotFound for a missing database or item,
// kInvalidArgument for an ambiguous item, kIoError when DIR cannot be written.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace reel::jobs::report {

struct ReportOptions {
  std::string database;
  std::optional<std::string> job;  // only this job's items and runs
  std::vector<std::string> items;  // only these items (ids or paths); then no index is written
  std::string out_dir;
  int64_t page_size = 200;
  bool batch_only = false;   // only batch.html and the plots
  int max_runs = 20;         // runs in the batch report (newest first)
  std::string generated_at;  // "" = now (UTC)
  // Called after each item page with (done, total).
  std::function<void(int64_t, int64_t)> on_progress;
};

struct ReportStats {
  int64_t item_pages = 0;
  int64_t index_pages = 0;
  int64_t thumbnails_written = 0;
  int64_t thumbnails_kept = 0;  // already in DIR
  int64_t runs = 0;
  std::string batch_text;  // the batch report as text
};

Result<ReportStats> WriteReport(const ReportOptions& options);

}  // namespace reel::jobs::report
