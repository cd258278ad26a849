// Markdown as the report shows it: an answer's CommonMark (GitHub's tables, strikethrough)
// rendered to HTML by cmark-gfm in safe mode, so what the model wrote never becomes markup or
// script; text outside code and links goes through a hook. Pure functions; thread-safe.
// What is dropped or defused: jobs/README.md, "Markdown".
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace reel::jobs::report {

// A range [begin, end) of a run of text to show as `html` instead (which must escape what it
// shows of the text).
struct TextMarkup {
  size_t begin = 0;
  size_t end = 0;
  std::string html;
};
// Returns the ranges of one run of plain text (unescaped: "&" is "&") to mark up, in order and
// not overlapping.
using TextMarkupHook = std::function<std::vector<TextMarkup>(std::string_view text)>;

// `markdown` as an HTML fragment (paragraphs, lists, tables, code, ...). Single line breaks are
// kept (models write lines, not wrapped paragraphs).
std::string MarkdownHtml(std::string_view markdown, const TextMarkupHook& markup);

// The text of `markdown` without its markup (paragraphs, list items and table cells separated by
// a space; raw HTML left out), whitespace runs collapsed to one space: for excerpts and search.
std::string MarkdownPlainText(std::string_view markdown);

}  // namespace reel::jobs::report
