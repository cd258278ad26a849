#include "pipeline/documents/internal/text_util.h"

#include "base/utf8.h"

namespace reel::pipeline::documents {

std::string NormalizePageText(std::string_view text) {
  const std::string valid = ReplaceInvalidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  std::string line;
  int blank_lines = 0;
  auto end_line = [&] {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    if (line.empty()) {
      ++blank_lines;
    } else {
      if (!out.empty() && blank_lines > 0) out += '\n';
      out += line;
      out += '\n';
      blank_lines = 0;
    }
    line.clear();
  };
  for (char c : valid) {
    if (c == '\n') {
      end_line();
    } else if (c == '\f' || c == '\r' || c == '\v') {
      if (c != '\r') end_line();
    } else {
      line += c;
    }
  }
  end_line();
  return out;
}

int CountNonSpace(std::string_view text) {
  int count = 0;
  for (unsigned char c : text) {
    // Count code points: skip UTF-8 continuation bytes; ASCII white space does not count.
    if ((c & 0xC0) == 0x80) continue;
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') continue;
    ++count;
  }
  return count;
}

namespace {
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace reel::pipeline::documents
