#include "jobs/report/item_page.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "base/page_references.h"
#include "jobs/report/html.h"
#include "jobs/report/markdown.h"
#include "jobs/spec/job_spec.h"
#include "jobs/spec/prompt_kinds.h"
#include "jobs/stages/frame_features.h"
#include "llm/answers/answer_files.h"
#include "llm/answers/time_references.h"

namespace reel::jobs::report {
namespace {

using nlohmann::json;

constexpr size_t kMaxTextSegments = 500;  // document chunks shown on a page

std::string Anchor(int64_t sample_index) { return "f" + std::to_string(sample_index); }

// Pixel size of a thumbnail (long side kThumbnailLongSide, never scaled up), for the <img>
// attributes (the CSS sizes the picture; the attributes give its shape before it loads).
std::pair<int, int> ThumbSize(int width, int height) {
  constexpr int kLongSide = kThumbnailLongSide;
  if (width <= 0 || height <= 0) return {kLongSide, kLongSide * 9 / 16};
  int longest = std::max(width, height);
  if (longest <= kLongSide) return {width, height};
  double scale = static_cast<double>(kLongSide) / longest;
  return {std::max(1, static_cast<int>(std::lround(width * scale))),
          std::max(1, static_cast<int>(std::lround(height * scale)))};
}

// Text with a time in the media: not a text document's chunks nor a side-car deck's pages.
bool IsTimedText(const storage::SegmentRecord& s) {
  return s.source != "document" && !s.source.starts_with(kSlidesSourcePrefix);
}

// A document read as pages (jobs/stages/paged_document_stage.cc): its frames are page pictures
// and its segments page texts, both timed by page number.
bool IsPaged(const storage::ReportItem& item) {
  if (item.row.kind != "document") return false;
  if (!item.frames.empty()) return true;
  return std::any_of(
      item.segments.begin(), item.segments.end(),
      [](const storage::SegmentRecord& s) { return IsDocumentPageSource(s.source); });
}

std::string PageName(double page) {
  return "page " + std::to_string(static_cast<int64_t>(std::lround(page)));
}

std::string Humanize(std::string key) {
  std::replace(key.begin(), key.end(), '_', ' ');
  return key;
}

std::string Scalar(const std::string& key, const json& value) {
  if (value.is_string()) return Html(value.get<std::string>());
  if (value.is_number_float() && key.ends_with("seconds")) {
    double s = value.get<double>();
    return Html(Fixed(s, 3) + " s (" + MediaTime(s) + ")");
  }
  if (value.is_number_float()) return Html(Fixed(value.get<double>(), 3));
  if (value.is_number_integer() && key.ends_with("bytes")) {
    return Html(Count(value.get<int64_t>()) + " bytes");
  }
  if (value.is_number_integer()) return Html(Count(value.get<int64_t>()));
  return Html(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

// Media facts (media_json) as nested definition lists; lists of objects (streams) as tables.
void FactsHtml(const json& value, std::string& out, int depth) {
  if (!value.is_object() || depth > 4) {
    out += Scalar("", value);
    return;
  }
  out += "<dl class=\"facts\">";
  for (const auto& [key, v] : value.items()) {
    out += "<dt>" + Html(Humanize(key)) + "</dt><dd>";
    if (v.is_object()) {
      FactsHtml(v, out, depth + 1);
    } else if (v.is_array() && !v.empty() && v[0].is_object()) {
      std::vector<std::string> keys;
      for (const json& row : v) {
        if (!row.is_object()) continue;
        for (const auto& [k, unused] : row.items()) {
          if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
        }
      }
      out += "<table class=\"data\"><thead><tr>";
      for (const std::string& k : keys) out += "<th>" + Html(Humanize(k)) + "</th>";
      out += "</tr></thead><tbody>";
      for (const json& row : v) {
        out += "<tr>";
        for (const std::string& k : keys) {
          out += "<td>";
          if (row.is_object() && row.contains(k)) out += Scalar(k, row[k]);
          out += "</td>";
        }
        out += "</tr>";
      }
      out += "</tbody></table>";
    } else if (v.is_array()) {
      std::string items;
      for (const json& e : v) items += (items.empty() ? "" : ", ") + Scalar(key, e);
      out += items;
    } else {
      out += Scalar(key, v);
    }
    out += "</dd>";
  }
  out += "</dl>";
}

std::string Optional(const std::optional<int64_t>& v) { return v ? Count(*v) : "-"; }

void Section(std::string& out, const char* id, const std::string& title) {
  out += "<section id=\"" + std::string(id) + "\"><h2>" + Html(title) + "</h2>";
}

std::string Empty(const std::string& text) { return "<p class=\"empty\">" + Html(text) + "</p>"; }

// What the times of one answer link to: the item's own frames, or for an answer asked over
// several files, the frames of the file named before each time (llm/answers/answer_files.h).
struct TimeLinks {
  const storage::ReportItem& item;
  const llm::ChapterTimeline& timeline;
  std::vector<llm::AnswerFile> files;        // empty: an answer about the item alone
  const ItemPageOptions* options = nullptr;  // which items have a page (nullptr: every item)
  std::string_view content;                  // the whole answer: which file is named before
  size_t cursor = 0;                         // where the last run of its text was found
};

bool HasPage(const ItemPageOptions* options, int64_t item_id) {
  return options == nullptr || !options->pages || options->pages->count(item_id) > 0;
}

const storage::ReportFileItem* OtherFile(const storage::ReportItem& item, const std::string& path) {
  for (const storage::ReportFileItem& f : item.other_files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

std::string Outside(std::string_view text, const std::string& title) {
  return "<span class=\"t outside\" title=\"" + Html(title) + "\">" + Html(text) + "</span>";
}

// A time in another file of the answer: a link to its nearest frame on that file's page, or a
// marked span saying why there is none.
std::string OtherFileTime(std::string_view text, const llm::TimeReference& ref,
                          const std::string& path, const TimeLinks& links) {
  const std::string name = llm::AnswerFileName(path);
  std::string title = MediaTime(ref.seconds);
  if (ref.end_seconds) title += " to " + MediaTime(*ref.end_seconds);
  title += " in " + name;
  const storage::ReportFileItem* other = OtherFile(links.item, path);
  if (other == nullptr || !other->item_id) {
    return Outside(text, title + ": " + name + " is not in this report");
  }
  if (!HasPage(links.options, *other->item_id)) {
    return Outside(text, title + ": " + name + " has no page in this report");
  }
  std::optional<double> duration = other->duration_seconds;
  if (duration && *duration <= 0) duration.reset();
  const std::optional<size_t> nearest =
      llm::NearestFrame(ref.seconds, duration, other->frame_times);
  if (!nearest) {
    return Outside(text, title + (other->frame_times.empty() ? ": " + name + " has no frames"
                                                             : ": past the end of " + name));
  }
  const int64_t index = other->sample_indexes[*nearest];
  title += ": frame " + std::to_string(index) + " at " + MediaTime(other->frame_times[*nearest]);
  return "<a class=\"t other-file\" href=\"../" + ItemPagePath(*other->item_id) + "#" +
         Anchor(index) + "\" data-seconds=\"" + Fixed(ref.seconds, 3) + "\" title=\"" +
         Html(title) + "\">" + Html(text) + "</a>";
}

// The time references of `text` (a run of the answer's text, given in order) as markup: a link
// to the nearest frame, or a marked span when the time is outside the file it refers to.
std::vector<TextMarkup> TimeMarkup(std::string_view text, TimeLinks& links) {
  const std::vector<storage::ReportFrame>& frames = links.item.frames;
  // Where `text` is in the answer (Markdown hands over runs of text; escapes aside, each is in
  // the answer as written), for the file named before each of its times.
  size_t base = std::string_view::npos;
  if (!links.files.empty()) {
    base = links.content.find(text, links.cursor);
    if (base != std::string_view::npos) links.cursor = base + text.size();
  }
  std::vector<TextMarkup> out;
  for (const llm::TimeReference& ref : llm::FindTimeReferences(text)) {
    const std::string_view shown = text.substr(ref.begin, ref.end - ref.begin);
    TextMarkup m{ref.begin, ref.end, ""};
    std::optional<size_t> file;
    if (!links.files.empty()) {
      if (base != std::string_view::npos) {
        file = llm::FileNamedBefore(links.content, base + ref.begin, links.files);
      } else {
        file = llm::FileNamedBefore(text, ref.begin, links.files);
        if (!file) file = llm::FileNamedBefore(links.content, links.cursor, links.files);
      }
    }
    if (file && links.files[*file].path != links.item.row.path) {
      m.html = OtherFileTime(shown, ref, links.files[*file].path, links);
      out.push_back(std::move(m));
      continue;
    }
    std::optional<size_t> nearest =
        llm::NearestFrame(ref.seconds, links.timeline.duration_seconds, links.timeline.frame_times);
    std::string title = MediaTime(ref.seconds);
    if (ref.end_seconds) title += " to " + MediaTime(*ref.end_seconds);
    if (nearest) {
      const int64_t index = frames[*nearest].sample_index;
      title +=
          ": frame " + std::to_string(index) + " at " + MediaTime(frames[*nearest].time_seconds);
      m.html = "<a class=\"t\" href=\"#" + Anchor(index) + "\" data-seconds=\"" +
               Fixed(ref.seconds, 3) + "\" title=\"" + Html(title) + "\">" + Html(shown) + "</a>";
    } else {
      m.html = Outside(
          shown, title + (frames.empty() ? ": the item has no frames" : ": outside the item"));
    }
    out.push_back(std::move(m));
  }
  return out;
}

// The page references of `text` (a document's answer) as markup: a link to the page's picture
// on the contact sheet, or a marked span when the item has no picture of that page.
std::vector<TextMarkup> PageMarkup(std::string_view content,
                                   const std::vector<storage::ReportFrame>& frames) {
  std::vector<TextMarkup> out;
  for (const PageReference& ref : FindPageReferences(content)) {
    const std::string_view text = content.substr(ref.begin, ref.end - ref.begin);
    std::string title = PageName(ref.page);
    if (ref.end_page) title += " to " + std::to_string(*ref.end_page);
    auto frame = std::find_if(frames.begin(), frames.end(), [&](const storage::ReportFrame& f) {
      return std::lround(f.time_seconds) == ref.page;
    });
    TextMarkup m{ref.begin, ref.end, ""};
    if (frame != frames.end()) {
      m.html = "<a class=\"t\" href=\"#" + Anchor(frame->sample_index) + "\" data-page=\"" +
               std::to_string(ref.page) + "\" title=\"" + Html(title + ": its picture") + "\">" +
               Html(text) + "</a>";
    } else {
      title += frames.empty() ? ": the document has no page pictures" : ": no picture of it";
      m.html = "<span class=\"t outside\" title=\"" + Html(title) + "\">" + Html(text) + "</span>";
    }
    out.push_back(std::move(m));
  }
  return out;
}

// `text` escaped, with its time references linked to the nearest frames (page references to
// the page pictures, for a document read as pages).
std::string TimesHtml(std::string_view content, TimeLinks& links, bool paged = false) {
  std::string out;
  size_t at = 0;
  for (const TextMarkup& m :
       paged ? PageMarkup(content, links.item.frames) : TimeMarkup(content, links)) {
    out += Html(content.substr(at, m.begin - at)) + m.html;
    at = m.end;
  }
  out += Html(content.substr(at));
  return out;
}

// The files of an answer asked over several files, as llm/answers reads them.
std::vector<llm::AnswerFile> FilesOf(const storage::ReportAnswer* answer) {
  std::vector<llm::AnswerFile> files;
  if (answer == nullptr) return files;
  for (const storage::ReportAnswerFile& f : answer->files) {
    files.push_back({f.path, f.kind != "image"});
  }
  return files;
}

bool LooksLikeJson(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

// Cuts `text` at a word boundary before `max_chars` bytes (never inside a UTF-8 sequence).
std::string Cut(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t end = max_chars;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  const size_t space = text.rfind(' ', end);
  if (space != std::string::npos && space > max_chars / 2) end = space;
  return text.substr(0, end) + "\xE2\x80\xA6";  // ...
}

// Where the speech text comes from, and how far to trust it (HTML).
std::string TranscriptNote(const storage::TranscriptRecord& t) {
  std::string out = "Speech: ";
  if (t.backend == "pocketsphinx") {
    out +=
        "transcribed offline with PocketSphinx, English only (weak on noisy or accented "
        "speech)";
  } else {
    out += "transcribed by " + Html(t.model.empty() ? t.backend : t.model) + " (" +
           Html(t.backend) + " server)";
  }
  out += ", " + Count(t.segments) + (t.segments == 1 ? " segment" : " segments");
  if (t.language) out += ", language " + Html(*t.language);
  switch (t.status) {
    case storage::TranscriptStatus::kDone:
      break;
    case storage::TranscriptStatus::kRunning:
      out += "; <strong>not finished</strong> (a run was stopped; the next run goes on)";
      break;
    case storage::TranscriptStatus::kPartial:
      out += "; <strong>" + Count(t.failed_chunks) + " of " + Count(t.chunks) +
             " chunks not transcribed</strong>: " + Html(t.error.value_or(""));
      break;
    case storage::TranscriptStatus::kFailed:
      out += "; <strong>failed</strong>: " + Html(t.error.value_or(""));
      break;
  }
  if (t.note) out += ". " + Html(*t.note);
  return out + ".";
}

}  // namespace

std::vector<const storage::SegmentRecord*> DistinctTimedText(const storage::ReportItem& item) {
  std::vector<const storage::SegmentRecord*> out;
  for (const storage::SegmentRecord& s : item.segments) {
    if (!IsTimedText(s)) continue;
    // The same cue of another stream (a film's subtitles muxed twice, a side-car file beside
    // the embedded track) starts and ends within 50 ms with the same text; segments come in
    // time order, so a duplicate is near its first.
    bool seen = false;
    for (size_t k = out.size(); k-- > 0;) {
      const storage::SegmentRecord& o = *out[k];
      if (s.start_seconds - o.start_seconds > 0.05) break;
      if (o.text == s.text && std::abs(o.end_seconds - s.end_seconds) <= 0.05) {
        seen = true;
        break;
      }
    }
    if (!seen) out.push_back(&s);
  }
  return out;
}

std::optional<AnswerExcerpt> FirstAnswerExcerpt(const storage::ReportItem& item, size_t max_chars) {
  const std::optional<ItemChapters> chapters = FindChapters(item);
  for (const storage::ReportAnswer& a : item.answers) {
    if (chapters && chapters->prompt_id == a.prompt_id) continue;
    if (LooksLikeJson(a.content)) continue;
    std::string text = MarkdownPlainText(a.content);
    if (text.empty()) continue;
    return AnswerExcerpt{a.prompt_id, Cut(text, max_chars)};
  }
  return std::nullopt;
}

llm::ChapterTimeline ItemTimeline(const storage::ReportItem& item) {
  llm::ChapterTimeline timeline;
  // Frames in sample order are in time order (the sampler's contract), so an index into
  // frame_times is an index into item.frames.
  for (const storage::ReportFrame& f : item.frames) timeline.frame_times.push_back(f.time_seconds);
  if (item.row.duration_seconds && *item.row.duration_seconds > 0) {
    timeline.duration_seconds = item.row.duration_seconds;
  }
  return timeline;
}

std::optional<ItemChapters> FindChapters(const storage::ReportItem& item) {
  const llm::ChapterTimeline timeline = ItemTimeline(item);
  std::vector<const storage::ReportAnswer*> order;
  for (const storage::ReportAnswer& a : item.answers) {
    if (a.prompt_id == llm::kChaptersPromptId)
      order.insert(order.begin(), &a);
    else
      order.push_back(&a);
  }
  for (const storage::ReportAnswer* a : order) {
    // Only answers that look like JSON are tried: prose answers are never chapter lists.
    std::string_view content = a->content;
    if (content.find('{') == std::string_view::npos &&
        content.find('[') == std::string_view::npos) {
      continue;
    }
    Result<std::vector<llm::Chapter>> chapters = llm::ValidateChapters(content, timeline);
    if (chapters.ok()) return ItemChapters{a->prompt_id, std::move(chapters).value()};
  }
  return std::nullopt;
}

std::string AnswerHtml(const std::string& content, const storage::ReportItem& item,
                       const storage::ReportAnswer* answer, const ItemPageOptions* options) {
  const llm::ChapterTimeline timeline = ItemTimeline(item);
  TimeLinks links{item, timeline, FilesOf(answer), options, content};
  return TimesHtml(content, links, IsPaged(item));
}

std::string AnswerMarkdownHtml(const std::string& content, const storage::ReportItem& item,
                               const storage::ReportAnswer* answer,
                               const ItemPageOptions* options) {
  const llm::ChapterTimeline timeline = ItemTimeline(item);
  TimeLinks links{item, timeline, FilesOf(answer), options, content};
  const bool paged = IsPaged(item);
  return MarkdownHtml(content, [&](std::string_view text) {
    return paged ? PageMarkup(text, item.frames) : TimeMarkup(text, links);
  });
}

namespace {

// "Asked over: a.mp4, b.mp4, diagram.png": the files of an answer asked over several files, each
// other file linked to its page when it has one in this report.
std::string AskedOver(const storage::ReportItem& item, const storage::ReportAnswer& a,
                      const ItemPageOptions& options) {
  const std::vector<llm::AnswerFile> files = FilesOf(&a);
  std::string out = "<p class=\"asked-over\">Asked over: ";
  for (size_t k = 0; k < files.size(); ++k) {
    const std::string& path = files[k].path;
    const std::string name = Html(llm::AnswerFileName(path));
    std::string title = llm::AnswerFileHeading(files, k) + ": " + path;
    if (k > 0) out += ", ";
    if (path == item.row.path) {
      out += "<span class=\"file this\" title=\"" + Html(title + " (this item)") + "\">" + name +
             "</span>";
      continue;
    }
    const storage::ReportFileItem* other = OtherFile(item, path);
    if (other != nullptr && other->item_id && HasPage(&options, *other->item_id)) {
      out += "<a class=\"file\" href=\"../" + ItemPagePath(*other->item_id) + "\" title=\"" +
             Html(title) + "\">" + name + "</a>";
    } else {
      out += "<span class=\"file missing\" title=\"" + Html(title + " (not in this report)") +
             "\">" + name + "</span>";
    }
  }
  return out + "</p>";
}

// The answers, newest per prompt: each with its prompt and the answer as rendered Markdown.
void AnswersSection(std::string& out, const storage::ReportItem& item,
                    const std::optional<ItemChapters>& chapters, const ItemPageOptions& options) {
  Section(out, "answers", "Answers");
  if (item.answers.empty()) {
    out += Empty("No answers yet: no model has been asked about this item.");
  }
  // Prose first; the answer the chapters come from (JSON, shown as the timeline) last.
  std::vector<const storage::ReportAnswer*> order;
  for (const storage::ReportAnswer& a : item.answers) {
    if (!chapters || chapters->prompt_id != a.prompt_id) order.push_back(&a);
  }
  for (const storage::ReportAnswer& a : item.answers) {
    if (chapters && chapters->prompt_id == a.prompt_id) order.push_back(&a);
  }
  for (const storage::ReportAnswer* answer : order) {
    const storage::ReportAnswer& a = *answer;
    out += "<article class=\"answer\" id=\"answer-" + Html(a.prompt_id) + "\"><h3>" +
           Html(a.prompt_id) + "</h3>";
    if (a.question && !a.question->empty()) {
      out += "<p class=\"question\">Asked: " + Html(*a.question) + "</p>";
    }
    if (a.files.size() > 1) out += AskedOver(item, a, options);
    if (chapters && chapters->prompt_id == a.prompt_id) {
      // The chapters are shown on the timeline over the frames; the JSON only on request.
      out += "<p><a href=\"#chapters\">" + Count(static_cast<int64_t>(chapters->chapters.size())) +
             " chapters</a>, shown on the timeline over the frames.</p><details><summary>The "
             "answer as written</summary><div class=\"content raw\">" +
             Html(a.content) + "</div></details>";
    } else {
      out += "<div class=\"content markdown\">" +
             AnswerMarkdownHtml(a.content, item, &a, &options) + "</div>";
    }
    if (a.reasoning && !a.reasoning->empty()) {
      out += "<details><summary>Reasoning</summary><div class=\"content markdown reasoning\">" +
             AnswerMarkdownHtml(*a.reasoning, item, &a, &options) + "</div></details>";
    }
    std::vector<std::string> meta;
    if (a.model) meta.push_back(Html(*a.model));
    if (a.finish_reason) {
      meta.push_back(*a.finish_reason == "length"
                         ? "<span class=\"warn\">cut at the output limit (length)</span>"
                         : "finish " + Html(*a.finish_reason));
    }
    if (a.completion_tokens) meta.push_back(Count(*a.completion_tokens) + " output tokens");
    if (a.latency_seconds) meta.push_back(Html(Duration(*a.latency_seconds)));
    meta.push_back(Html(a.created_at));
    if (a.earlier_answers > 0) meta.push_back(Count(a.earlier_answers) + " earlier answers");
    out += "<p class=\"meta\">";
    for (size_t i = 0; i < meta.size(); ++i) out += (i ? " &middot; " : "") + meta[i];
    out += "</p></article>\n";
  }
  out += "</section>\n";
}

// A page's text beside its picture, its line breaks kept (CSS pre-line); past kPageTextShown
// bytes the rest folds under "rest of the page", so the sheet stays a sheet.
constexpr size_t kPageTextShown = 600;
std::string PageTextHtml(std::string_view text) {
  if (text.size() <= kPageTextShown + kPageTextShown / 4) {
    return "<span class=\"page-text\">" + Html(text) + "</span>";
  }
  size_t cut = text.rfind(' ', kPageTextShown);
  if (cut == std::string_view::npos || cut < kPageTextShown / 2) cut = kPageTextShown;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return "<span class=\"page-text\">" + Html(text.substr(0, cut)) +
         "</span><details class=\"page-rest\"><summary>rest of the page</summary><span "
         "class=\"page-text\">" +
         Html(text.substr(cut)) + "</span></details>";
}

// What the text section says when every timed text is beside the frames.
std::string TimedTextBesideFrames(const storage::ReportItem& item) {
  if (IsPaged(item)) return "The text of each page is shown beside its picture.";
  bool speech = false, subtitles = false;
  for (const storage::SegmentRecord& s : item.segments) {
    if (!IsTimedText(s)) continue;
    (s.source == storage::kSpeechSource ? speech : subtitles) = true;
  }
  if (speech && subtitles) return "Subtitles and the transcript are shown beside the frames.";
  if (speech) return "The transcript is shown beside the frames.";
  return "Subtitles are shown beside the frames.";
}

// Why there are no chapters, when a chapters answer failed its check; else a line.
void NoChapters(std::string& out, const storage::ReportItem& item,
                const llm::ChapterTimeline& timeline) {
  bool failed = false;
  for (const storage::ReportAnswer& a : item.answers) {
    if (a.prompt_id != llm::kChaptersPromptId) continue;
    Result<std::vector<llm::Chapter>> check = llm::ValidateChapters(a.content, timeline);
    if (!check.ok()) {
      out += "<p class=\"error\">The answer to \"chapters\" is not a usable chapter list: " +
             Html(check.status().message()) + ".</p>";
      failed = true;
    }
  }
  // Answers the model stage refused: they failed their prompt kind's check (the chapters
  // check), also when asked again, and were recorded as failures with the reason.
  for (const storage::ReportRequestFailure& f : item.request_failures) {
    if (f.outcome != kInvalidAnswerOutcome || f.answered_later) continue;
    std::string_view reason = f.error;
    if (reason.starts_with(kAnswerCheckFailed)) reason.remove_prefix(kAnswerCheckFailed.size());
    out += "<p class=\"error\">The answer to \"" + Html(f.prompt_id) +
           "\" could not be used as chapters: " + Html(reason) + ".</p>";
    failed = true;
  }
  // A video not asked for chapters needs no line saying it has none; a page sheet never does.
  if (!failed && timeline.frame_times.empty() && !timeline.duration_seconds) {
    out += Empty("No chapters: the item has no timeline.");
  }
}

// An audio item's timed text in time order (its transcript, and its subtitles if it has any),
// each line with its time, and an anchor an answer's time can link to.
void TranscriptList(std::string& out, const storage::ReportItem& item) {
  const std::vector<const storage::SegmentRecord*> timed = DistinctTimedText(item);
  if (timed.empty()) {
    out += Empty(item.transcript ? "No speech was found in it." : "Not transcribed yet.");
    return;
  }
  out += "<ol class=\"transcript\">";
  for (size_t i = 0; i < timed.size() && i < kMaxTextSegments; ++i) {
    const storage::SegmentRecord& s = *timed[i];
    const bool speech = s.source == storage::kSpeechSource;
    out += "<li id=\"t-" + std::to_string(i) + "\" class=\"sub" + (speech ? " speech" : "") +
           "\" title=\"" +
           Html((speech ? std::string() : s.source + " ") + MediaTime(s.start_seconds) + "-" +
                MediaTime(s.end_seconds)) +
           "\"><span class=\"cue-time\">" + Html(MediaTime(s.start_seconds)) + "</span> " +
           Html(s.text) + "</li>";
  }
  out += "</ol>";
  if (timed.size() > kMaxTextSegments) {
    out += "<p class=\"note\">" + Count(static_cast<int64_t>(timed.size() - kMaxTextSegments)) +
           " more segments are in the database (table segments).</p>";
  }
}

// The storyboard: chapters on a timeline strip and as a list, then the contact sheet with the
// subtitle or transcript cues beside the frame shown when each starts.
void StoryboardSection(std::string& out, const storage::ReportItem& item,
                       const llm::ChapterTimeline& timeline,
                       const std::optional<ItemChapters>& chapters) {
  const bool audio = item.row.kind == "audio";
  Section(out, "frames", IsPaged(item) ? "Pages" : audio ? "Transcript" : "Storyboard");
  const bool paged = IsPaged(item);
  const double span = timeline.duration_seconds.value_or(
      timeline.frame_times.empty() ? 0.0 : timeline.frame_times.back());
  out += "<div id=\"chapters\" class=\"chapters-block\">";
  if (chapters) {
    if (span > 0 && !item.frames.empty()) {
      out += "<div class=\"timeline\" role=\"list\">";
      for (size_t i = 0; i < chapters->chapters.size(); ++i) {
        const llm::Chapter& c = chapters->chapters[i];
        double left = std::clamp(c.start_seconds / span, 0.0, 1.0) * 100;
        double width = std::clamp((c.end_seconds - c.start_seconds) / span, 0.0, 1.0) * 100;
        int64_t index = c.start_frame ? item.frames[*c.start_frame].sample_index : 0;
        out += "<a role=\"listitem\" class=\"chapter c" + std::to_string(i % 6) + "\" href=\"#" +
               Anchor(index) + "\" style=\"left:" + Fixed(left, 3) + "%;width:" + Fixed(width, 3) +
               "%\" title=\"" +
               Html(llm::FormatClockTime(c.start_seconds) + "-" +
                    llm::FormatClockTime(c.end_seconds) + " " + c.title) +
               "\">" + Html(c.title) + "</a>";
      }
      out += "</div>";
    }
    out += "<ol class=\"chapters\">";
    for (size_t i = 0; i < chapters->chapters.size(); ++i) {
      const llm::Chapter& c = chapters->chapters[i];
      out += "<li id=\"chapter-" + std::to_string(i + 1) + "\"><span class=\"swatch c" +
             std::to_string(i % 6) + "\"></span>";
      std::string times =
          llm::FormatClockTime(c.start_seconds) + "-" + llm::FormatClockTime(c.end_seconds);
      if (c.start_frame) {
        out += "<a class=\"t\" href=\"#" + Anchor(item.frames[*c.start_frame].sample_index) +
               "\">" + Html(times) + "</a>";
      } else {
        out += "<span class=\"t\">" + Html(times) + "</span>";
      }
      out += " <strong>" + Html(c.title) + "</strong>";
      if (!c.summary.empty())
        out += " <span class=\"chapter-summary\">" + Html(c.summary) + "</span>";
      out += "</li>";
    }
    out += "</ol><p class=\"note\">Chapters from the answer to <a href=\"#answer-" +
           Html(chapters->prompt_id) + "\">" + Html(chapters->prompt_id) + "</a>.</p>";
  } else if (!paged) {
    NoChapters(out, item, timeline);
  }
  out += "</div>";

  if (audio) {  // sound alone: the timed text is the item, no contact sheet
    TranscriptList(out, item);
    out += "</section>\n";
    return;
  }
  if (item.frames.empty()) {
    out += Empty("No frames.");
    out += "</section>\n";
    return;
  }
  // Cues beside the frame shown when they start (one cue of several identical streams).
  const std::vector<const storage::SegmentRecord*> timed = DistinctTimedText(item);
  std::vector<std::vector<const storage::SegmentRecord*>> cues(item.frames.size());
  for (const storage::SegmentRecord* s : timed) {
    size_t k = 0;
    while (k + 1 < item.frames.size() && item.frames[k + 1].time_seconds <= s->start_seconds) ++k;
    cues[k].push_back(s);
  }
  std::vector<size_t> chapter_at(item.frames.size(), SIZE_MAX);
  if (chapters) {
    for (size_t i = 0; i < chapters->chapters.size(); ++i) {
      const llm::Chapter& c = chapters->chapters[i];
      if (c.start_frame && chapter_at[*c.start_frame] == SIZE_MAX) chapter_at[*c.start_frame] = i;
    }
  }
  // Text beside each frame when cues are many (a third of the frames or more have one), else
  // under the few frames that have one, keeping the sheet dense.
  size_t frames_with_cues = 0;
  for (const auto& c : cues) frames_with_cues += !c.empty();
  const bool beside = !timed.empty() && frames_with_cues * 3 >= item.frames.size();
  out += beside ? "<div class=\"sheet with-text\">" : "<div class=\"sheet\">";
  for (size_t k = 0; k < item.frames.size(); ++k) {
    const storage::ReportFrame& f = item.frames[k];
    if (chapter_at[k] != SIZE_MAX) {
      const llm::Chapter& c = chapters->chapters[chapter_at[k]];
      out += "<h3 class=\"chapter-start c" + std::to_string(chapter_at[k] % 6) + "\">" +
             Html(llm::FormatClockTime(c.start_seconds)) + " " + Html(c.title) + "</h3>";
    }
    auto [w, h] = ThumbSize(f.width, f.height);
    const std::string time = paged ? PageName(f.time_seconds) : MediaTime(f.time_seconds);
    out += "<figure class=\"frame\" id=\"" + Anchor(f.sample_index) + "\"><div class=\"shot\">";
    if (f.thumbnail_hash) {
      out += "<img src=\"../" + ThumbnailPath(*f.thumbnail_hash) + "\" width=\"" +
             std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" alt=\"" +
             (paged ? time : "frame " + std::to_string(f.sample_index) + " at " + time) +
             "\" loading=\"lazy\">";
    } else {
      out += "<div class=\"nothumb\" style=\"aspect-ratio:" + std::to_string(w) + "/" +
             std::to_string(h) + "\">no thumbnail</div>";
    }
    out += "<a class=\"time\" href=\"#" + Anchor(f.sample_index) + "\">" + time + "</a>";
    if (!paged) out += " <span class=\"index\">#" + std::to_string(f.sample_index) + "</span>";
    out += "</div>";
    if (beside || !cues[k].empty()) {
      out += "<figcaption>";
      for (const storage::SegmentRecord* s : cues[k]) {
        const bool speech = s->source == storage::kSpeechSource;
        out += std::string(speech ? "<p class=\"sub speech\" title=\"speech (transcript) "
                                  : "<p class=\"sub\" title=\"") +
               Html((speech ? std::string() : s->source + " ") +
                    (paged ? PageName(s->start_seconds)
                           : MediaTime(s->start_seconds) + "-" + MediaTime(s->end_seconds))) +
               "\"><span class=\"cue-time\">" +
               Html(paged ? PageName(s->start_seconds) : MediaTime(s->start_seconds)) + "</span> " +
               (paged ? PageTextHtml(s->text) : Html(s->text)) + "</p>";
      }
      out += "</figcaption>";
    }
    out += "</figure>";
  }
  out += "</div></section>\n";
}

// Document text, and timed text when there are no frames to put it beside.
void TextSection(std::string& out, const storage::ReportItem& item) {
  Section(out, "text", "Text");
  std::vector<const storage::SegmentRecord*> shown;
  const bool audio = item.row.kind == "audio";  // its timed text is the transcript above
  for (const storage::SegmentRecord& s : item.segments) {
    if (!IsTimedText(s) || (item.frames.empty() && !audio)) shown.push_back(&s);
  }
  if (shown.empty()) {
    out += Empty(item.segments.empty() ? "No text segments."
                 : audio               ? std::string("The transcript is shown above.")
                                       : TimedTextBesideFrames(item));
  } else {
    out +=
        "<table class=\"data text\"><thead><tr><th>source</th><th>where</th><th>text</th>"
        "</tr></thead><tbody>";
    for (size_t i = 0; i < shown.size() && i < kMaxTextSegments; ++i) {
      const storage::SegmentRecord& s = *shown[i];
      std::string where = s.source == "document"
                              ? "chunk " + std::to_string(static_cast<int64_t>(s.start_seconds))
                          : IsDocumentPageSource(s.source)
                              ? PageName(s.start_seconds)
                              : MediaTime(s.start_seconds) + "-" + MediaTime(s.end_seconds);
      out += "<tr><td>" + Html(s.source) + "</td><td>" + Html(where) +
             "</td><td class=\"segment\">" + Html(s.text) + "</td></tr>";
    }
    out += "</tbody></table>";
    if (shown.size() > kMaxTextSegments) {
      out += "<p class=\"note\">" + Count(static_cast<int64_t>(shown.size() - kMaxTextSegments)) +
             " more segments are in the database (table segments).</p>";
    }
  }
  out += "</section>\n";
}

// Tokens and cost, per prompt: the context built, and the answer's usage.
void TokensSection(std::string& out, const storage::ReportItem& item,
                   const storage::ReportColumns& col) {
  Section(out, "tokens", "Tokens and cost");
  std::set<std::string> prompts;
  for (const storage::ReportContext& c : item.contexts) prompts.insert(c.prompt_id);
  for (const storage::ReportAnswer& a : item.answers) prompts.insert(a.prompt_id);
  if (prompts.empty()) {
    out += Empty("No contexts or requests for this item yet.");
    out += "</section>\n";
    return;
  }
  out +=
      "<table class=\"data tokens\"><thead><tr><th>prompt</th><th>text</th><th>image</th>"
      "<th>video</th><th>audio</th><th>context total</th><th>prompt (server)</th>"
      "<th>cached</th><th>output</th><th>latency</th><th>first token</th>"
      "<th>attempts</th><th>cost</th></tr></thead><tbody>";
  int64_t sums[9] = {};
  double cost_sum = 0;
  bool any_cost = false;
  for (const std::string& prompt : prompts) {
    const storage::ReportContext* c = nullptr;
    const storage::ReportAnswer* a = nullptr;
    for (const auto& x : item.contexts)
      if (x.prompt_id == prompt) c = &x;
    for (const auto& x : item.answers)
      if (x.prompt_id == prompt) a = &x;
    int64_t v[9] = {c ? c->text_tokens : 0,
                    c ? c->image_tokens : 0,
                    c ? c->video_tokens : 0,
                    c ? c->audio_tokens : 0,
                    c ? c->total_tokens : 0,
                    a ? a->prompt_tokens.value_or(0) : 0,
                    a ? a->cached_tokens.value_or(0) : 0,
                    a ? a->completion_tokens.value_or(0) : 0,
                    0};
    for (int k = 0; k < 8; ++k) sums[k] += v[k];
    out += "<tr><td>" + Html(prompt) + "</td>";
    for (int k = 0; k < 5; ++k) out += "<td class=\"n\">" + (c ? Count(v[k]) : "-") + "</td>";
    out += "<td class=\"n\">" + (a ? Optional(a->prompt_tokens) : "-") + "</td>";
    out += "<td class=\"n\">" + (a ? Optional(a->cached_tokens) : "-") + "</td>";
    out += "<td class=\"n\">" + (a ? Optional(a->completion_tokens) : "-") + "</td>";
    out += "<td class=\"n\">" + (a && a->latency_seconds ? Duration(*a->latency_seconds) : "-") +
           "</td>";
    out += "<td class=\"n\">" + (a && a->ttft_seconds ? Duration(*a->ttft_seconds) : "-") + "</td>";
    out += "<td class=\"n\">" + (a ? Optional(a->attempts) : "-") + "</td>";
    out += "<td class=\"n\">" + (a && a->cost ? Fixed(*a->cost, 4) : "-") + "</td></tr>";
    if (a && a->cost) {
      cost_sum += *a->cost;
      any_cost = true;
    }
  }
  out += "<tr class=\"total\"><td>total</td>";
  for (int k = 0; k < 8; ++k) out += "<td class=\"n\">" + Count(sums[k]) + "</td>";
  out += "<td></td><td></td><td></td><td class=\"n\">" + (any_cost ? Fixed(cost_sum, 4) : "-") +
         "</td></tr></tbody></table>";
  if (!col.request_cost) {
    out +=
        "<p class=\"note\">No cost recorded: this database has no request costs "
        "(requests.cost comes with the model stage's price settings).</p>";
  }
  out += "</section>\n";
}

void FailuresSection(std::string& out, const storage::ReportItem& item) {
  const storage::ReportItemRow& row = item.row;
  Section(out, "failures", "Failures");
  if (!row.error && item.request_failures.empty()) {
    out += Empty("No failures.");
  } else {
    out += "<ul class=\"failures\">";
    if (row.error) out += "<li><strong>item</strong>: " + Html(*row.error) + "</li>";
    for (const storage::ReportRequestFailure& f : item.request_failures) {
      out += "<li" + std::string(f.answered_later ? " class=\"answered\"" : "") + "><strong>" +
             Html(f.prompt_id) + "</strong> " + Html(f.time) + ": " + Html(f.error) +
             (f.answered_later ? " <em>(answered by a later request)</em>" : "") + "</li>";
    }
    out += "</ul>";
  }
  out += "</section>\n";
}

// The media facts, folded: the file's size, hash and times, and what `reel probe` found.
void MediaSection(std::string& out, const storage::ReportItem& item) {
  const storage::ReportItemRow& row = item.row;
  Section(out, "media", "Media");
  out +=
      "<details class=\"media\"><summary>File, streams and sampling: size, SHA-256, "
      "stream tables, sampler counters</summary>";
  out += "<dl class=\"facts\"><dt>path</dt><dd>" + Html(row.path) + "</dd><dt>kind</dt><dd>" +
         Html(row.kind) + "</dd><dt>status</dt><dd>" + Html(row.status) + "</dd><dt>size</dt><dd>" +
         Count(item.size_bytes) + " bytes</dd><dt>attempts</dt><dd>" + Count(item.attempts) +
         "</dd>";
  if (item.content_hash) {
    out += "<dt>SHA-256</dt><dd><code>" + Html(*item.content_hash) + "</code></dd>";
  }
  if (item.started_at) out += "<dt>started</dt><dd>" + Html(*item.started_at) + "</dd>";
  if (item.finished_at) out += "<dt>finished</dt><dd>" + Html(*item.finished_at) + "</dd>";
  out += "</dl>";
  json facts = item.media_json ? json::parse(*item.media_json, nullptr, false) : json();
  if (facts.is_object() && !facts.empty()) {
    FactsHtml(facts, out, 0);
  } else {
    out += Empty("No media facts recorded.");
  }
  out += "</details></section>\n";
}

}  // namespace

std::string RenderItemPage(const storage::ReportItem& item, const ItemPageOptions& options) {
  const storage::ReportItemRow& row = item.row;
  const llm::ChapterTimeline timeline = ItemTimeline(item);
  const std::optional<ItemChapters> chapters = FindChapters(item);
  std::string out;
  out.reserve(16384 + item.frames.size() * 500);
  const size_t slash = row.path.find_last_of('/');
  const std::string name = slash == std::string::npos ? row.path : row.path.substr(slash + 1);
  const std::string folder = slash == std::string::npos ? "" : row.path.substr(0, slash + 1);
  out +=
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>" +
      Html(name) +
      " - Reel</title><link rel=\"stylesheet\" href=\"../report.css\"></head>\n"
      "<body class=\"item-page\">\n<nav class=\"top\"><a href=\"../index.html\">All items</a>"
      " &middot; job " +
      Html(row.job) + " &middot; item " + std::to_string(row.item_id) + "</nav>\n";
  out += "<header><h1 title=\"" + Html(row.path) + "\">" + Html(name) +
         "</h1><p class=\"summary\"><span class=\"folder\">" + Html(folder) +
         "</span><br><span class=\"status " + Html(row.status) + "\">" + Html(row.status) +
         "</span> " + Html(row.kind);
  if (row.duration_seconds) out += " &middot; " + Html(MediaTime(*row.duration_seconds));
  out += " &middot; " + Count(row.frames) + " frames &middot; " + Count(row.segments) +
         " text segments &middot; " + Count(static_cast<int64_t>(item.answers.size())) + " answers";
  if (chapters) {
    out += " &middot; " + Count(static_cast<int64_t>(chapters->chapters.size())) + " chapters";
  }
  out += "</p>";
  if (item.transcript)
    out += "<p class=\"transcript-note\">" + TranscriptNote(*item.transcript) + "</p>";
  if (row.error) out += "<p class=\"error\">" + Html(*row.error) + "</p>";
  if (row.input_gone) {
    out +=
        "<p class=\"error gone\">The input file is gone (deleted or moved); its results are kept "
        "until <code>reel prune --yes</code> drops them.</p>";
  }
  out +=
      "<p class=\"jump\"><a href=\"#answers\">Answers</a> <a href=\"#frames\">Storyboard</a> "
      "<a href=\"#text\">Text</a> <a href=\"#tokens\">Tokens and cost</a> "
      "<a href=\"#failures\">Failures</a> <a href=\"#media\">Media</a></p></header>\n";
  // What people come for first: the answers, then the chapters over the frames; the facts last.
  AnswersSection(out, item, chapters, options);
  StoryboardSection(out, item, timeline, chapters);
  TextSection(out, item);
  TokensSection(out, item, options.columns);
  FailuresSection(out, item);
  MediaSection(out, item);
  out += "<footer>Written by reel report from " + Html(options.database) + " at " +
         Html(options.generated_at) + ".</footer>\n</body></html>\n";
  return out;
}

}  // namespace reel::jobs::report
