#include "llm/client/utf8_text.h"

#include "base/utf8.h"

namespace reel::llm {

std::string SanitizedUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const char c = bytes[i];
    if (static_cast<unsigned char>(c) < 0x80) {
      out.push_back(c < 0x20 && c != '\t' && c != '\n' ? ' ' : c);
      ++i;
      continue;
    }
    // Well-formedness is base/utf8.h's; what is not well-formed is replaced a byte at a time.
    const size_t length = Utf8SequenceLength(bytes, i);
    if (length > 0) {
      out.append(bytes.substr(i, length));
      i += length;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

}  // namespace reel::llm
