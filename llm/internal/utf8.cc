#include "llm/internal/utf8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

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
