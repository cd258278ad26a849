// The storyboard page of one item (written to items/<id>.html; every link is relative to it):
// media facts, chapters as a timeline over the frames and as a list, each prompt's newest answer
// with its time references as links to the frames, the frames as a contact sheet with their
// times and the subtitle cues that start beside each, document text, the token breakdown and
// cost, and failures. Sections with nothing to show say so in a line.
//
// Chapters come from the answer to the prompt "chapters" when it passes llm::ValidateChapters,
// else from the first answer (by prompt id) that does; a "chapters" answer that fails the check
// shows why. Pure rendering: no I/O, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llm/chapters.h"
#include "storage/report_data.h"

namespace reel::jobs::report {

struct ItemPageOptions {
  std::string generated_at;  // shown in the footer
  std::string database;      // the database's file name, for the footer
  storage::ReportColumns columns;
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
std::string AnswerHtml(const std::string& content, const storage::ReportItem& item);

std::string RenderItemPage(const storage::ReportItem& item, const ItemPageOptions& options);

}  // namespace reel::jobs::report
