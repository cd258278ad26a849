// UTF-8 helpers for the tokenizer. Text inside the tokenizer is always valid UTF-8 (Encode
// repairs its input first, see ToValidUtf8), so the decoders here trust their input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/utf8.h"

namespace reel::llm::internal {

// Decodes the code point starting at s[i] of valid UTF-8 and advances i past it.
inline uint32_t NextCodePoint(std::string_view s, size_t& i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + i;
  uint32_t c = p[0];
  if (c < 0x80) {
    i += 1;
    return c;
  }
  if (c < 0xE0) {
    i += 2;
    return ((c & 0x1F) << 6) | (p[1] & 0x3F);
  }
  if (c < 0xF0) {
    i += 3;
    return ((c & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F);
  }
  i += 4;
  return ((c & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F);
}

// Decodes the code point that ends just before s[i] and moves i back to its first byte.
inline uint32_t PrevCodePoint(std::string_view s, size_t& i) {
  size_t j = i - 1;
  while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) --j;
  size_t k = j;
  uint32_t c = NextCodePoint(s, k);
  i = j;
  return c;
}

// Bytes of the UTF-8 sequence that starts with `lead`.
inline int SequenceLength(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

inline void AppendUtf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

inline int Utf8Length(uint32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

// The repair and the validator are base/utf8.h's (one behaviour: maximal subparts, as Hugging
// Face's Rust code and the WHATWG decoder do); these names keep the tokenizer's spelling.
inline size_t ValidUtf8Prefix(std::string_view s) { return ::reel::ValidUtf8Prefix(s); }
inline std::string ToValidUtf8(std::string_view s) { return ::reel::ReplaceInvalidUtf8(s); }

// Number of code points in valid UTF-8.
size_t CodePointCount(std::string_view s);

}  // namespace reel::llm::internal
