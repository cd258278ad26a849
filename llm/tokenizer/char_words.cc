#include "llm/tokenizer/char_words.h"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {

std::unique_ptr<CharWords> CharWords::Make(const StringIdMap& vocab,
                                           const CharSubstitution& substitution,
                                           const std::vector<uint32_t>& byte_fallback_ids) {
  const uint32_t from = substitution.from, to = substitution.to;
  if (from == to || from >= 0x110000 || to >= 0x110000) return nullptr;
  std::unique_ptr<CharWords> w(new CharWords());
  w->substitution_ = substitution;
  AppendUtf8(w->from_utf8_, from);
  AppendUtf8(w->to_utf8_, to);
  w->starts_cut_[static_cast<uint8_t>(w->from_utf8_[0])] = true;
  w->starts_cut_[static_cast<uint8_t>(w->to_utf8_[0])] = true;
  w->block_of_.assign(0x110000 >> 8, 0);
  w->blocks_.assign(256, kNone);
  w->ascii_ids_.fill(kNone);
  auto set_id = [&](uint32_t c, uint32_t id) {
    uint16_t& block = w->block_of_[c >> 8];
    if (block == 0) {
      block = static_cast<uint16_t>(w->blocks_.size() >> 8);
      w->blocks_.resize(w->blocks_.size() + 256, kNone);
    }
    w->blocks_[(static_cast<size_t>(block) << 8) | (c & 0xFF)] = id;
    if (c < 128) w->ascii_ids_[c] = id;
  };
  std::vector<uint32_t> joiners;
  for (size_t e = 0; e < vocab.size(); ++e) {
    const std::string_view token = vocab.Key(e);
    // (A token that is not valid UTF-8 covers no text: it is never made from characters.)
    if (token.empty() || ValidUtf8Prefix(token) != token.size()) continue;
    size_t i = 0;
    const uint32_t c = NextCodePoint(token, i);
    if (i == token.size() && c != from) set_id(c, vocab.Value(e));
    for (size_t at = token.find(w->to_utf8_, 1); at != std::string_view::npos;
         at = token.find(w->to_utf8_, at + 1)) {
      size_t j = at;
      uint32_t x = PrevCodePoint(token, j);
      joiners.push_back(x == from ? to : x);
    }
  }
  const uint32_t to_id = w->CharId(to);
  if (to_id == kNone) return nullptr;
  set_id(from, to_id);  // the substitution, folded into the table
  std::sort(joiners.begin(), joiners.end());
  joiners.erase(std::unique(joiners.begin(), joiners.end()), joiners.end());
  for (uint32_t x : joiners) {
    if (x < 128) {
      w->ascii_joiners_[x] = true;
    } else {
      w->joiners_.push_back(x);
    }
  }
  if (byte_fallback_ids.size() == 256) w->byte_ids_ = byte_fallback_ids;
  return w;
}

std::vector<uint32_t> CharWords::Joiners() const {
  std::vector<uint32_t> out;
  for (uint32_t c = 0; c < 128; ++c) {
    if (ascii_joiners_[c]) out.push_back(c);
  }
  out.insert(out.end(), joiners_.begin(), joiners_.end());
  return out;
}

void CharWords::Cut(std::string_view text, uint32_t base, std::vector<PieceSpan>& out) const {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  if (n == 0) return;
  size_t start = 0;
  // A word starts at i (> 0) when "from" or "to" is there and the character before is no joiner.
  const bool ascii_from = from_utf8_.size() == 1;
  auto consider = [&](size_t i) __attribute__((always_inline)) {
    if (!(ascii_from && p[i] == static_cast<unsigned char>(from_utf8_[0]))) {
      const std::string_view rest = text.substr(i);
      if (!rest.starts_with(from_utf8_) && !rest.starts_with(to_utf8_)) return;
    }
    uint32_t x;
    if (p[i - 1] < 0x80) {
      x = p[i - 1];
    } else {
      size_t j = i;
      x = PrevCodePoint(text, j);
    }
    if (x == substitution_.from) x = substitution_.to;
    if (Joins(x)) return;
    out.push_back({base + static_cast<uint32_t>(start), base + static_cast<uint32_t>(i)});
    start = i;
  };
  // (A cut is never at 0: the first word starts there anyway.)
  size_t i = 1;
#if defined(__SSE2__)
  // Sixteen bytes at a time: the positions of the first bytes of "from" and "to".
  const __m128i lead0 = _mm_set1_epi8(static_cast<char>(from_utf8_[0]));
  const __m128i lead1 = _mm_set1_epi8(static_cast<char>(to_utf8_[0]));
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    auto mask = static_cast<uint32_t>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, lead0), _mm_cmpeq_epi8(x, lead1))));
    while (mask != 0) {
      consider(i + static_cast<size_t>(__builtin_ctz(mask)));
      mask &= mask - 1;
    }
  }
#endif
  for (; i < n; ++i) {
    if (starts_cut_[p[i]]) consider(i);
  }
  out.push_back({base + static_cast<uint32_t>(start), base + static_cast<uint32_t>(n)});
}

uint32_t CharWords::FirstIds(std::string_view word, uint32_t* ids) const {
  const auto* p = reinterpret_cast<const unsigned char*>(word.data());
  const size_t n = word.size();
  uint32_t count = 0;
  size_t i = 0;
  while (i < n) {
    uint32_t id;
    size_t length;
    if (p[i] < 0x80) {
      id = ascii_ids_[p[i]];
      length = 1;
    } else {
      size_t j = i;
      id = CharId(NextCodePoint(word, j));
      length = j - i;
    }
    if (id != kNone) [[likely]] {
      ids[count++] = id;
    } else if (!byte_ids_.empty()) {
      for (size_t k = 0; k < length; ++k) ids[count++] = byte_ids_[p[i + k]];
    } else {
      return 0;
    }
    i += length;
  }
  return count;
}

void CharWords::Substitute(std::string_view word, std::string& out) const {
  out.clear();
  size_t i = 0;
  while (i < word.size()) {
    size_t start = i;
    uint32_t c = NextCodePoint(word, i);
    if (c == substitution_.from) {
      out += to_utf8_;
    } else {
      out.append(word.substr(start, i - start));
    }
  }
}

}  // namespace reel::llm::internal
