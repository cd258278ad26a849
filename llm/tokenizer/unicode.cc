#include "llm/tokenizer/unicode.h"

#include <algorithm>
#include <vector>

#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {
namespace {

struct MappingEntry {
  uint32_t cp;
  uint32_t offset;
  uint32_t length;
};
struct CompositionEntry {
  uint64_t key;
  uint32_t composite;
};

#include "llm/tokenizer/unicode_tables.inc"

constexpr uint32_t kHangulSBase = 0xAC00, kHangulLBase = 0x1100, kHangulVBase = 0x1161,
                   kHangulTBase = 0x11A7;
constexpr uint32_t kHangulLCount = 19, kHangulVCount = 21, kHangulTCount = 28;
constexpr uint32_t kHangulNCount = kHangulVCount * kHangulTCount;
constexpr uint32_t kHangulSCount = kHangulLCount * kHangulNCount;

constexpr uint16_t kNormCanonical = 0x100, kNormCompat = 0x200, kNormMaybe = 0x400,
                   kNormNfcNo = 0x800, kNormNfkcNo = 0x1000;

template <typename S1, typename S2, size_t N1>
inline auto Lookup(const S1 (&stage1)[N1], const S2* stage2, int shift, uint32_t cp) {
  if (cp >= 0x110000) cp = 0x10FFFF;  // never happens on valid text; keeps the lookup in range
  return stage2[(static_cast<uint32_t>(stage1[cp >> shift]) << shift) | (cp & ((1u << shift) - 1))];
}

uint8_t Props(uint32_t cp) { return Lookup(kPropsStage1, kPropsStage2, kPropsShift, cp); }
uint16_t Norm(uint32_t cp) { return Lookup(kNormStage1, kNormStage2, kNormShift, cp); }

const MappingEntry* FindMapping(const MappingEntry* begin, const MappingEntry* end, uint32_t cp) {
  const MappingEntry* it =
      std::lower_bound(begin, end, cp, [](const MappingEntry& e, uint32_t c) { return e.cp < c; });
  return it != end && it->cp == cp ? it : nullptr;
}

bool IsHangulSyllable(uint32_t cp) {
  return cp >= kHangulSBase && cp < kHangulSBase + kHangulSCount;
}

void Decompose(uint32_t cp, bool compat, std::vector<uint32_t>& out) {
  if (IsHangulSyllable(cp)) {
    uint32_t s = cp - kHangulSBase;
    out.push_back(kHangulLBase + s / kHangulNCount);
    out.push_back(kHangulVBase + (s % kHangulNCount) / kHangulTCount);
    if (s % kHangulTCount != 0) out.push_back(kHangulTBase + s % kHangulTCount);
    return;
  }
  uint16_t n = Norm(cp);
  if (compat && (n & kNormCompat)) {
    const MappingEntry* e =
        FindMapping(std::begin(kCompatDecomposition), std::end(kCompatDecomposition), cp);
    if (e != nullptr) {
      out.insert(out.end(), kCompatDecompositionData + e->offset,
                 kCompatDecompositionData + e->offset + e->length);
      return;
    }
  }
  if (n & kNormCanonical) {
    const MappingEntry* e =
        FindMapping(std::begin(kCanonicalDecomposition), std::end(kCanonicalDecomposition), cp);
    if (e != nullptr) {
      out.insert(out.end(), kCanonicalDecompositionData + e->offset,
                 kCanonicalDecompositionData + e->offset + e->length);
      return;
    }
  }
  out.push_back(cp);
}

// The primary composite of (a, b), or 0.
uint32_t Compose(uint32_t a, uint32_t b) {
  if (a >= kHangulLBase && a < kHangulLBase + kHangulLCount && b >= kHangulVBase &&
      b < kHangulVBase + kHangulVCount) {
    return kHangulSBase + ((a - kHangulLBase) * kHangulVCount + (b - kHangulVBase)) * kHangulTCount;
  }
  if (IsHangulSyllable(a) && (a - kHangulSBase) % kHangulTCount == 0 && b > kHangulTBase &&
      b < kHangulTBase + kHangulTCount) {
    return a + (b - kHangulTBase);
  }
  if (!(Norm(b) & kNormMaybe)) return 0;
  uint64_t key = (static_cast<uint64_t>(a) << 21) | b;
  const CompositionEntry* begin = std::begin(kComposition);
  const CompositionEntry* end = std::end(kComposition);
  const CompositionEntry* it = std::lower_bound(
      begin, end, key, [](const CompositionEntry& e, uint64_t k) { return e.key < k; });
  return it != end && it->key == key ? it->composite : 0;
}

}  // namespace

