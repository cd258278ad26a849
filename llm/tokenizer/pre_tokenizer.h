// Pre-tokenizers of a tokenizer.json ("pre_tokenizer"): they cut normalized text into the
// pieces the model tokenizes one by one, exactly as the Hugging Face library does (empty pieces
// are dropped; every pre-tokenizer works on each piece on its own).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace reel::llm::internal {

// A piece of text: bytes [offset, offset + length) of SplitList::buffer. When `byte_level` is
// set, the text the library would hold is the ByteLevel mapping of those bytes (one character
// per byte); the mapping is only written out when a later component must read it.
struct Split {
  uint32_t offset;
  uint32_t length;
  bool byte_level;
};

struct SplitList {
  std::string buffer;
  std::vector<Split> splits;

  std::string_view Text(const Split& s) const { return {buffer.data() + s.offset, s.length}; }
  // A split holding the same text with the ByteLevel mapping written out (a copy appended to
  // the buffer), or `s` itself when it is not byte-level.
  Split Materialize(const Split& s);
  // Appends bytes to the buffer; returns their offset.
  uint32_t Append(std::string_view bytes);
  void Reset() {
    buffer.clear();
    splits.clear();
  }
};

class SplitPattern;

// A pre-tokenizer that amounts to "cut by one pattern, keep the matches and/or the gaps, and
// map every piece ByteLevel": the common byte-level setups, run without building split lists.
struct FusedSplit {
  const SplitPattern* pattern = nullptr;
  bool keep_matches = true;
  bool keep_gaps = true;
  bool byte_level = true;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces every split of `list` by its pieces.
  virtual void Apply(SplitList& list) const = 0;
  // Describes this pre-tokenizer as a FusedSplit when it is one.
  virtual bool Fused(FusedSplit& out) const { return false; }
  // Whether it leaves any text without the character `absent` (a code point) whole, as one
  // piece: Splits on a String that contains it (they find nothing in such text), except
  // Removed inverted (which drops the text).
  virtual bool KeepsWhole(uint32_t absent) const { return false; }
};

// Builds the pre-tokenizer described by a "pre_tokenizer" object (null is handled by the
// caller). Unsupported types or options are refused with a message naming them.
// `allow_fast` = false forces the general regex engine (for tests of the hand-written ones).
Result<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const nlohmann::json& config,
                                                       bool allow_fast = true);

}  // namespace reel::llm::internal
