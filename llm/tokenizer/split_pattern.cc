#include "llm/tokenizer/split_pattern.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "llm/tokenizer/regex.h"
#include "llm/tokenizer/unicode.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {

const char kGpt2Pattern[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// ---------------------------------------------------------------------------------------------
// Character classes of the known patterns, as bits. The first eight come from the general
// category (the per-code-point table holds one byte); the rest are set for ASCII bytes only.
enum : uint32_t {
  kL = 1,     // \p{L}
  kN = 2,     // \p{N}
  kS = 4,     // Oniguruma's \s
  kU = 8,     // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
  kW = 16,    // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
  kP = 32,    // \p{P}
  kSym = 64,  // \p{S}
  kM = 128,   // \p{M}
  kCr = 256,  // [\r\n]
  kSlash = 512,
  kMulti = 1024,       // (byte table only) not ASCII: decode the character
  kAsciiPunct = 2048,  // [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]
  kAsciiAlpha = 4096,  // [A-Za-z]
};

// The classes of every byte that is a whole character (ASCII), and of every code point, in a
// table with the general-category table's first stage: one load more than ASCII for the rest.
struct ClassTables {
  std::array<uint16_t, 256> byte{};
  std::vector<uint8_t> stage2;
  const uint16_t* stage1;
  int shift;
  uint32_t low_mask;

  ClassTables() {
    std::array<uint8_t, kGeneralCategoryCount> by_category{};
    for (int g = 0; g < kGeneralCategoryCount; ++g) {
      uint32_t bit = 1u << g;
      uint32_t f = 0;
      if (bit & kLetterMask) f |= kL;
      if (bit & kNumberMask) f |= kN;
      if (bit & kSeparatorMask) f |= kS;
      if (bit & (CategoryBit(G::kLu) | CategoryBit(G::kLt) | CategoryBit(G::kLm) |
                 CategoryBit(G::kLo) | kMarkMask)) {
        f |= kU;
      }
      if (bit & (CategoryBit(G::kLl) | CategoryBit(G::kLm) | CategoryBit(G::kLo) | kMarkMask)) {
        f |= kW;
      }
      if (bit & kPunctuationMask) f |= kP;
      if (bit & kSymbolMask) f |= kSym;
      if (bit & kMarkMask) f |= kM;
      by_category[static_cast<size_t>(g)] = static_cast<uint8_t>(f);
    }
    const CategoryTable gc = GeneralCategoryTable();
    stage1 = gc.stage1;
    shift = gc.shift;
    low_mask = (1u << shift) - 1;
    stage2.resize(gc.stage2_size);
    for (size_t i = 0; i < gc.stage2_size; ++i) stage2[i] = by_category[gc.stage2[i]];
    for (uint32_t c = 0; c < 256; ++c) {
      uint32_t f = c < 0x80 ? Of(c) : kMulti;
      if ((c >= 0x09 && c <= 0x0D)) f |= kS;
      if (c == '\r' || c == '\n') f |= kCr;
      if (c == '/') f |= kSlash;
      if ((c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
          (c >= '{' && c <= '~')) {
        f |= kAsciiPunct;
      }
      if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) f |= kAsciiAlpha;
      byte[c] = static_cast<uint16_t>(f);
    }
  }
  // The classes of a code point above ASCII.
  uint32_t Of(uint32_t cp) const {
    uint32_t f = stage2[(static_cast<uint32_t>(stage1[cp >> shift]) << shift) | (cp & low_mask)];
    return cp == 0x85 ? f | kS : f;
  }
};

const ClassTables& Classes() {
  static const ClassTables tables;
  return tables;
}

// The classes of the character at `pos` (< text.size()), and its length in bytes.
struct CharInfo {
  uint32_t flags;
  uint32_t len;
};

// Everything here runs once or more per character of the text: kept inline, with ASCII first.
#define REEL_HOT inline __attribute__((always_inline))

class PatternScanner {
 public:
  explicit PatternScanner(std::string_view t) : t_(t), classes_(Classes()) {}

  size_t size() const { return t_.size(); }
  std::string_view text() const { return t_; }
  REEL_HOT bool IsByte(size_t pos, char b) const { return pos < t_.size() && t_[pos] == b; }

  REEL_HOT CharInfo At(size_t pos) const {
    auto b = static_cast<unsigned char>(t_[pos]);
    uint32_t f = classes_.byte[b];
    if (!(f & kMulti)) [[likely]] {
      return {f, 1};
    }
    size_t i = pos;
    uint32_t cp = NextCodePoint(t_, i);
    return {classes_.Of(cp), static_cast<uint32_t>(i - pos)};
  }
  // Flags of the character at pos, or 0 at the end.
  REEL_HOT uint32_t FlagsAt(size_t pos) const { return pos < t_.size() ? At(pos).flags : 0; }

  // End of the run of characters whose flags contain any of `any` and none of `none`.
  REEL_HOT size_t RunEnd(size_t pos, uint32_t any, uint32_t none = 0) const {
    while (pos < t_.size()) {
      CharInfo c = At(pos);
      if (!(c.flags & any) || (c.flags & none)) break;
      pos += c.len;
    }
    return pos;
  }
  // End of the run of characters with none of the flags in `none` (e.g. [^\s\p{L}\p{N}]).
  REEL_HOT size_t RunEndNot(size_t pos, uint32_t none) const {
    while (pos < t_.size()) {
      CharInfo c = At(pos);
      if (c.flags & none) break;
      pos += c.len;
    }
    return pos;
  }

  // (?i:'s|'t|'re|'ve|'m|'ll|'d) at pos: the end of the match, or pos. Case folding as
  // Oniguruma does it: s also matches U+017F (long s).
  REEL_HOT size_t Contraction(size_t pos, bool ignore_case) const {
    if (pos >= t_.size() || t_[pos] != '\'') return pos;
    size_t i = pos + 1;
    if (i >= t_.size()) return pos;
    size_t j = i;
    uint32_t a = NextCodePoint(t_, j);
    auto is = [&](uint32_t c, char lower) {
      if (c == static_cast<uint32_t>(lower)) return true;
      if (!ignore_case) return false;
      if (c == static_cast<uint32_t>(lower - 32)) return true;
      return lower == 's' && c == 0x17F;
    };
    if (is(a, 's') || is(a, 't')) return j;
    uint32_t b = 0;
    size_t k = j;
    if (j < t_.size()) b = NextCodePoint(t_, k);
    if ((is(a, 'r') || is(a, 'v')) && is(b, 'e')) return k;
    if (is(a, 'm')) return j;
    if (is(a, 'l') && is(b, 'l')) return k;
    if (is(a, 'd')) return j;
    return pos;
  }

  // \s*[\r\n]+ | \s+(?!\S) | \s+ at pos, whose character is in \s.
  REEL_HOT size_t Whitespace(size_t pos, bool newline_branch) const {
    size_t e = pos;
    size_t last_char = pos;
    size_t after_last_newline = 0;
    while (e < t_.size()) {
      CharInfo c = At(e);
      if (!(c.flags & kS)) break;
      last_char = e;
      e += c.len;
      if (c.flags & kCr) after_last_newline = e;
    }
    if (newline_branch && after_last_newline != 0) return after_last_newline;
    if (e == t_.size()) return e;           // \s+(?!\S) at the end of the text
    if (last_char > pos) return last_char;  // \s+(?!\S): all but the last space
    return e;                               // \s+
  }

 private:
  std::string_view t_;
  const ClassTables& classes_;
};

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
REEL_HOT size_t MatchGpt2(const PatternScanner& s, size_t pos) {
  size_t c = s.Contraction(pos, false);
  if (c != pos) return c;
  if (s.IsByte(pos, ' ') && pos + 1 < s.size()) {
    uint32_t f1 = s.At(pos + 1).flags;
    if (f1 & kL) return s.RunEnd(pos + 1, kL);
    if (f1 & kN) return s.RunEnd(pos + 1, kN);
    if (!(f1 & (kS | kL | kN))) return s.RunEndNot(pos + 1, kS | kL | kN);
  }
  uint32_t f0 = s.At(pos).flags;
  if (f0 & kL) return s.RunEnd(pos, kL);
  if (f0 & kN) return s.RunEnd(pos, kN);
  if (!(f0 & (kS | kL | kN))) return s.RunEndNot(pos, kS | kL | kN);
  return s.Whitespace(pos, false);
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,D}| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+        (D = 3: cl100k, Llama 3; D = 1, written \p{N}: Qwen 2/3)
// (Each character's classes are looked up once where the alternatives share it.)
template <int kDigits>
REEL_HOT size_t MatchCl100k(const PatternScanner& s, size_t pos) {
  size_t c = s.Contraction(pos, true);
  if (c != pos) return c;
  const CharInfo c0 = s.At(pos);
  const size_t p1 = pos + c0.len;
  const CharInfo c1 = p1 < s.size() ? s.At(p1) : CharInfo{0, 0};
  if (!(c0.flags & (kCr | kL | kN)) && (c1.flags & kL)) return s.RunEnd(p1 + c1.len, kL);
  if (c0.flags & kL) return s.RunEnd(p1, kL);
  if (c0.flags & kN) {
    size_t e = p1;
    for (int i = 1; i < kDigits && e < s.size(); ++i) {
      CharInfo d = s.At(e);
      if (!(d.flags & kN)) break;
      e += d.len;
    }
    return e;
  }
  if (s.IsByte(pos, ' ') && p1 < s.size() && !(c1.flags & (kS | kL | kN))) {
    return s.RunEnd(s.RunEndNot(p1 + c1.len, kS | kL | kN), kCr);
  }
  if (!(c0.flags & (kS | kL | kN))) return s.RunEnd(s.RunEndNot(p1, kS | kL | kN), kCr);
  return s.Whitespace(pos, true);
}

// X? U* W+ C? at p, whose character is `first` (X handled by the caller): the end, or 0 if it
// does not match.   U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], C =
// contractions.
REEL_HOT size_t O200kLowerWord(const PatternScanner& s, size_t p, CharInfo first,
                               bool contractions) {
  size_t u_end = p;
  size_t last_w = SIZE_MAX;
  CharInfo c = first;
  while (c.flags & kU) {
    if (c.flags & kW) last_w = u_end;
    u_end += c.len;
    if (u_end >= s.size()) {
      c = {0, 0};
      break;
    }
    c = s.At(u_end);
  }
  size_t e;
  if (c.flags & kW) {
    e = s.RunEnd(u_end + c.len, kW);  // U* kept whole, then the run of W after it
  } else if (last_w != SIZE_MAX) {
    e = last_w + s.At(last_w).len;  // U* gives back down to its last W, which W+ takes alone
  } else {
    return 0;
  }
  return contractions ? s.Contraction(e, true) : e;
}

// X? U+ W* C? at p, whose character is `first` (in U): the end.
REEL_HOT size_t O200kUpperWord(const PatternScanner& s, size_t p, CharInfo first,
                               bool contractions) {
  size_t e = s.RunEnd(s.RunEnd(p + first.len, kU), kW);
  return contractions ? s.Contraction(e, true) : e;
}

// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+C?|
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*C?|
// \p{N}{1,D}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   o200k (GPT-4o, gpt-oss, MiniMax-M3): C = (?i:'s|'t|'re|'ve|'m|'ll|'d), D = 3.
//   Mistral Nemo (Tekken): no C, D = 1.
// The alternatives in the regex's order: the first with X, then without, then the second
// with X, then without (a word alternative can only match from a character in U or W).
template <bool kContractions, int kDigits>
REEL_HOT size_t MatchO200k(const PatternScanner& s, size_t pos) {
  const CharInfo c0 = s.At(pos);
  const size_t p1 = pos + c0.len;
  const CharInfo c1 = p1 < s.size() ? s.At(p1) : CharInfo{0, 0};
  const bool x = !(c0.flags & (kCr | kL | kN));
  size_t e;
  if (x && (c1.flags & (kU | kW)) && (e = O200kLowerWord(s, p1, c1, kContractions)) != 0) {
    return e;
  }
  if ((c0.flags & (kU | kW)) && (e = O200kLowerWord(s, pos, c0, kContractions)) != 0) return e;
  if (x && (c1.flags & kU)) return O200kUpperWord(s, p1, c1, kContractions);
  if (c0.flags & kU) return O200kUpperWord(s, pos, c0, kContractions);
  if (c0.flags & kN) {
    e = p1;
    for (int i = 1; i < kDigits && e < s.size(); ++i) {
      CharInfo d = s.At(e);
      if (!(d.flags & kN)) break;
      e += d.len;
    }
    return e;
  }
  if (s.IsByte(pos, ' ') && p1 < s.size() && !(c1.flags & (kS | kL | kN))) {
    return s.RunEnd(s.RunEndNot(p1 + c1.len, kS | kL | kN), kCr | kSlash);
  }
  if (!(c0.flags & (kS | kL | kN))) return s.RunEnd(s.RunEndNot(p1, kS | kL | kN), kCr | kSlash);
  return s.Whitespace(pos, true);
}

// \p{N}{1,3}   (DeepSeek V3, the first of its three Split pre-tokenizers)
REEL_HOT size_t MatchDigits3(const PatternScanner& s, size_t pos) {
  const CharInfo c0 = s.At(pos);
  if (!(c0.flags & kN)) return pos;
  size_t e = pos + c0.len;
  for (int i = 1; i < 3 && e < s.size(); ++i) {
    CharInfo d = s.At(e);
    if (!(d.flags & kN)) break;
    e += d.len;
  }
  return e;
}

// [\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+   (DeepSeek V3, the second): CJK ideographs,
// hiragana and katakana. All are three bytes long in UTF-8; ASCII never matches.
REEL_HOT size_t MatchDeepSeekCjk(const PatternScanner& s, size_t pos) {
  std::string_view t = s.text();
  size_t e = pos;
  while (e < t.size() && static_cast<unsigned char>(t[e]) >= 0x80) {
    size_t i = e;
    uint32_t cp = NextCodePoint(t, i);
    if (!((cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x3040 && cp <= 0x30FF))) break;
    e = i;
  }
  return e;
}

// [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
// ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+   (DeepSeek V3, the third)
REEL_HOT size_t MatchDeepSeek(const PatternScanner& s, size_t pos) {
  const CharInfo c0 = s.At(pos);
  const size_t p1 = pos + c0.len;
  const CharInfo c1 = p1 < s.size() ? s.At(p1) : CharInfo{0, 0};
  if ((c0.flags & kAsciiPunct) && (c1.flags & kAsciiAlpha)) return s.RunEnd(p1 + 1, kAsciiAlpha);
  if (!(c0.flags & (kCr | kL | kP | kSym)) && (c1.flags & (kL | kM))) {
    return s.RunEnd(p1 + c1.len, kL | kM);
  }
  if (c0.flags & (kL | kM)) return s.RunEnd(p1, kL | kM);
  if (s.IsByte(pos, ' ') && (c1.flags & (kP | kSym))) {
    return s.RunEnd(s.RunEnd(p1 + c1.len, kP | kSym), kCr);
  }
  if (c0.flags & (kP | kSym)) return s.RunEnd(s.RunEnd(p1, kP | kSym), kCr);
  if (c0.flags & kS) return s.Whitespace(pos, true);
  return pos;
}

using MatchFn = size_t (*)(const PatternScanner&, size_t);

// A matcher for one pattern (a template argument, so that it is inlined into the loop).
template <MatchFn kMatch>
class FastPattern : public SplitPattern {
 public:
  explicit FastPattern(const char* name) : name_(name) {}

  void FindMatches(std::string_view text, std::vector<PatternMatch>& out) const override {
    PatternScanner s(text);
    size_t pos = 0, gap = 0;
    while (pos < text.size()) {
      size_t e = kMatch(s, pos);
      if (e > pos) {
        if (gap < pos)
          out.push_back({static_cast<uint32_t>(gap), static_cast<uint32_t>(pos), false});
        out.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(e), true});
        pos = gap = e;
      } else {
        pos += static_cast<size_t>(SequenceLength(static_cast<unsigned char>(text[pos])));
      }
    }
    if (gap < text.size()) {
      out.push_back({static_cast<uint32_t>(gap), static_cast<uint32_t>(text.size()), false});
    }
  }
  const char* Name() const override { return name_; }

 private:
  const char* name_;
};