const char* GeneralCategoryName(GeneralCategory g) {
  static const char* const kNames[] = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl",
                                       "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc",
                                       "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"};
  return kNames[static_cast<int>(g)];
}

GeneralCategory CategoryOf(uint32_t cp) {
  return static_cast<GeneralCategory>(Lookup(kGcStage1, kGcStage2, kGcShift, cp));
}

CategoryTable GeneralCategoryTable() {
  return {kGcStage1, kGcStage2, sizeof kGcStage2 / sizeof kGcStage2[0], kGcShift};
}

bool IsWhiteSpace(uint32_t cp) { return Props(cp) & 1; }
bool IsAlphabetic(uint32_t cp) { return Props(cp) & 2; }
bool IsNumeric(uint32_t cp) { return Props(cp) & 4; }
bool IsRegexWord(uint32_t cp) { return Props(cp) & 16; }
bool IsOnigWord(uint32_t cp) { return Props(cp) & 32; }
bool IsOnigSpace(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || InCategories(cp, kSeparatorMask);
}

void AppendLowercase(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    return;
  }
  if (Props(cp) & 8) {
    const MappingEntry* e = FindMapping(std::begin(kLowercase), std::end(kLowercase), cp);
    if (e != nullptr) {
      for (uint32_t i = 0; i < e->length; ++i) AppendUtf8(out, kLowercaseData[e->offset + i]);
      return;
    }
  }
  AppendUtf8(out, cp);
}

uint8_t CombiningClass(uint32_t cp) { return static_cast<uint8_t>(Norm(cp) & 0xFF); }

namespace {

// The quick check of a normalization form (UAX #15): which flags make a character "maybe not
// normalized".
struct QuickCheck {
  explicit QuickCheck(NormalizationForm form)
      : composed(form == NormalizationForm::kNfc || form == NormalizationForm::kNfkc) {
    const bool compat = form == NormalizationForm::kNfkc || form == NormalizationForm::kNfkd;
    if (composed) {
      refuse = kNormMaybe | (compat ? kNormNfkcNo : kNormNfcNo);
    } else {
      refuse = compat ? kNormCompat : kNormCanonical;
    }
  }
  // Whether the character may change (or reorder) after one of combining class `last_ccc`;
  // updates `last_ccc`.
  bool Fails(uint32_t cp, uint16_t n, uint8_t& last_ccc) const {
    if (IsHangulSyllable(cp)) {
      last_ccc = 0;
      return !composed;
    }
    uint8_t ccc = static_cast<uint8_t>(n & 0xFF);
    if ((ccc != 0 && ccc < last_ccc) || (n & refuse)) return true;
    last_ccc = ccc;
    return false;
  }
  bool composed;
  uint16_t refuse;
};

// Whether normalization never looks across the start of this character, in every form: a
// starter without decomposition that composes with nothing before it (and no Hangul jamo or
// syllable, which compose arithmetically). Text cut just before such characters normalizes
// piece by piece to the same result as whole.
bool IsBoundaryBefore(uint32_t cp, uint16_t n) {
  if ((n & (0xFF | kNormCanonical | kNormCompat | kNormMaybe | kNormNfcNo | kNormNfkcNo)) != 0) {
    return false;
  }
  return !(cp >= 0x1100 && cp <= 0x11FF) && !IsHangulSyllable(cp);
}

}  // namespace

