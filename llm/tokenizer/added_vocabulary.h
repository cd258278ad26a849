// The added tokens of a tokenizer.json, split out of the text and given ids exactly as the
// Hugging Face library's AddedVocabulary does.
// Matching and ids: llm/tokenizer/README.md, "Added vocabulary".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace reel::llm::internal {

class BpeModel;
class Normalizer;

struct AddedToken {
  std::string content;
  uint32_t id = 0;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool single_word = false;
  std::string normalized_content;  // the pattern for normalized tokens
};

// A piece of a text: bytes [start, end), either an added token (id >= 0) or text (id < 0).
struct AddedPiece {
  uint32_t start;
  uint32_t end;
  int64_t id;
};

class AddedVocabulary {
 public:
  static Result<std::unique_ptr<AddedVocabulary>> Make(const nlohmann::json& list,
                                                       const BpeModel& model,
                                                       const Normalizer* normalizer);
  ~AddedVocabulary();

  // Splits `text` on the tokens matched in raw text (normalized = false), or in normalized
  // text (normalized = true). Appends pieces covering the text in order (token pieces may
  // extend over whitespace through lstrip/rstrip).
  void Split(std::string_view text, bool normalized, std::vector<AddedPiece>& out) const;

  // Whether there are tokens of that kind at all.
  bool HasTokens(bool normalized) const;

  std::optional<uint32_t> TokenToId(std::string_view content) const;
  // The token's content, in its normalized form for normalized tokens (as the library decodes).
  const std::string* IdToToken(uint32_t id) const;
  bool IsSpecial(std::string_view content) const;
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  size_t size() const { return by_content_.size(); }

 private:
  struct Trie;
  AddedVocabulary();
  std::vector<AddedToken> tokens_;                        // one per id, file order
  std::unordered_map<std::string, uint32_t> by_content_;  // content -> id
  std::unordered_map<uint32_t, size_t> by_id_;            // id -> index in tokens_
  std::unordered_map<std::string, bool> special_;         // contents of special tokens
  std::unique_ptr<Trie> raw_trie_, normalized_trie_;
};

}  // namespace reel::llm::internal
