#include "jobs/report/index_page.h"

#include <algorithm>

#include "jobs/report/html.h"

namespace reel::jobs::report {
namespace {

// Links to the first, previous, nearby, next and last pages.
std::string Pager(int64_t page, int64_t pages) {
  if (pages <= 1) return "";
  std::string out = "<nav class=\"pager\" aria-label=\"pages\">";
  auto link = [&](int64_t p, const std::string& text, const char* rel = nullptr) {
    if (p == page) {
      out += "<span class=\"current\">" + text + "</span> ";
    } else {
      out += "<a href=\"" + IndexPagePath(p) + "\"" +
             (rel ? std::string(" rel=\"") + rel + "\"" : "") + ">" + text + "</a> ";
    }
  };
  if (page > 1) link(page - 1, "&larr; previous", "prev");
  const int64_t from = std::max<int64_t>(1, page - 3);
  const int64_t to = std::min(pages, page + 3);
  if (from > 1) {
    link(1, "1");
    if (from > 2) out += "&hellip; ";
  }
  for (int64_t p = from; p <= to; ++p) link(p, std::to_string(p));
  if (to < pages) {
    if (to < pages - 1) out += "&hellip; ";
    link(pages, std::to_string(pages));
  }
  if (page < pages) link(page + 1, "next &rarr;", "next");
  return out + "</nav>";
}

}  // namespace

std::string RenderIndexPage(const IndexPage& p) {
  std::string out;
  out.reserve(4096 + p.rows.size() * 700);
  const std::string scope = p.job ? "job " + *p.job : "all jobs";
  out +=
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>Reel report: " +
      Html(scope) + (p.pages > 1 ? " (page " + std::to_string(p.page) + ")" : "") +
      "</title><link rel=\"stylesheet\" href=\"report.css\"></head>\n"
      "<body class=\"index-page\">\n<header><h1>Reel report: " +
      Html(scope) + "</h1><p class=\"summary\">" + Count(p.total_items) + " items";
  for (const auto& [status, n] : p.status_counts) {
    out += " &middot; <span class=\"status " + Html(status) + "\">" + Count(n) + " " +
           Html(status) + "</span>";
  }
  out += " &middot; <a href=\"batch.html\">batch report</a></p>";
  if (p.search) {
    out +=
        "<div class=\"search\" role=\"search\"><input type=\"search\" id=\"search\" "
        "placeholder=\"Search answers, subtitles, transcripts, text and file names\" "
        "aria-label=\"Search the items\" autocomplete=\"off\"><p class=\"count\" "
        "id=\"search-count\" aria-live=\"polite\"></p><ol class=\"search-results\" "
        "id=\"search-results\" hidden></ol></div>";
  }
  out += "</header>\n";
  if (!p.runs_html.empty()) {
    out += "<section id=\"batch\"><h2>Runs</h2>" + p.runs_html + "</section>\n";
  }
  out += "<section id=\"items\"><h2>Items";
  if (p.pages > 1) {
    out += " " + Count(p.first_item + 1) + "-" +
           Count(p.first_item + static_cast<int64_t>(p.rows.size())) + " of " +
           Count(p.total_items);
  }
  out += "</h2>" + Pager(p.page, p.pages);
  if (p.rows.empty()) {
    out += "<p class=\"empty\">No items.</p>";
  } else {
    out +=
        "<table class=\"data index\"><thead><tr><th></th><th>item</th><th>kind</th>"
        "<th>status</th><th>duration</th><th>frames</th><th>answers</th><th>tokens</th>"
        "<th>cost</th><th>problems</th></tr></thead><tbody>";
    for (size_t i = 0; i < p.rows.size(); ++i) {
      const storage::ReportItemRow& r = p.rows[i];
      const std::string page = ItemPagePath(r.item_id);
      out += "<tr><td class=\"thumb\">";
      if (r.thumbnail_hash) {
        out += "<a href=\"" + page + "\"><img src=\"" + ThumbnailPath(*r.thumbnail_hash) +
               "\" alt=\"\" height=\"54\" loading=\"lazy\"></a>";
      }
      // The file name as the link, its folder (and job) below it.
      const size_t slash = r.path.find_last_of('/');
      const std::string name = slash == std::string::npos ? r.path : r.path.substr(slash + 1);
      const std::string folder = slash == std::string::npos ? "" : r.path.substr(0, slash + 1);
      out += "</td><td class=\"path\"><a href=\"" + page + "\" title=\"" + Html(r.path) + "\">" +
             Html(name) + "</a>" +
             (r.input_gone ? " <span class=\"status failed gone\">input deleted</span>" : "") +
             "<br><span class=\"folder\">" + Html(folder) + "</span>" +
             (p.job ? "" : " <span class=\"job\">job " + Html(r.job) + "</span>");
      if (i < p.excerpts.size() && p.excerpts[i]) {
        out += "<p class=\"excerpt\"><span class=\"prompt\">" + Html(p.excerpts[i]->prompt_id) +
               "</span> " + Html(p.excerpts[i]->text) + "</p>";
      }
      out += "</td><td>" + Html(r.kind) + "</td><td><span class=\"status " + Html(r.status) +
             "\">" + Html(r.status) + "</span></td><td class=\"n\">" +
             (r.duration_seconds ? MediaTime(*r.duration_seconds) : "-") + "</td><td class=\"n\">" +
             Count(r.frames) + "</td><td class=\"n\">" + Count(r.answers) +
             "</td><td class=\"n\">" + Count(r.prompt_tokens + r.completion_tokens) +
             "</td><td class=\"n\">" + (r.cost ? Fixed(*r.cost, 4) : "-") +
             "</td><td class=\"problems\">";
      if (r.error) out += "<span class=\"error\">" + Html(*r.error) + "</span>";
      if (r.failed_requests > 0) {
        out += "<span class=\"error\">" + Count(r.failed_requests) +
               (r.failed_requests == 1 ? " failed request" : " failed requests") + "</span>";
      }
      out += "</td></tr>\n";
    }
    out += "</tbody></table>";
  }
  out += Pager(p.page, p.pages) + "</section>\n<footer>Written by reel report from " +
         Html(p.database) + " at " + Html(p.generated_at) + ".</footer>\n";
  if (p.search)
    out += "<script src=\"search-index.js\"></script><script src=\"search.js\"></script>\n";
  out += "</body></html>\n";
  return out;
}

}  // namespace reel::jobs::report
