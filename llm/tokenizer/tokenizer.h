// Tokenizer: a Hugging Face tokenizer.json for BPE models, giving exactly the ids of the
// `tokenizers` library, so Reel counts a prompt's tokens as the server will. A component it does
// not support is refused at load, naming it; invalid UTF-8 is repaired first. Thread safety: a
// loaded Tokenizer is immutable; Encode/Count/Decode may run concurrently.
// The supported components: llm/tokenizer/README.md, "Tokenizer".
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
