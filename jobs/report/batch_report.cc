#include "jobs/report/batch_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "jobs/report/html.h"

namespace reel::jobs::report {
namespace {

constexpr const char* kNotRecorded = "not recorded";
constexpr int kIndexRows = 5;  // rows of the index's runs table

std::string Percent(std::optional<double> share) {
  if (!share) return "-";
  return Fixed(*share * 100, 1) + "%";
}

std::string OptionalDuration(std::optional<double> seconds) {
  return seconds ? Duration(*seconds) : std::string("-");
}

// A round number at or above `v`: 1, 2 or 5 times a power of ten.
double NiceCeiling(double v) {
  if (!(v > 0)) return 1;
  double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

std::string Number(double v) {
  if (v >= 100 || v == std::floor(v)) return Count(static_cast<int64_t>(std::llround(v)));
  return Fixed(v, v >= 10 ? 1 : 2);
}

struct Series {
  std::string name;
  std::string css;  // class
  std::vector<double> values;
};

// One panel: a frame, three horizontal grid lines with labels, time ticks, and the series.
void Panel(std::ostringstream& svg, double y0, const std::string& unit,
           const std::vector<Series>& series, double wall, double step) {
  constexpr double kWidth = 640, kHeight = 180, kLeft = 64, kRight = 16, kTop = 26, kBottom = 30;
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;
  double max = 0;
  for (const Series& s : series) {
    for (double v : s.values) max = std::max(max, v);
  }
  max = NiceCeiling(max);
  svg << "<g class=\"panel\" transform=\"translate(0," << y0 << ")\">";
  svg << "<text class=\"unit\" x=\"" << kLeft << "\" y=\"16\">" << Html(unit) << "</text>";
  double legend_x = kLeft + 220;
  for (const Series& s : series) {
    svg << "<rect class=\"" << s.css << "\" x=\"" << legend_x << "\" y=\"8\" width=\"14\" "
        << "height=\"4\"/><text class=\"legend\" x=\"" << legend_x + 18 << "\" y=\"14\">"
        << Html(s.name) << "</text>";
    legend_x += 30 + 7.0 * static_cast<double>(s.name.size());
  }
  for (int g = 0; g <= 2; ++g) {
    double y = kTop + plot_h - plot_h * g / 2.0;
    svg << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << kLeft + plot_w << "\" y1=\"" << y
        << "\" y2=\"" << y << "\"/><text class=\"label\" x=\"" << kLeft - 6 << "\" y=\"" << y + 4
        << "\" text-anchor=\"end\">" << Html(Number(max * g / 2.0)) << "</text>";
  }
  for (int g = 0; g <= 2; ++g) {
    double x = kLeft + plot_w * g / 2.0;
    svg << "<text class=\"label\" x=\"" << x << "\" y=\"" << kTop + plot_h + 18
        << "\" text-anchor=\"middle\">" << Html(Duration(wall * g / 2.0)) << "</text>";
  }
  for (const Series& s : series) {
    svg << "<polyline class=\"series " << s.css << "\" fill=\"none\" points=\"";
    for (size_t i = 0; i < s.values.size(); ++i) {
      double t = std::min(wall, (static_cast<double>(i) + 0.5) * step);
      double x = kLeft + (wall > 0 ? plot_w * t / wall : 0);
      double y = kTop + plot_h - plot_h * s.values[i] / max;
      svg << (i ? " " : "") << Fixed(x, 1) << "," << Fixed(y, 1);
    }
    svg << "\"><title>" << Html(s.name) << "</title></polyline>";
  }
  svg << "</g>";
}

std::string RunTitle(const storage::ReportRun& r) {
  std::string title = "Run " + std::to_string(r.run.id) + " of " + r.job;
  if (r.run.shard_count > 1) {
    title += " (shard " + std::to_string(r.run.shard_index) + "/" +
             std::to_string(r.run.shard_count) + ")";
  }
  return title;
}

// Consecutive runs that did nothing, folded into one line with a small table (a nightly cron
// run over a finished batch is one of these).
std::string NoOpRunsHtml(const std::vector<const storage::ReportRun*>& group) {
  const storage::ReportRun& newest = *group.front();
  const storage::ReportRun& oldest = *group.back();
  std::string out = "<details class=\"noop-runs\"><summary>";
  if (group.size() == 1) {
    out += "Run " + std::to_string(newest.run.id) + " of " + Html(newest.job);
  } else {
    out += Count(static_cast<int64_t>(group.size())) + " runs (" + std::to_string(oldest.run.id) +
           " to " + std::to_string(newest.run.id) + ")";
  }
  out +=
      " did nothing: " +
      std::string(newest.run.counters.items_seen > 0 ? "every item was up to date" : "no items") +
      ", no questions asked. " + Html(oldest.run.started_at) +
      (group.size() > 1 ? " to " + Html(newest.run.started_at) : "") +
      "</summary><table class=\"data runs\"><thead><tr><th>run</th><th>job</th>"
      "<th>status</th><th>started</th><th>wall</th><th>items seen / skipped</th>"
      "<th>message</th></tr></thead><tbody>";
  for (const storage::ReportRun* r : group) {
    out += "<tr id=\"run-" + std::to_string(r->run.id) + "\"><td>" + std::to_string(r->run.id) +
           "</td><td>" + Html(r->job) + "</td><td><span class=\"status " +
           Html(storage::RunStatusName(r->run.status)) + "\">" +
           Html(storage::RunStatusName(r->run.status)) + "</span></td><td>" +
           Html(r->run.started_at) + "</td><td class=\"n\">" + OptionalDuration(r->wall_seconds) +
           "</td><td class=\"n\">" + Count(r->run.counters.items_seen) + " / " +
           Count(r->run.counters.items_skipped) + "</td><td>" + Html(r->run.message.value_or("")) +
           "</td></tr>";
  }
  return out + "</tbody></table></details>\n";
}

}  // namespace

bool IsNoOpRun(const storage::ReportRun& r) {
  const storage::RunCounters& c = r.run.counters;
  return r.run.status != storage::RunStatus::kRunning && c.items_done == 0 && c.items_failed == 0 &&
         c.frames == 0 && c.segments == 0 && r.requests_sent == 0 && r.requests_succeeded == 0 &&
         r.requests_failed == 0 && r.reasked == 0 && r.prompt_tokens == 0 &&
         r.completion_tokens == 0 && r.events.empty();
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  size_t index = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size())));
  return values[index - 1];
}