class RegexPattern : public SplitPattern {
 public:
  explicit RegexPattern(Regex regex) : regex_(std::move(regex)) {}
  void FindMatches(std::string_view text, std::vector<PatternMatch>& out) const override {
    matches_.clear();
    regex_.FindAll(text, matches_);
    size_t prev = 0;
    for (const auto& [s, e] : matches_) {
      if (prev != s) out.push_back({static_cast<uint32_t>(prev), static_cast<uint32_t>(s), false});
      out.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(e), true});
      prev = e;
    }
    if (prev != text.size()) {
      out.push_back({static_cast<uint32_t>(prev), static_cast<uint32_t>(text.size()), false});
    }
  }
  const char* Name() const override { return "regex"; }

 private:
  Regex regex_;
  static thread_local std::vector<std::pair<size_t, size_t>> matches_;
};
thread_local std::vector<std::pair<size_t, size_t>> RegexPattern::matches_;

class CharPattern : public SplitPattern {
 public:
  explicit CharPattern(CharClassPattern which) : which_(which) {}
  void FindMatches(std::string_view text, std::vector<PatternMatch>& out) const override {
    size_t last = 0, i = 0;
    while (i < text.size()) {
      size_t b = i;
      uint32_t c = NextCodePoint(text, i);
      bool m = which_ == CharClassPattern::kNumeric ? IsNumeric(c) : IsWhiteSpace(c);
      if (m) {
        if (last < b) out.push_back({static_cast<uint32_t>(last), static_cast<uint32_t>(b), false});
        out.push_back({static_cast<uint32_t>(b), static_cast<uint32_t>(i), true});
        last = i;
      }
    }
    if (last < text.size()) {
      out.push_back({static_cast<uint32_t>(last), static_cast<uint32_t>(text.size()), false});
    }
  }
  const char* Name() const override {
    return which_ == CharClassPattern::kNumeric ? "char::is_numeric" : "char::is_whitespace";
  }

