// SentencePiece-style text (Gemma 3 and the like) cut into words that merge one by one with the
// exact result of merging the whole text; CharWords cuts raw text and gives a word's first ids
// without writing the normalized text. Thread safety: immutable after Make.
// Why the cut is exact: llm/tokenizer/README.md, "Char words".
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llm/tokenizer/bpe_model.h"
#include "llm/tokenizer/hash_tables.h"
#include "llm/tokenizer/normalizer.h"

namespace reel::llm::internal {

class CharWords {
 public:
  // The vocabulary's single-character tokens and the cut places of `substitution`; nullptr when
  // `substitution.to` is no token of its own. `byte_fallback_ids`: the tokens <0x00>..<0xFF>
  // when the model falls back on bytes and has all of them, else empty.
  static std::unique_ptr<CharWords> Make(const StringIdMap& vocab,
                                         const CharSubstitution& substitution,
                                         const std::vector<uint32_t>& byte_fallback_ids);

  // Appends the words of `text` (raw text: before the substitution, prefix included), as
  // spans offset by `base`. Empty text gives none.
  void Cut(std::string_view text, uint32_t base, std::vector<PieceSpan>& out) const;

  // Writes the first ids of `word` (room for word.size(): never more ids than bytes) and
  // returns their number; 0 when a character has no token and there is no complete byte
  // fallback (the caller then tokenizes the substituted word the general way).
  uint32_t FirstIds(std::string_view word, uint32_t* ids) const;

  // `word` with the substitution applied (what the normalizer makes of it).
  void Substitute(std::string_view word, std::string& out) const;

  const CharSubstitution& substitution() const { return substitution_; }
  // The characters after which "to" does not start a word (for Description and tests).
  std::vector<uint32_t> Joiners() const;

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  CharWords() = default;
  // The token of code point c (the substitution applied), or kNone.
  uint32_t CharId(uint32_t c) const {
    if (c >= 0x110000) return kNone;
    return blocks_[(static_cast<size_t>(block_of_[c >> 8]) << 8) | (c & 0xFF)];
  }
  bool Joins(uint32_t c) const {
    if (c < 128) return ascii_joiners_[c];
    for (uint32_t j : joiners_) {
      if (j == c) return true;
    }
    return false;
  }

  CharSubstitution substitution_;
  std::string from_utf8_, to_utf8_;
  // Bytes that start the UTF-8 of "from" or "to": where Cut looks further.
  std::array<bool, 256> starts_cut_{};
  // The characters x (normalized) that some token has right before "to".
  std::array<bool, 128> ascii_joiners_{};
  std::vector<uint32_t> joiners_;  // the others
  // Code point -> token: 256-character blocks; block 0 has none (kNone everywhere).
  std::vector<uint16_t> block_of_;
  std::vector<uint32_t> blocks_;
  std::array<uint32_t, 128> ascii_ids_{};
  std::vector<uint32_t> byte_ids_;  // empty: no complete byte fallback
};

}  // namespace reel::llm::internal