RunRates ComputeRates(const storage::ReportRun& run) {
  RunRates rates;
  const int64_t tokens = run.prompt_tokens + run.completion_tokens;
  if (run.wall_seconds && *run.wall_seconds > 0 && tokens > 0) {
    rates.tokens_per_second = tokens / *run.wall_seconds;
    rates.output_tokens_per_second = run.completion_tokens / *run.wall_seconds;
  }
  if (run.prompt_tokens > 0) {
    rates.cached_share = static_cast<double>(run.cached_tokens) / run.prompt_tokens;
  }
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  if (!run.latencies.empty()) {
    rates.latency_mean = mean(run.latencies);
    rates.latency_p99 = Percentile(run.latencies, 99);
  }
  if (!run.ttfts.empty()) {
    rates.ttft_mean = mean(run.ttfts);
    rates.ttft_p99 = Percentile(run.ttfts, 99);
  }
  return rates;
}

std::string ThroughputSvg(const storage::ReportRun& run) {
  double wall = run.wall_seconds.value_or(0);
  for (const storage::ReportRunEvent& e : run.events) wall = std::max(wall, e.at_seconds);
  const int buckets = static_cast<int>(std::clamp(std::ceil(wall / 1.0), 1.0, 40.0));
  const double step = wall > 0 ? wall / buckets : 1;
  std::vector<double> total(buckets, 0), output(buckets, 0), items(buckets, 0);
  int64_t tokens = 0, finished = 0;
  for (const storage::ReportRunEvent& e : run.events) {
    int b = std::clamp(static_cast<int>(e.at_seconds / step), 0, buckets - 1);
    total[b] += static_cast<double>(e.prompt_tokens + e.completion_tokens);
    output[b] += static_cast<double>(e.completion_tokens);
    items[b] += static_cast<double>(e.items);
    tokens += e.prompt_tokens + e.completion_tokens;
    finished += e.items;
  }
  for (int b = 0; b < buckets; ++b) {
    total[b] /= step;
    output[b] /= step;
    items[b] *= 60.0 / step;
  }
  std::vector<std::pair<std::string, std::vector<Series>>> panels;
  if (tokens > 0) {
    panels.push_back(
        {"tokens per second", {{"prompt + output", "total", total}, {"output", "output", output}}});
  }
  if (finished > 0) panels.push_back({"items finished per minute", {{"items", "items", items}}});
  const double height = std::max<size_t>(1, panels.size()) * 180.0;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"throughput\" viewBox=\"0 0 640 "
      << height << "\" width=\"640\" height=\"" << height << "\" role=\"img\">"
      << "<title>" << Html(RunTitle(run)) << ": throughput over the run</title>"
      << "<style>.grid{stroke:#ddd}.label,.unit,.legend,.none{font:11px sans-serif;fill:#555}"
      << ".unit{font-weight:bold}.series{stroke-width:2}polyline.total{stroke:#2b6cb0}"
      << "polyline.output{stroke:#c05621}polyline.items{stroke:#2f855a}rect.total{fill:#2b6cb0}"
      << "rect.output{fill:#c05621}rect.items{fill:#2f855a}</style>";
  if (panels.empty()) {
    svg << "<text class=\"none\" x=\"64\" y=\"90\">Nothing finished in this run.</text>";
  }
  for (size_t i = 0; i < panels.size(); ++i) {
    Panel(svg, 180.0 * static_cast<double>(i), panels[i].first, panels[i].second, wall, step);
  }
  svg << "</svg>";
  return svg.str();
}

