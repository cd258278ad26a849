#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {

size_t CodePointCount(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace reel::llm::internal
