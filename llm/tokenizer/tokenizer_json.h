// Reading a tokenizer.json fast: the model's vocabulary and merges (hundreds of thousands of
// strings, nearly all of a 10-30 MB file) are read by a dedicated scanner straight into
// vectors; the rest of the document, small, is parsed into a JSON tree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace reel::llm::internal {

struct VocabAndMerges {
  bool has_vocab = false;
  bool has_merges = false;
  std::vector<std::pair<std::string, uint32_t>> vocab;  // in file order
  // Merges in file order. Legacy "a b" strings are kept whole in `first` with `legacy` set.
  std::vector<std::pair<std::string, std::string>> merges;
  bool legacy_merges = false;
};

struct ParsedTokenizerJson {
  nlohmann::json root;  // the document, with model.vocab and model.merges taken out
  VocabAndMerges model_tables;
};

// Fails with kCorruptData when the text is not valid JSON (the message says where).
Result<ParsedTokenizerJson> ParseTokenizerJson(std::string_view text);

// Reads "vocab" and "merges" from a model object parsed the ordinary way (small files, tests).
Status ReadVocabAndMerges(const nlohmann::json& model, VocabAndMerges& out);

}  // namespace reel::llm::internal