std::string BatchHtml(const std::vector<storage::ReportRun>& runs,
                      const storage::ReportColumns& columns, bool full) {
  if (runs.empty()) return "<p class=\"empty\">No runs recorded.</p>";
  std::string out;
  if (!full) {
    out +=
        "<table class=\"data runs\"><thead><tr><th>run</th><th>job</th><th>status</th>"
        "<th>started</th><th>wall</th><th>items done / skipped / failed</th>"
        "<th>requests ok / failed</th><th>tokens</th><th>tokens/s</th><th>cost</th>"
        "</tr></thead><tbody>";
    int rows = 0;
    for (size_t i = 0; i < runs.size() && rows < kIndexRows; ++i, ++rows) {
      const storage::ReportRun& r = runs[i];
      if (IsNoOpRun(r)) {
        // Consecutive runs that did nothing: one row.
        size_t j = i;
        while (j + 1 < runs.size() && IsNoOpRun(runs[j + 1])) ++j;
        const std::string count =
            j == i ? "did nothing" : Count(static_cast<int64_t>(j - i + 1)) + " runs did nothing";
        out += "<tr class=\"noop\"><td><a href=\"batch.html#run-" + std::to_string(r.run.id) +
               "\">" + std::to_string(r.run.id) + "</a>" +
               (j == i ? "" : "&ndash;" + std::to_string(runs[j].run.id)) + "</td><td>" +
               Html(r.job) + "</td><td colspan=\"8\" class=\"empty\">" + count +
               " (every item up to date, no questions asked), " + Html(runs[j].run.started_at) +
               (j == i ? "" : " to " + Html(r.run.started_at)) + "</td></tr>";
        i = j;
        continue;
      }
      RunRates rates = ComputeRates(r);
      out += "<tr><td><a href=\"batch.html#run-" + std::to_string(r.run.id) + "\">" +
             std::to_string(r.run.id) + "</a></td><td>" + Html(r.job) + "</td><td>" +
             Html(storage::RunStatusName(r.run.status)) + "</td><td>" + Html(r.run.started_at) +
             "</td><td class=\"n\">" + OptionalDuration(r.wall_seconds) + "</td><td class=\"n\">" +
             Count(r.run.counters.items_done) + " / " + Count(r.run.counters.items_skipped) +
             " / " + Count(r.run.counters.items_failed) + "</td><td class=\"n\">" +
             Count(r.requests_succeeded) + " / " + Count(r.requests_failed) +
             "</td><td class=\"n\">" + Count(r.prompt_tokens + r.completion_tokens) +
             "</td><td class=\"n\">" + Fixed(rates.tokens_per_second, 1) + "</td><td class=\"n\">" +
             (r.cost ? Fixed(*r.cost, 4) : "-") + "</td></tr>";
    }
    out += "</tbody></table>";
    return out;
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const storage::ReportRun& r = runs[i];
    if (IsNoOpRun(r)) {
      std::vector<const storage::ReportRun*> group;
      for (; i < runs.size() && IsNoOpRun(runs[i]); ++i) group.push_back(&runs[i]);
      --i;
      out += NoOpRunsHtml(group);
      continue;
    }
    RunRates rates = ComputeRates(r);
    const storage::RunCounters& c = r.run.counters;
    out += "<section class=\"run\" id=\"run-" + std::to_string(r.run.id) + "\"><h2>" +
           Html(RunTitle(r)) + "</h2><p class=\"summary\"><span class=\"status " +
           Html(storage::RunStatusName(r.run.status)) + "\">" +
           Html(storage::RunStatusName(r.run.status)) + "</span> started " +
           Html(r.run.started_at) +
           (r.run.finished_at ? ", finished " + Html(*r.run.finished_at) : "") + " on " +
           Html(r.run.host) + " (pid " + std::to_string(r.run.pid) + ")</p>";
    if (r.run.message) out += "<p class=\"error\">" + Html(*r.run.message) + "</p>";
    out += "<div class=\"figures\">";
    out +=
        "<table class=\"data\"><caption>Items</caption><tbody>"
        "<tr><th>seen</th><td class=\"n\">" +
        Count(c.items_seen) +
        "</td></tr>"
        "<tr><th>done</th><td class=\"n\">" +
        Count(c.items_done) +
        "</td></tr>"
        "<tr><th>skipped (up to date)</th><td class=\"n\">" +
        Count(c.items_skipped) + "</td></tr><tr><th>failed</th><td class=\"n\">" +
        Count(c.items_failed) + "</td></tr><tr><th>frames written</th><td class=\"n\">" +
        Count(c.frames) + "</td></tr><tr><th>text segments written</th><td class=\"n\">" +
        Count(c.segments) + "</td></tr></tbody></table>";
    out +=
        "<table class=\"data\"><caption>Requests</caption><tbody>"
        "<tr><th>succeeded</th><td class=\"n\">" +
        Count(r.requests_succeeded) +
        "</td></tr>"
        "<tr><th>failed</th><td class=\"n\">" +
        Count(r.requests_failed) +
        "</td></tr>"
        "<tr><th>never finished</th><td class=\"n\">" +
        Count(r.requests_sent) +
        "</td></tr>"
        "<tr><th>asked again after a failure</th><td class=\"n\">" +
        Count(r.reasked) + "</td></tr><tr><th>HTTP retries</th><td class=\"n\">" +
        (r.retries ? Count(*r.retries) : std::string(kNotRecorded)) +
        "</td></tr><tr><th>asked again after a failed answer check</th><td class=\"n\">" +
        (r.rechecked ? Count(*r.rechecked) : std::string(kNotRecorded)) +
        "</td></tr></tbody></table>";
    out +=
        "<table class=\"data\"><caption>Tokens</caption><tbody>"
        "<tr><th>prompt</th><td class=\"n\">" +
        Count(r.prompt_tokens) +
        "</td></tr>"
        "<tr><th>of which cached</th><td class=\"n\">" +
        Count(r.cached_tokens) + " (" + Percent(rates.cached_share) +
        ")</td></tr><tr><th>output</th><td class=\"n\">" + Count(r.completion_tokens) +
        "</td></tr><tr><th>total</th><td class=\"n\">" +
        Count(r.prompt_tokens + r.completion_tokens) +
        "</td></tr>"
        "<tr><th>estimated cost</th><td class=\"n\">" +
        (r.cost ? Fixed(*r.cost, 4) : std::string(columns.request_cost ? "-" : kNotRecorded)) +
        "</td></tr></tbody></table>";
    out +=
        "<table class=\"data\"><caption>Speed</caption><tbody>"
        "<tr><th>wall time</th><td class=\"n\">" +
        OptionalDuration(r.wall_seconds) +
        "</td></tr><tr><th>tokens per second</th><td class=\"n\">" +
        Fixed(rates.tokens_per_second, 1) +
        "</td></tr><tr><th>output tokens per second</th>"
        "<td class=\"n\">" +
        Fixed(rates.output_tokens_per_second, 1) +
        "</td></tr><tr><th>latency mean / p99</th><td class=\"n\">" +
        OptionalDuration(rates.latency_mean) + " / " + OptionalDuration(rates.latency_p99) +
        "</td></tr><tr><th>time to first token mean / p99</th><td class=\"n\">" +
        (columns.request_ttft
             ? OptionalDuration(rates.ttft_mean) + " / " + OptionalDuration(rates.ttft_p99)
             : std::string(kNotRecorded)) +
        "</td></tr></tbody></table></div>";
    auto item_table = [&](const char* caption, const std::vector<storage::ReportRunItem>& items,
                          const char* empty) {
      out += "<h3>" + std::string(caption) + "</h3>";
      if (items.empty()) {
        out += "<p class=\"empty\">" + std::string(empty) + "</p>";
        return;
      }
      out +=
          "<table class=\"data items\"><thead><tr><th>item</th><th>processing</th>"
          "<th>model time</th><th>tokens</th><th>cost</th></tr></thead><tbody>";
      for (const storage::ReportRunItem& i : items) {
        out += "<tr><td><a href=\"" + ItemPagePath(i.item_id) + "\">" + Html(i.path) +
               "</a></td><td class=\"n\">" + OptionalDuration(i.seconds) + "</td><td class=\"n\">" +
               Duration(i.request_seconds) + "</td><td class=\"n\">" + Count(i.tokens) +
               "</td><td class=\"n\">" + (i.cost ? Fixed(*i.cost, 4) : "-") + "</td></tr>";
      }
      out += "</tbody></table>";
    };
    item_table("Slowest items", r.slowest, "No item finished in this run.");
    item_table(columns.request_cost ? "Most expensive items" : "Most expensive items (by tokens)",
               r.most_expensive, "No answers in this run.");
    out +=
        "<h3>Throughput</h3><figure class=\"plot\">" + ThroughputSvg(r) + "</figure></section>\n";
  }
  return out;
}