 private:
  CharClassPattern which_;
};

constexpr const char* kContractionsI = R"((?i:'s|'t|'re|'ve|'m|'ll|'d))";
constexpr const char* kUpper = R"([\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])";
constexpr const char* kLower = R"([\p{Ll}\p{Lm}\p{Lo}\p{M}])";

std::string Cl100kSource(const char* digits) {
  return std::string(kContractionsI) + R"(|[^\r\n\p{L}\p{N}]?\p{L}+|)" + digits +
         R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
}

std::string O200kSource(bool contractions, const char* digits) {
  std::string c = contractions ? std::string(kContractionsI) + "?" : "";
  return std::string(R"([^\r\n\p{L}\p{N}]?)") + kUpper + "*" + kLower + "+" + c +
         R"(|[^\r\n\p{L}\p{N}]?)" + kUpper + "+" + kLower + "*" + c + "|" + digits +
         R"(| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
}

// DeepSeek V3's three Split patterns (the CJK ranges as UTF-8, as its tokenizer.json holds
// them after JSON unescaping; [\r\n] as the characters themselves).
constexpr const char* kDeepSeekDigits = R"(\p{N}{1,3})";
constexpr const char* kDeepSeekCjk =
    "[\xE4\xB8\x80-\xE9\xBE\xA5\xE3\x81\x80-\xE3\x82\x9F\xE3\x82\xA0-\xE3\x83\xBF]+";
