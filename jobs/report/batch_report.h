// The batch report: per run, items and requests by outcome, token totals, tokens per second,
// latency and time to first token, the cached-token share, retries, estimated cost, the slowest
// and most expensive items, and a throughput plot drawn as SVG by Reel. As a page (batch.html),
// as a section of the index, and as text for the terminal (`reel report --batch`).
//
// Figures that need columns the model stage adds (time to first token, attempts, cost; see
// storage/report_data.h) say "not recorded" when the file has none. Pure rendering; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "storage/report_data.h"

namespace reel::jobs::report {

// The p-th percentile (0..100) by the nearest-rank rule; NaN for no values.
double Percentile(std::vector<double> values, double p);

// Rates of a run, from its totals and wall time.
struct RunRates {
  std::optional<double> tokens_per_second;         // prompt + completion over wall time
  std::optional<double> output_tokens_per_second;  // completion over wall time
  std::optional<double> cached_share;              // cached / prompt tokens
  std::optional<double> latency_mean;
  std::optional<double> latency_p99;
  std::optional<double> ttft_mean;
  std::optional<double> ttft_p99;
};
RunRates ComputeRates(const storage::ReportRun& run);

// A standalone SVG document: output and total tokens per second over the run (when it has
// answers) and items finished per minute (when items finished), in buckets of equal time.
std::string ThroughputSvg(const storage::ReportRun& run);

// A run that finished having done nothing: no item processed or failed, nothing written, no
// request sent or answered (every item up to date, every question answered or waiting).
bool IsNoOpRun(const storage::ReportRun& run);

// The runs as HTML: `full` adds the item lists and plots (the batch page), consecutive no-op runs
// folded into one line (<details>) with a row each; without it, the index's section: a table
// row per run linking to batch.html, consecutive no-op runs as one row, at most 5 rows.
std::string BatchHtml(const std::vector<storage::ReportRun>& runs,
                      const storage::ReportColumns& columns, bool full);

std::string RenderBatchPage(const std::vector<storage::ReportRun>& runs,
                            const storage::ReportColumns& columns, const std::string& database,
                            const std::string& generated_at);

// Plain text for the terminal: a block per run.
std::string BatchText(const std::vector<storage::ReportRun>& runs,
                      const storage::ReportColumns& columns);

}  // namespace reel::jobs::report
