// `reel report`: a static report folder (index pages, a page per item, the batch report, plots,
// thumbnails, a search box) from a database opened read-only; it opens from disk, no server, no
// network; rerunning is cheap. Errors: kNotFound (database or item missing), kInvalidArgument (an
// ambiguous item), kIoError (DIR not writable). The layout: jobs/README.md, "Report writer".
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
