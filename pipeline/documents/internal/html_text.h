// The readable text of an HTML or XHTML page (web pages, EPUB chapters): headings as "# " lines,
// list items as "- " or "1. " lines, table rows as cells joined by " | ", paragraphs separated by
// a blank line; scripts, styles, forms' controls and navigation (<nav>, role="navigation",
// hidden elements) left out.
#pragma once

#include <string>
#include <vector>

#include "pipeline/documents/internal/xml.h"

namespace reel::pipeline::documents {

struct HtmlImage {
  std::string src;  // as written
  std::string alt;
};

struct HtmlContent {
  std::string title;          // <title>
  std::string first_heading;  // the first <h1>..<h6>
  std::string text;
  std::vector<HtmlImage> images;
};

HtmlContent ExtractHtml(xmlDoc* doc);

// Whether `src` names a local file (no scheme other than file:, not data:).
bool IsLocalReference(const std::string& src);

}  // namespace reel::pipeline::documents
