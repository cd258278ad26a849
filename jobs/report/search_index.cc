#include "jobs/report/search_index.h"

#include <nlohmann/json.hpp>

#include "jobs/report/html.h"
#include "jobs/report/item_page.h"
#include "jobs/report/markdown.h"
#include "jobs/spec/job_spec.h"

namespace reel::jobs::report {

SearchEntry SearchEntryFor(const storage::ReportItem& item) {
  SearchEntry e;
  e.item_id = item.row.item_id;
  e.path = item.row.path;
  e.job = item.row.job;
  if (std::optional<AnswerExcerpt> excerpt = FirstAnswerExcerpt(item, 200)) {
    e.excerpt = excerpt->text;
  }
  for (const storage::ReportAnswer& a : item.answers) {
    e.text += a.prompt_id + ": " + MarkdownPlainText(a.content) + "\n";
  }
  std::string segments;
  auto add = [&](const storage::SegmentRecord& s) {
    if (segments.size() >= kMaxSegmentText) return;
    segments += s.text.substr(0, kMaxSegmentText - segments.size()) + "\n";
  };
  for (const storage::SegmentRecord* s : DistinctTimedText(item)) add(*s);
  for (const storage::SegmentRecord& s : item.segments) {
    if (s.source == "document" || s.source.starts_with(kSlidesSourcePrefix)) add(s);
  }
  e.text += segments;
  return e;
}

std::string SearchIndexJs(const std::vector<SearchEntry>& entries) {
  nlohmann::json array = nlohmann::json::array();
  for (const SearchEntry& e : entries) {
    array.push_back({{"page", ItemPagePath(e.item_id)},
                     {"path", e.path},
                     {"job", e.job},
                     {"excerpt", e.excerpt},
                     {"text", e.text}});
  }
  // Invalid UTF-8 becomes U+FFFD; "<" is escaped too, so the file is also safe inline.
  std::string json = array.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out =
      "// Written by reel report: the items of index.html for its search box (search.js).\n"
      "window.REEL_SEARCH_INDEX = ";
  out.reserve(out.size() + json.size() + 4);
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  out += ";\n";
  return out;
}

const char* const kSearchJs =
    R"js(// Written by reel report: the search box of index.html, over search-index.js.
(function () {
  'use strict';
  var box = document.getElementById('search');
  var count = document.getElementById('search-count');
  var list = document.getElementById('search-results');
  var items = window.REEL_SEARCH_INDEX;
  if (!box || !list) return;
  if (!items) {
    box.disabled = true;
    box.placeholder = 'search-index.js is missing: run reel report again';
    return;
  }
  items.forEach(function (it) {
    it.name = it.path.slice(it.path.lastIndexOf('/') + 1);
    it.haystack = (it.path + '\n' + it.job + '\n' + it.text).toLowerCase();
  });
  // Text with every term marked, built as DOM nodes (never as HTML).
  function marked(parent, text, terms) {
    var lower = text.toLowerCase(), at = 0;
    while (at < text.length) {
      var best = -1, len = 0;
      terms.forEach(function (t) {
        var i = lower.indexOf(t, at);
        if (i >= 0 && (best < 0 || i < best)) { best = i; len = t.length; }
      });
      if (best < 0) break;
      parent.appendChild(document.createTextNode(text.slice(at, best)));
      var m = document.createElement('mark');
      m.textContent = text.slice(best, best + len);
      parent.appendChild(m);
      at = best + len;
    }
    parent.appendChild(document.createTextNode(text.slice(at)));
  }
  function snippet(it, terms) {
    var lower = it.text.toLowerCase();
    for (var k = 0; k < terms.length; ++k) {
      var i = lower.indexOf(terms[k]);
      if (i < 0) continue;
      var from = Math.max(0, i - 80), to = Math.min(it.text.length, i + terms[k].length + 120);
      return (from > 0 ? '\u2026' : '') + it.text.slice(from, to).replace(/\s+/g, ' ') +
             (to < it.text.length ? '\u2026' : '');
    }
    return it.excerpt;
  }
  function run() {
    var q = box.value.trim().toLowerCase();
    while (list.firstChild) list.removeChild(list.firstChild);
    if (!q) {
      count.textContent = '';
      list.hidden = true;
      return;
    }
    var terms = q.split(/\s+/);
    var hits = items.filter(function (it) {
      return terms.every(function (t) { return it.haystack.indexOf(t) >= 0; });
    });
    count.textContent = hits.length + (hits.length === 1 ? ' item matches' : ' items match') +
                        (hits.length > 200 ? ' (the first 200 shown)' : '');
    hits.slice(0, 200).forEach(function (it) {
      var li = document.createElement('li');
      var a = document.createElement('a');
      a.href = it.page;
      a.title = it.path;
      marked(a, it.name, terms);
      li.appendChild(a);
      var s = document.createElement('span');
      s.className = 'snippet';
      marked(s, snippet(it, terms), terms);
      li.appendChild(s);
      list.appendChild(li);
    });
    list.hidden = false;
  }
  box.addEventListener('input', run);
  // index.html?q=words searches on opening (a link to a search, and how it is tested).
  var q = new URLSearchParams(location.search).get('q');
  if (q) { box.value = q; }
  if (box.value) run();
})();
)js";

}  // namespace reel::jobs::report
