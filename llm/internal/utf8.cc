#include "llm/internal/utf8.h"

namespace reel::llm::internal {
namespace {

// Length of the well-formed sequence at s[i], or 0 with `bad` set to the length of its maximal
// invalid subpart (at least 1).
size_t WellFormedAt(std::string_view s, size_t i, size_t& bad) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  unsigned char b = p[i];
  if (b < 0x80) return 1;
  int need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    need = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    bad = 1;
    return 0;
  }
  size_t j = i + 1;
  for (int k = 0; k < need; ++k, ++j) {
    unsigned char lo_k = k == 0 ? lo : 0x80;
    unsigned char hi_k = k == 0 ? hi : 0xBF;
    if (j >= n || p[j] < lo_k || p[j] > hi_k) {
      bad = j - i;
      return 0;
    }
  }
  return static_cast<size_t>(need) + 1;
}

}  // namespace

size_t ValidUtf8Prefix(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  auto continuation = [&](size_t j) { return (p[j] & 0xC0) == 0x80; };
  size_t i = 0;
  while (i < n) {
    // ASCII runs, sixteen bytes at a time.
    while (i + 16 <= n) {
      uint64_t a, b;
      __builtin_memcpy(&a, p + i, 8);
      __builtin_memcpy(&b, p + i + 8, 8);
      if ((a | b) & 0x8080808080808080ull) break;
      i += 16;
    }
    if (i >= n) break;
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
    } else if (c >= 0xC2 && c <= 0xDF) {
      if (i + 1 >= n || !continuation(i + 1)) return i;
      i += 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      if (i + 2 >= n) return i;
      const unsigned char c1 = p[i + 1];
      const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
      if (c1 < lo || c1 > hi || !continuation(i + 2)) return i;
      i += 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      if (i + 3 >= n) return i;
      const unsigned char c1 = p[i + 1];
      const unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
      if (c1 < lo || c1 > hi || !continuation(i + 2) || !continuation(i + 3)) return i;
      i += 4;
    } else {
      return i;
    }
  }
  return n;
}

std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    size_t bad = 0;
    size_t len = WellFormedAt(s, i, bad);
    if (len > 0) {
      out.append(s.data() + i, len);
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      i += bad;
    }
  }
  return out;
}

size_t CodePointCount(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace reel::llm::internal
