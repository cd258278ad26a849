// Small text helpers the document readers share.
#pragma once

#include <string>
#include <string_view>

namespace reel::pipeline::documents {

// A page's text made tidy: valid UTF-8 (bad bytes replaced), no form feeds or carriage returns,
// no spaces at line ends, at most one blank line in a row, none at the start, and a final '\n'
// unless empty.
std::string NormalizePageText(std::string_view text);

// Code points that are not white space.
int CountNonSpace(std::string_view text);

// "%20" -> " " (invalid escapes kept as they are).
std::string PercentDecode(std::string_view text);

// Lower-case ASCII copy.
std::string AsciiLower(std::string_view text);

}  // namespace reel::pipeline::documents
