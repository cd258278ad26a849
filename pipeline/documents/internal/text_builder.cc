#include "pipeline/documents/internal/text_builder.h"

namespace reel::pipeline::documents {
namespace {
bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f'; }
}  // namespace

void TextBuilder::Text(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (IsSpace(c)) {
      pending_space_ = !line_.empty();
      continue;
    }
    // U+00A0 (no-break space) counts as a space too.
    if (static_cast<unsigned char>(c) == 0xC2 && i + 1 < text.size() &&
        static_cast<unsigned char>(text[i + 1]) == 0xA0) {
      pending_space_ = !line_.empty();
      ++i;
      continue;
    }
    if (pending_space_ && line_.back() != ' ') line_ += ' ';
    pending_space_ = false;
    line_ += c;
  }
}

void TextBuilder::Preformatted(std::string_view text) {
  for (char c : text) {
    if (c == '\n') {
      if (line_.empty()) {
        blank_pending_ = true;  // an empty line of a code block: a blank line
      } else {
        LineBreak();
      }
    } else if (c != '\r') {
      if (pending_space_) line_ += ' ';
      pending_space_ = false;
      line_ += c;
    }
  }
}

void TextBuilder::Separator(std::string_view separator) {
  if (line_.empty()) return;
  line_ += separator;
  pending_space_ = false;
}

void TextBuilder::LineBreak() {
  pending_space_ = false;
  while (!line_.empty() && line_.back() == ' ') line_.pop_back();
  if (line_.empty()) return;
  if (blank_pending_ && !out_.empty()) out_ += '\n';
  out_ += prefix_;
  out_ += line_;
  out_ += '\n';
  line_.clear();
  prefix_.clear();
  blank_pending_ = false;
}

void TextBuilder::ParagraphBreak() {
  LineBreak();
  blank_pending_ = true;
}

void TextBuilder::LinePrefix(std::string prefix) {
  LineBreak();
  prefix_ = std::move(prefix);
}

std::string TextBuilder::Take() {
  LineBreak();
  std::string out = std::move(out_);
  out_.clear();
  blank_pending_ = false;
  return out;
}

}  // namespace reel::pipeline::documents
