// Tokenizer: a Hugging Face tokenizer.json for BPE models, giving exactly the ids the Hugging
// Face `tokenizers` library gives (its npm package 0.23 is the reference the tests compare
// with). Reel uses it to count the tokens of a prompt the way the model's server will.
//
// What is supported, component by component (anything else is refused when the file is
// loaded, with a message naming the component; a file is never tokenized approximately):
//   normalizer     NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace, Prepend, ByteLevel, Nmt,
//                  Sequence
//   pre_tokenizer  Split (string or regex pattern, every behavior, invert), ByteLevel (with or
//                  without its own regex), Digits, WhitespaceSplit, Sequence
//   model          BPE (string or pair merges, continuing_subword_prefix, end_of_word_suffix,
//                  unk_token, fuse_unk, byte_fallback, ignore_merges; not dropout)
//   added_tokens   special or not, lstrip, rstrip, normalized, single_word
//   post_processor TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence
//   decoder        ByteLevel, ByteFallback, Fuse, Strip, Replace, Sequence
// "truncation" and "padding" are ignored: Reel counts whole texts.
//
// Input text that is not valid UTF-8 is first repaired (each invalid sequence becomes U+FFFD,
// as a UTF-8 decoder does), since the library only accepts valid strings.
//
// Thread safety: a loaded Tokenizer is immutable; Encode/Count/Decode may run concurrently
// (each thread keeps its own cache of recently seen pieces).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel::llm {

class Tokenizer {
 public:
  // Loads a tokenizer.json. Fails with kNotFound / kIoError for the file, kCorruptData for
  // bad JSON, kUnsupported (naming the component) for what it cannot reproduce exactly.
  static Result<Tokenizer> Load(const std::string& path);
  // The same from the file's text; `name` is used in messages.
  static Result<Tokenizer> FromJson(std::string_view json, const std::string& name);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The ids of `text`. With `add_special_tokens`, the post-processor's tokens are added (as the
  // library's encode(text, add_special_tokens=true)); without, the text alone.
  std::vector<uint32_t> Encode(std::string_view text, bool add_special_tokens = false) const;
  // Appends the ids of `text` (no special tokens added) to `ids`.
  void EncodeAppend(std::string_view text, std::vector<uint32_t>& ids) const;
  // The number of ids Encode(text) returns.
  size_t Count(std::string_view text, bool add_special_tokens = false) const;

  // The text of `ids`, through the file's decoder (the library's decode).
  std::string Decode(std::span<const uint32_t> ids, bool skip_special_tokens = false) const;

  // The token string of an id (added tokens first, then the model's vocabulary).
  std::optional<std::string> IdToToken(uint32_t id) const;
  std::optional<uint32_t> TokenToId(std::string_view token) const;
  // Whether `id` is an added token marked special.
  bool IsSpecial(uint32_t id) const;

  // Vocabulary entries of the model, and added tokens that are not among them.
  size_t VocabSize() const;
  size_t AddedTokenCount() const;
  // One line per component, e.g. "pre_tokenizer: Sequence[Split(o200k, hand-written), ...]".
  const std::string& Description() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace reel::llm
