// Builds readable text from a walk over markup: inline text has its white space collapsed,
// block ends become line ends, paragraphs are separated by one blank line, and a line can carry
// a prefix ("# " for a heading, "- " for a list item).
#pragma once

#include <string>
#include <string_view>

namespace reel::pipeline::documents {

class TextBuilder {
 public:
  // Inline text: runs of white space become one space.
  void Text(std::string_view text);
  // Preformatted text: spaces kept, '\n' ends lines.
  void Preformatted(std::string_view text);
  // Appends `separator` to the current line if it has text (table cells: " | ").
  void Separator(std::string_view separator);
  void LineBreak();
  void ParagraphBreak();
  // The prefix of the line being built (ends the current line first if it has text).
  void LinePrefix(std::string prefix);
  bool LineEmpty() const { return line_.empty(); }
  // The text so far (the current line ended).
  std::string Take();

 private:
  std::string out_;
  std::string line_;
  std::string prefix_;
  bool pending_space_ = false;
  bool blank_pending_ = false;
};

}  // namespace reel::pipeline::documents