bool IsNormalizedQuick(std::string_view s, NormalizationForm form) {
  const QuickCheck check(form);
  uint8_t last_ccc = 0;
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {  // ASCII: ccc 0, never changes
      ++i;
      last_ccc = 0;
      continue;
    }
    uint32_t cp = NextCodePoint(s, i);
    if (check.Fails(cp, Norm(cp), last_ccc)) return false;
  }
  return true;
}

bool NormalizeChanged(std::string_view s, NormalizationForm form, std::string& out) {
  const QuickCheck check(form);
  bool changed = false;
  size_t copied = 0;    // s[0, copied) is in `out` (once changed)
  size_t boundary = 0;  // the last boundary (IsBoundaryBefore) at or before i
  uint8_t last_ccc = 0;
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      boundary = i++;
      last_ccc = 0;
      continue;
    }
    const size_t start = i;
    uint32_t cp = NextCodePoint(s, i);
    uint16_t n = Norm(cp);
    if (!check.Fails(cp, n, last_ccc)) {
      if (IsBoundaryBefore(cp, n)) boundary = start;
      continue;
    }
    // Normalize from the last boundary to the next one; the text around stays as it is.
    size_t end = i;
    while (end < s.size()) {
      size_t next = end;
      uint32_t c = NextCodePoint(s, next);
      if (c < 0x80 || IsBoundaryBefore(c, Norm(c))) break;
      end = next;
    }
    if (!changed) {
      out.clear();
      out.reserve(s.size() + s.size() / 8);
      changed = true;
    }
    out.append(s.data() + copied, boundary - copied);
    out += Normalize(s.substr(boundary, end - boundary), form);
    copied = boundary = i = end;
    last_ccc = 0;
  }
  if (changed) out.append(s.data() + copied, s.size() - copied);
  return changed;
}

std::string Normalize(std::string_view s, NormalizationForm form) {
  const bool compose = form == NormalizationForm::kNfc || form == NormalizationForm::kNfkc;
  const bool compat = form == NormalizationForm::kNfkc || form == NormalizationForm::kNfkd;
  std::vector<uint32_t> cps;
  cps.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) Decompose(NextCodePoint(s, i), compat, cps);
  // Canonical ordering: a stable sort of each run of non-starters by combining class.
  for (size_t k = 0; k < cps.size();) {
    if (CombiningClass(cps[k]) == 0) {
      ++k;
      continue;
    }
    size_t end = k;
    while (end < cps.size() && CombiningClass(cps[end]) != 0) ++end;
    if (end - k > 1) {
      std::stable_sort(
          cps.begin() + static_cast<long>(k), cps.begin() + static_cast<long>(end),
          [](uint32_t a, uint32_t b) { return CombiningClass(a) < CombiningClass(b); });
    }
    k = end;
  }
  if (compose && !cps.empty()) {
    // The composition of unicode-normalization (and UAX #15): a character composes with the
    // last starter when nothing between them has a combining class >= its own.
    bool have_starter = CombiningClass(cps[0]) == 0;
    size_t starter = 0;
    int last_class = -1;  // class of the last character kept after the starter; -1: none
    size_t out = 1;
    for (size_t k = 1; k < cps.size(); ++k) {
      uint32_t ch = cps[k];
      int ch_class = CombiningClass(ch);
      if (have_starter && (last_class == -1 || last_class < ch_class)) {
        uint32_t composite = Compose(cps[starter], ch);
        if (composite != 0) {
          cps[starter] = composite;
          continue;
        }
      }
      if (ch_class == 0) {
        have_starter = true;
        starter = out;
        last_class = -1;
      } else {
        last_class = ch_class;
      }
      cps[out++] = ch;
    }
    cps.resize(out);
  }
  std::string result;
  result.reserve(s.size());
  for (uint32_t cp : cps) AppendUtf8(result, cp);
  return result;
}

const char* GeneralCategoryUnicodeVersion() { return kGeneralCategoryVersion; }
const char* NormalizationUnicodeVersion() { return kNormalizationVersion; }
const char* RustCharUnicodeVersion() { return kRustCharVersion; }

}  // namespace reel::llm::internal
