#include "base/terminal_text.h"

#include <unistd.h>

#include "base/utf8.h"

namespace reel {
namespace {

constexpr char kEscapeHex[] = "0123456789ABCDEF";

// The length of the sequence at `pos` to escape (0: keep it), given its well-formed length
// (0 for an ill-formed byte).
size_t EscapedLength(std::string_view text, size_t pos, size_t length) {
  const unsigned char c = static_cast<unsigned char>(text[pos]);
  if (length == 0) return 1;
  if (length == 1) {
    if (c == '\t' || c == '\n') return 0;
    if (c == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n') return 0;
    return c < 0x20 || c == 0x7F ? 1 : 0;
  }
  // U+0080-U+009F: C2 80 .. C2 9F.
  if (length == 2 && c == 0xC2 && static_cast<unsigned char>(text[pos + 1]) <= 0x9F) return 2;
  return 0;
}

}  // namespace

std::string EscapeControlCharacters(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t length = Utf8SequenceLength(text, pos);
    const size_t escaped = EscapedLength(text, pos, length);
    if (escaped == 0) {
      out.append(text.substr(pos, length));
      pos += length;
      continue;
    }
    for (size_t i = 0; i < escaped; ++i) {
      const unsigned char c = static_cast<unsigned char>(text[pos + i]);
      out += "\\x";
      out += kEscapeHex[c >> 4];
      out += kEscapeHex[c & 15];
    }
    pos += escaped;
  }
  return out;
}

bool HasControlCharacters(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t length = Utf8SequenceLength(text, pos);
    if (EscapedLength(text, pos, length) != 0) return true;
    pos += length;
  }
  return false;
}

bool IsTerminal(std::FILE* stream) { return stream != nullptr && isatty(fileno(stream)) == 1; }

void WriteText(std::FILE* stream, std::string_view text, bool escape) {
  if (escape && HasControlCharacters(text)) {
    const std::string shown = EscapeControlCharacters(text);
    std::fwrite(shown.data(), 1, shown.size(), stream);
  } else {
    std::fwrite(text.data(), 1, text.size(), stream);
  }
}

}  // namespace reel
