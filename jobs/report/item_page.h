// The storyboard page of one item (items/<id>.html; links relative to it): the newest answers,
// the storyboard, document text, tokens and cost, failures, media facts. Chapters come from the
// "chapters" answer when it passes llm::ValidateChapters, else the first answer that does. An
// answer asked over several files links each time to the file it names
// (llm/answers/answer_files.h). Pure rendering: no I/O, thread-safe. The sections: jobs/README.md,
// "Item page".
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llm/answers/chapters.h"
#include "storage/report_data.h"

namespace reel::jobs::report {

struct ItemPageOptions {
  std::string generated_at;  // shown in the footer
  std::string database;      // the database's file name, for the footer
  storage::ReportColumns columns;
  // The items that have a page in this report (`reel report --item`); nullopt: every item of the
  // report's job, so every other file an answer was asked over (an item of the same job).
  std::optional<std::set<int64_t>> pages;
};

struct ItemChapters {
  std::string prompt_id;
  std::vector<llm::Chapter> chapters;
};

// The item's timeline for chapters and time links: frame times and the duration (or nullopt).
llm::ChapterTimeline ItemTimeline(const storage::ReportItem& item);

std::optional<ItemChapters> FindChapters(const storage::ReportItem& item);

// An answer's text, escaped, with every time reference that falls inside the item as a link to
// its nearest frame (<a class="t" href="#f12" ...>), the others as <span class="t outside">.
// With `answer` asked over several files (ReportAnswer::files), a time refers to the file named
// before it (llm/answers/answer_files.h): the item's own links on this page, another file's to
// its nearest frame on that file's page (<a class="t other-file" href="../items/7.html#f3">),
// or is a <span class="t outside"> whose title says why (the file is not in this report, has
// no page in it (`options`' pages), or the time is past its end).
std::string AnswerHtml(const std::string& content, const storage::ReportItem& item,
                       const storage::ReportAnswer* answer = nullptr,
                       const ItemPageOptions* options = nullptr);

// An answer's Markdown as safe HTML (markdown.h), its times linked as AnswerHtml does (times in
// code and inside links stay text).
std::string AnswerMarkdownHtml(const std::string& content, const storage::ReportItem& item,
                               const storage::ReportAnswer* answer = nullptr,
                               const ItemPageOptions* options = nullptr);

// The item's subtitle and transcript segments (not document text) in time order, a cue that
// another stream repeats (same text, start and end within 50 ms) once.
std::vector<const storage::SegmentRecord*> DistinctTimedText(const storage::ReportItem& item);

// The first answer (by prompt id) that is prose, not the chapters' JSON, as plain text cut at a
// word boundary to at most `max_chars` bytes (and an ellipsis); nullopt when there is none.
struct AnswerExcerpt {
  std::string prompt_id;
  std::string text;
};
std::optional<AnswerExcerpt> FirstAnswerExcerpt(const storage::ReportItem& item, size_t max_chars);

std::string RenderItemPage(const storage::ReportItem& item, const ItemPageOptions& options);

}  // namespace reel::jobs::report