std::string RenderBatchPage(const std::vector<storage::ReportRun>& runs,
                            const storage::ReportColumns& columns, const std::string& database,
                            const std::string& generated_at) {
  std::string out =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>Batch report - Reel</title><link rel=\"stylesheet\" href=\"report.css\"></head>\n"
      "<body class=\"batch-page\">\n<nav class=\"top\"><a href=\"index.html\">All items</a></nav>\n"
      "<header><h1>Batch report</h1><p class=\"summary\">" +
      Count(static_cast<int64_t>(runs.size())) + " runs, newest first</p></header>\n";
  out += BatchHtml(runs, columns, /*full=*/true);
  out += "<footer>Written by reel report from " + Html(database) + " at " + Html(generated_at) +
         ".</footer>\n</body></html>\n";
  return out;
}

std::string BatchText(const std::vector<storage::ReportRun>& runs,
                      const storage::ReportColumns& columns) {
  if (runs.empty()) return "No runs recorded.\n";
  std::ostringstream out;
  for (const storage::ReportRun& r : runs) {
    RunRates rates = ComputeRates(r);
    const storage::RunCounters& c = r.run.counters;
    out << RunTitle(r) << ": " << storage::RunStatusName(r.run.status) << ", started "
        << r.run.started_at << ", wall " << OptionalDuration(r.wall_seconds) << "\n";
    out << "  items     " << Count(c.items_seen) << " seen, " << Count(c.items_done) << " done, "
        << Count(c.items_skipped) << " skipped, " << Count(c.items_failed) << " failed; "
        << Count(c.frames) << " frames\n";
    out << "  requests  " << Count(r.requests_succeeded) << " ok, " << Count(r.requests_failed)
        << " failed, " << Count(r.requests_sent) << " never finished, " << Count(r.reasked)
        << " asked again; HTTP retries "
        << (r.retries ? Count(*r.retries) : std::string(kNotRecorded))
        << "; asked again after a failed answer check "
        << (r.rechecked ? Count(*r.rechecked) : std::string(kNotRecorded)) << "\n";
    out << "  tokens    " << Count(r.prompt_tokens) << " prompt (" << Count(r.cached_tokens)
        << " cached, " << Percent(rates.cached_share) << "), " << Count(r.completion_tokens)
        << " output; " << Fixed(rates.tokens_per_second, 1) << " tokens/s, "
        << Fixed(rates.output_tokens_per_second, 1) << " output tokens/s\n";
    out << "  latency   mean " << OptionalDuration(rates.latency_mean) << ", p99 "
        << OptionalDuration(rates.latency_p99) << "; first token "
        << (columns.request_ttft ? "mean " + OptionalDuration(rates.ttft_mean) + ", p99 " +
                                       OptionalDuration(rates.ttft_p99)
                                 : std::string(kNotRecorded))
        << "\n";
    out << "  cost      "
        << (r.cost ? Fixed(*r.cost, 4) : std::string(columns.request_cost ? "-" : kNotRecorded))
        << "\n";
    if (!r.slowest.empty()) {
      out << "  slowest   " << r.slowest[0].path << " (" << OptionalDuration(r.slowest[0].seconds)
          << ")\n";
    }
    if (!r.most_expensive.empty()) {
      out << "  costliest " << r.most_expensive[0].path << " (" << Count(r.most_expensive[0].tokens)
          << " tokens)\n";
    }
  }
  return out.str();
}

}  // namespace reel::jobs::report
