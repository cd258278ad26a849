#include "base/utf8.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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

#if defined(__x86_64__) && defined(__GNUC__)
// Keiser and Lemire, "Validating UTF-8 in less than one instruction per byte" (Software:
// Practice and Experience, 2021), with AVX2: every pair of consecutive bytes is classified by
// three 16-entry lookups (high and low half of the first byte, high half of the second) into
// sets of the errors it could be part of; their intersection is empty for a valid pair. Whether
// a continuation byte is due because of a 3- or 4-byte lead two or three bytes back is checked
// apart. 32 bytes per step, no branch on the data.
enum : uint8_t {
  kTooShort = 1,       // a lead not followed by a continuation
  kTooLong = 2,        // a continuation after ASCII
  kOverlong3 = 4,      // E0 80-9F
  kTooLarge = 8,       // F4 90-BF, F5-FF
  kSurrogate = 16,     // ED A0-BF
  kOverlong2 = 32,     // C0-C1
  kTooLarge1000 = 64,  // F5-FF 80-8F; also F0 80-8F (overlong 4)
  kTwoConts = 128,     // a continuation after a continuation (valid only when due)
};
constexpr uint8_t kCarry = kTooShort | kTooLong | kTwoConts;  // (decided by the high halves)
alignas(32) constexpr uint8_t kFirstHigh[32] = {kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,  // 0-7: ASCII
                                                kTwoConts,
                                                kTwoConts,
                                                kTwoConts,
                                                kTwoConts,  // 8-B
                                                kTooShort | kOverlong2,
                                                kTooShort,
                                                kTooShort | kOverlong3 | kSurrogate,    // C, D, E
                                                kTooShort | kTooLarge | kTooLarge1000,  // F
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTooLong,
                                                kTwoConts,
                                                kTwoConts,
                                                kTwoConts,
                                                kTwoConts,
                                                kTooShort | kOverlong2,
                                                kTooShort,
                                                kTooShort | kOverlong3 | kSurrogate,
                                                kTooShort | kTooLarge | kTooLarge1000};
constexpr uint8_t kBig = kCarry | kTooLarge | kTooLarge1000;
alignas(32) constexpr uint8_t kFirstLow[32] = {kCarry | kOverlong3 | kOverlong2 | kTooLarge1000,
                                               kCarry | kOverlong2,
                                               kCarry,
                                               kCarry,
                                               kCarry | kTooLarge,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig | kSurrogate,
                                               kBig,
                                               kBig,
                                               kCarry | kOverlong3 | kOverlong2 | kTooLarge1000,
                                               kCarry | kOverlong2,
                                               kCarry,
                                               kCarry,
                                               kCarry | kTooLarge,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig,
                                               kBig | kSurrogate,
                                               kBig,
                                               kBig};
constexpr uint8_t kCont = kTooLong | kOverlong2 | kTwoConts;
alignas(32) constexpr uint8_t kSecondHigh[32] = {kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kCont | kOverlong3 | kTooLarge1000,
                                                 kCont | kOverlong3 | kTooLarge,
                                                 kCont | kSurrogate | kTooLarge,
                                                 kCont | kSurrogate | kTooLarge,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kCont | kOverlong3 | kTooLarge1000,
                                                 kCont | kOverlong3 | kTooLarge,
                                                 kCont | kSurrogate | kTooLarge,
                                                 kCont | kSurrogate | kTooLarge,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort,
                                                 kTooShort};

#define REEL_AVX2 __attribute__((target("avx2")))

REEL_AVX2 inline __m256i Table(const uint8_t* t) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(t));
}
// The block's bytes shifted right by `k` bytes, the last k of `previous` coming in.
template <int k>
REEL_AVX2 inline __m256i Earlier(__m256i block, __m256i previous) {
  return _mm256_alignr_epi8(block, _mm256_permute2x128_si256(previous, block, 0x21), 16 - k);
}

// Checks whole 32-byte blocks of p[0, n) and sets `checked` to the bytes they cover. False when
// an error was found in them; true says nothing about a sequence cut by the end of the last
// block (the caller checks from the start of the last character on).
REEL_AVX2 bool ValidBlocksAvx2(const unsigned char* p, size_t n, size_t& checked) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i first_high = Table(kFirstHigh), first_low = Table(kFirstLow),
                second_high = Table(kSecondHigh);
  // A block's last three bytes that start a sequence longer than what is left of it.
  alignas(32) static constexpr uint8_t kCut[32] = {
      255, 255, 255, 255, 255, 255, 255, 255,      255,      255,     255,
      255, 255, 255, 255, 255, 255, 255, 255,      255,      255,     255,
      255, 255, 255, 255, 255, 255, 255, 0xF0 - 1, 0xE0 - 1, 0xC0 - 1};
  const __m256i cut = Table(kCut);
  __m256i error = _mm256_setzero_si256(), previous = _mm256_setzero_si256();
  __m256i previous_cut = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i block = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    if (_mm256_movemask_epi8(block) == 0) {  // ASCII: it cannot finish a cut sequence
      error = _mm256_or_si256(error, previous_cut);
      previous_cut = _mm256_setzero_si256();
      previous = block;
      continue;
    }
    const __m256i prev1 = Earlier<1>(block, previous);
    const __m256i classes = _mm256_and_si256(
        _mm256_and_si256(
            _mm256_shuffle_epi8(first_high, _mm256_and_si256(_mm256_srli_epi16(prev1, 4), low4)),
            _mm256_shuffle_epi8(first_low, _mm256_and_si256(prev1, low4))),
        _mm256_shuffle_epi8(second_high, _mm256_and_si256(_mm256_srli_epi16(block, 4), low4)));
    // A continuation is due where the byte two back is a 3- or 4-byte lead (>= E0) or the byte
    // three back a 4-byte lead (>= F0): bit 7 then, which must match kTwoConts exactly.
    const __m256i due = _mm256_and_si256(
        _mm256_or_si256(_mm256_subs_epu8(Earlier<2>(block, previous), _mm256_set1_epi8(0x60)),
                        _mm256_subs_epu8(Earlier<3>(block, previous), _mm256_set1_epi8(0x70))),
        _mm256_set1_epi8(static_cast<char>(0x80)));
    error = _mm256_or_si256(error, _mm256_xor_si256(due, classes));
    previous_cut = _mm256_subs_epu8(block, cut);
    previous = block;
  }
  checked = i;
  return _mm256_testz_si256(error, error) != 0;
}
#undef REEL_AVX2
#endif

// Length of the longest valid UTF-8 prefix of p[0, n), one character at a time.
size_t ValidPrefixScalar(const unsigned char* p, size_t n) {
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

size_t ValidUtf8Prefix(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2 && n >= 32) {
    size_t checked = 0;
    if (ValidBlocksAvx2(p, n, checked)) {
      // The blocks are valid up to a character cut by their end: check from its start on
      // (a character starting 4 or more bytes before `checked` ended within the blocks).
      size_t j = checked >= 3 ? checked - 3 : 0;
      while (j < checked && (p[j] & 0xC0) == 0x80) ++j;
      return j + ValidPrefixScalar(p + j, n - j);
    }
    // Invalid somewhere: find where.
  }
#endif
  return ValidPrefixScalar(p, n);
}

bool IsValidUtf8(std::string_view bytes) { return ValidUtf8Prefix(bytes) == bytes.size(); }

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