constexpr const char* kDeepSeekWords =
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|"
    "[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|"
    "\\s*[\r\n]+|\\s+(?!\\S)|\\s+";

}  // namespace

std::vector<std::string> FastPatternSources() {
  return {kGpt2Pattern,
          Cl100kSource(R"(\p{N}{1,3})"),
          Cl100kSource(R"(\p{N})"),
          O200kSource(true, R"(\p{N}{1,3})"),
          O200kSource(false, R"(\p{N})"),
          kDeepSeekDigits,
          kDeepSeekCjk,
          kDeepSeekWords};
}

std::unique_ptr<SplitPattern> MakeFastPattern(std::string_view source) {
  static const std::string cl100k = Cl100kSource(R"(\p{N}{1,3})");
  static const std::string qwen = Cl100kSource(R"(\p{N})");
  static const std::string o200k = O200kSource(true, R"(\p{N}{1,3})");
  static const std::string tekken = O200kSource(false, R"(\p{N})");
  if (source == kGpt2Pattern) return std::make_unique<FastPattern<&MatchGpt2>>("gpt2");
  if (source == cl100k) return std::make_unique<FastPattern<&MatchCl100k<3>>>("cl100k");
  if (source == qwen) return std::make_unique<FastPattern<&MatchCl100k<1>>>("cl100k-1digit");
  if (source == o200k) return std::make_unique<FastPattern<&MatchO200k<true, 3>>>("o200k");
  if (source == tekken) return std::make_unique<FastPattern<&MatchO200k<false, 1>>>("tekken");
  if (source == kDeepSeekDigits) {
    return std::make_unique<FastPattern<&MatchDigits3>>("deepseek-digits");
  }
  if (source == kDeepSeekCjk)
    return std::make_unique<FastPattern<&MatchDeepSeekCjk>>("deepseek-cjk");
  if (source == kDeepSeekWords) return std::make_unique<FastPattern<&MatchDeepSeek>>("deepseek");
  return nullptr;
}

Result<std::unique_ptr<SplitPattern>> MakeRegexPattern(std::string_view source, bool allow_fast) {
  // The regex must compile either way: a pattern Oniguruma would reject is refused even when a
  // hand-written matcher exists (none of the known ones is).
  REEL_ASSIGN_OR_RETURN(Regex regex, Regex::Compile(source));
  if (allow_fast) {
    if (auto fast = MakeFastPattern(source)) return fast;
  }
  return std::unique_ptr<SplitPattern>(new RegexPattern(std::move(regex)));
}

std::unique_ptr<SplitPattern> MakeCharPattern(CharClassPattern which) {
  return std::make_unique<CharPattern>(which);
}

}  // namespace reel::llm::internal
