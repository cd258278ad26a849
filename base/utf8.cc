#include "base/utf8.h"

#include <cstring>

namespace reel {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The first position at or after `pos` whose byte is not ASCII (or bytes.size()).
size_t SkipAscii(std::string_view bytes, size_t pos) {
  const size_t n = bytes.size();
  // Eight bytes at a time: most text is ASCII.
  while (pos + 8 <= n) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + pos, sizeof(word));
    if ((word & 0x8080808080808080ull) != 0) break;
    pos += 8;
  }
  while (pos < n && static_cast<unsigned char>(bytes[pos]) < 0x80) ++pos;
  return pos;
}

}  // namespace

size_t Utf8SequenceLength(std::string_view bytes, size_t pos, size_t* ill_formed) {
  const size_t n = bytes.size();
  auto byte = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  // Table 3-7: the length and the allowed range of the second byte for each lead byte.
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead == 0xE0) {
    length = 3, low = 0xA0;
  } else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) {
    length = 3;
  } else if (lead == 0xED) {
    length = 3, high = 0x9F;
  } else if (lead == 0xF0) {
    length = 4, low = 0x90;
  } else if (lead >= 0xF1 && lead <= 0xF3) {
    length = 4;
  } else if (lead == 0xF4) {
    length = 4, high = 0x8F;
  }
  size_t good = length == 0 ? 0 : 1;  // bytes of the sequence that fit so far
  while (good > 0 && good < length && pos + good < n) {
    const unsigned char next = byte(pos + good);
    const bool fits = good == 1 ? (next >= low && next <= high) : (next >= 0x80 && next <= 0xBF);
    if (!fits) break;
    ++good;
  }
  if (length > 0 && good == length) return length;
  if (ill_formed != nullptr) *ill_formed = good == 0 ? 1 : good;
  return 0;
}

bool IsValidUtf8(std::string_view bytes) {
  size_t pos = 0;
  while (true) {
    pos = SkipAscii(bytes, pos);
    if (pos >= bytes.size()) return true;
    const size_t length = Utf8SequenceLength(bytes, pos);
    if (length == 0) return false;
    pos += length;
  }
}

void AppendUtf8(char32_t cp, std::string& out) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string ReplaceInvalidUtf8(std::string_view bytes, size_t* replaced) {
  std::string out;
  out.reserve(bytes.size());
  size_t count = 0;
  size_t pos = 0;
  while (pos < bytes.size()) {
    const size_t ascii_end = SkipAscii(bytes, pos);
    out.append(bytes.substr(pos, ascii_end - pos));
    pos = ascii_end;
    if (pos >= bytes.size()) break;
    size_t bad = 0;
    const size_t length = Utf8SequenceLength(bytes, pos, &bad);
    if (length > 0) {
      out.append(bytes.substr(pos, length));
      pos += length;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++count;
      pos += bad;
    }
  }
  if (replaced != nullptr) *replaced = count;
  return out;
}

std::string EscapeInvalidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  // Whether the output for the byte at `pos` starts with '\' or 'x' (then a backslash just
  // before it must be doubled to stay unambiguous).
  auto next_reads_as_escape = [&](size_t pos) {
    if (pos >= bytes.size()) return false;
    const char c = bytes[pos];
    return c == '\\' || c == 'x' || Utf8SequenceLength(bytes, pos) == 0;
  };
  size_t pos = 0;
  while (pos < bytes.size()) {
    const char c = bytes[pos];
    if (c == '\\') {
      out += next_reads_as_escape(pos + 1) ? "\\\\" : "\\";
      ++pos;
      continue;
    }
    const size_t length = Utf8SequenceLength(bytes, pos);
    if (length == 0) {
      const auto b = static_cast<unsigned char>(c);
      out += '\\';
      out += 'x';
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
      ++pos;
    } else {
      out.append(bytes.substr(pos, length));
      pos += length;
    }
  }
  return out;
}

std::string UnescapeInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    if (c == '\\' && pos + 1 < text.size()) {
      if (text[pos + 1] == '\\') {
        out += '\\';
        pos += 2;
        continue;
      }
      if (text[pos + 1] == 'x' && pos + 3 < text.size()) {
        const int high = HexValue(text[pos + 2]);
        const int low = HexValue(text[pos + 3]);
        if (high >= 0 && low >= 0) {
          out += static_cast<char>(high * 16 + low);
          pos += 4;
          continue;
        }
      }
    }
    out += c;
    ++pos;
  }
  return out;
}

std::string SafeUtf8(std::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  return EscapeInvalidUtf8(text);
}

}  // namespace reel
