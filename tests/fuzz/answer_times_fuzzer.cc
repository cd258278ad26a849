// libFuzzer target for what Reel reads out of a model's answer: time references
// (llm/time_references.*) and the `chapters` check (llm/chapters.*). The first byte picks the
// timeline (frames, duration) the chapters are checked against; the rest is the answer. Checks: no
// crash; every reference lies inside the text, in order, not overlapping, with a finite time and
// a range's end not before its start; validated chapters are ordered, not overlapping and inside
// the item, and snapped frames exist. The same text as an answer (and a subtitle) on a `reel
// report` storyboard page (jobs/report/item_page.h): the page is valid UTF-8; in the answer's HTML
// the only markup is Reel's own time links, and the text around them unescapes to the answer; as
// Markdown, the answer's HTML is valid UTF-8 with no script element or javascript: link.
//
// Run: bash scripts/fuzz --seconds 60 answer_times (seeds in tests/fuzz/corpus/answer_times/).
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/utf8.h"
#include "jobs/report/item_page.h"
#include "llm/answers/chapters.h"
#include "llm/answers/time_references.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

namespace {

// The answer's HTML with Reel's time links taken out and entities decoded: the text again.
// Requires every '<' to open one of those links (or close one), and no stray '>' or '"'.
std::string StripTimeLinks(std::string_view html, std::string_view answer) {
  constexpr std::string_view kOpen[] = {"<a class=\"t\" href=\"#f",
                                        "<span class=\"t outside\" "
                                        "title=\"",
                                        "</a>", "</span>"};
  constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
  std::string text;
  size_t i = 0;
  while (i < html.size()) {
    const char c = html[i];
    if (c == '<') {
      bool known = false;
      for (std::string_view open : kOpen) known = known || html.substr(i).starts_with(open);
      Require(known, "only time links are markup in an answer", answer);
      const size_t close = html.find('>', i);
      Require(close != std::string_view::npos, "a time link's tag is closed", answer);
      i = close + 1;
    } else if (c == '&') {
      bool known = false;
      for (const auto& [entity, ch] : kEntities) {
        if (html.substr(i).starts_with(entity)) {
          text += ch;
          i += entity.size();
          known = true;
          break;
        }
      }
      Require(known, "an entity Reel writes", answer);
    } else {
      Require(c != '>' && c != '"', "no raw > or \" in an answer's HTML", answer);
      text += c;
      ++i;
    }
  }
  return text;
}

void CheckReportPage(std::string_view text, const reel::llm::ChapterTimeline& timeline) {
  reel::storage::ReportItem item;
  item.row.item_id = 1;
  item.row.path = "clip.mp4";
  item.row.kind = "video";
  item.row.status = "done";
  item.row.duration_seconds = timeline.duration_seconds;
  for (size_t i = 0; i < timeline.frame_times.size(); ++i) {
    reel::storage::ReportFrame& f = item.frames.emplace_back();
    f.frame_id = static_cast<int64_t>(i + 1);
    f.sample_index = static_cast<int64_t>(i);
    f.time_seconds = timeline.frame_times[i];
    f.width = 64;
    f.height = 36;
    f.thumbnail_hash = std::string(64, 'a');
  }
  const std::string content(text);
  for (const char* prompt : {"chapters", "describe"}) {
    reel::storage::ReportAnswer& a = item.answers.emplace_back();
    a.prompt_id = prompt;
    a.content = content;
  }
  reel::storage::SegmentRecord& cue = item.segments.emplace_back();
  cue.source = "sidecar:a.srt";
  cue.start_seconds = 1;
  cue.end_seconds = 2;
  cue.text = content;
  const std::string html = reel::jobs::report::AnswerHtml(content, item);
  const std::string plain = StripTimeLinks(html, text);
  if (reel::IsValidUtf8(content) && content.find('\0') == std::string::npos) {
    Require(plain == content, "the answer's HTML unescapes to the answer", text);
  }
  // As Markdown (jobs/report/markdown.h): valid UTF-8, nothing that runs, no marker left over.
  const std::string markdown = reel::jobs::report::AnswerMarkdownHtml(content, item);
  Require(reel::IsValidUtf8(markdown), "the Markdown's HTML is valid UTF-8", text);
  std::string lower = markdown;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Require(lower.find("<script") == std::string::npos, "no script element", text);
  Require(lower.find("href=\"javascript:") == std::string::npos, "no javascript: link", text);
  if (content.find("reel-markup-") == std::string::npos) {
    Require(markdown.find("reel-markup-") == std::string::npos, "every marker replaced", text);
  }
  const std::string page = reel::jobs::report::RenderItemPage(item, {});
  Require(reel::IsValidUtf8(page), "the page is valid UTF-8", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t last_end = 0;
  for (const reel::llm::TimeReference& r : reel::llm::FindTimeReferences(text)) {
    Require(r.begin >= last_end && r.end > r.begin && r.end <= text.size(),
            "references inside the text, in order, not overlapping", text);
    Require(std::isfinite(r.seconds) && r.seconds >= 0, "a finite time, not negative", text);
    Require(!r.end_seconds || *r.end_seconds >= r.seconds, "a range ends after it starts", text);
    last_end = r.end;
  }
  (void)reel::llm::ParseTimeText(text);

  reel::llm::ChapterTimeline timeline;
  const int frames = data[0] % 16;
  for (int i = 0; i < frames; ++i) timeline.frame_times.push_back(i * 7.5);
  if (data[0] & 0x80) timeline.duration_seconds = frames * 7.5 + (data[0] & 0x10 ? 3 : 0);
  auto chapters = reel::llm::ValidateChapters(text, timeline);
  if (chapters.ok()) {
    double prev_end = 0;
    for (const reel::llm::Chapter& c : *chapters) {
      Require(c.end_seconds > c.start_seconds - 1e-9 && c.start_seconds >= prev_end - 1e-9,
              "chapters ordered and not overlapping", text);
      Require(!c.start_frame || *c.start_frame < timeline.frame_times.size(), "start frame exists",
              text);
      Require(!c.end_frame || *c.end_frame < timeline.frame_times.size(), "end frame exists", text);
      prev_end = c.end_seconds;
    }
    (void)reel::llm::ChaptersToJson(*chapters);
  }
  CheckReportPage(text, timeline);
  return 0;
}
