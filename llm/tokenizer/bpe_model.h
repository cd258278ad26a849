// The BPE model of a tokenizer.json, with the Hugging Face library's exact results.
// Thread safety: const methods may run concurrently.
// Details: llm/tokenizer/README.md, "BPE model".
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "llm/tokenizer/added_vocabulary.h"
#include "llm/tokenizer/bpe_merge.h"
#include "llm/tokenizer/hash_tables.h"
#include "llm/tokenizer/merge_table.h"
#include "llm/tokenizer/piece_cache.h"
#include "llm/tokenizer/tokenizer_json.h"

namespace reel::llm::internal {

// A piece of a text: bytes [start, end).
struct PieceSpan {
  uint32_t start;
  uint32_t end;
};

class CharWords;
struct CharSubstitution;

class BpeModel {
 public:
  // `config` is the model object; its vocabulary and merges come in `tables` (read by
  // ParseTokenizerJson or ReadVocabAndMerges).
  static Result<std::unique_ptr<BpeModel>> Make(const nlohmann::json& config,
                                                const VocabAndMerges& tables);
  ~BpeModel();

  // Appends the ids of one piece. With `byte_level`, the piece's text is the ByteLevel mapping
  // of `text`.
  void Tokenize(std::string_view text, bool byte_level, std::vector<uint32_t>& out) const;

  std::optional<uint32_t> TokenToId(std::string_view token) const;
  // The token string of an id, or nullopt.
  std::optional<std::string_view> IdToToken(uint32_t id) const;
  // The number of vocabulary entries (the library's get_vocab_size).
  size_t VocabSize() const { return vocab_.size(); }
  size_t MergeCount() const { return merge_count_; }

  // Appends the ids of each piece of `text` in order (what Tokenize gives for each), through
  // the calling thread's cache. Byte-level pieces not cached yet are merged together
  // (MergeBytePieces), so that their merge-table lookups overlap.
  void TokenizePieces(std::string_view text, std::span<const PieceSpan> pieces, bool byte_level,
                      std::vector<uint32_t>& out) const;

  // The cache of this model for the calling thread (pieces that are / are not byte-level).
  PieceCache& ThreadCache(bool byte_level) const;
  // Tokenize with the cache already looked up; `hash` is HashBytes(text).
  void Tokenize(std::string_view text, bool byte_level, PieceCache& cache, uint64_t hash,
                std::vector<uint32_t>& out) const;
  // The longest piece the cache holds; longer ones are tokenized every time.
  static constexpr size_t kMaxCachedPieceBytes = 256;

  // SentencePiece-style files (char_words.h): prepares TokenizeCharWords for a normalizer that
  // is `substitution` and a pre-tokenizer that leaves the text whole. False when the model
  // does not allow it (a continuing_subword_prefix or end_of_word_suffix, ignore_merges, a merge
  // of a byte-fallback or unk token, ids beyond the merge table's range, characters that would
  // be dropped for lack of both byte fallback and unk, "to" not a token). Call at load only.
  bool EnableCharWords(const CharSubstitution& substitution);
  const CharWords* char_words() const { return char_words_.get(); }
  // After EnableCharWords: appends the ids of each piece of `text` in order: an added token's
  // id, or for text what Tokenize(normalized text, false) appends, the whole piece normalized
  // with the substitution. Words not cached yet are merged together (MergeIdPieces).
  void TokenizeCharWords(std::string_view text, std::span<const AddedPiece> pieces,
                         std::vector<uint32_t>& out) const;

 private:
  BpeModel() = default;
  struct Symbol {
    uint32_t id;
    uint32_t length;  // bytes of the piece it covers (for the unk/byte-fallback order only)
  };
  void TokenizeUncached(std::string_view text, bool byte_level, std::vector<uint32_t>& out) const;
  // TokenizeCharWords for the words of `text` (and added tokens: end == kTokenSpan, start the
  // id).
  void TokenizeWords(std::string_view text, std::span<const PieceSpan> words, PieceCache& cache,
                     std::vector<uint32_t>& out) const;
  static constexpr uint32_t kTokenSpan = 0xFFFFFFFFu;
  // TokenizePieces for byte-level pieces when simple_bytes_.
  void TokenizeBytePieces(std::string_view text, std::span<const PieceSpan> pieces,
                          PieceCache& cache, std::vector<uint32_t>& out) const;
  // False when no token of byte_vocab_ has this hash (HashBytes of its bytes); true: maybe.
  bool MaybeToken(uint64_t hash) const {
    uint64_t bit = hash >> token_filter_shift_;
    return (token_filter_[bit >> 6] >> (bit & 63)) & 1;
  }
  // The library's merge_word on the characters of `text` (already mapped if byte-level).
  void InitialSymbols(std::string_view text, std::vector<uint32_t>& ids) const;
  // Applies the merges. `bytes`, when given, are the bytes the initial ids stand for (the
  // simple byte-level case), so the first ranks come from byte_pairs_.
  void MergeAll(std::vector<uint32_t>& ids, const unsigned char* bytes = nullptr) const;

  StringIdMap vocab_;
  StringIdMap byte_vocab_;            // tokens made only of ByteLevel characters, by their bytes
  std::vector<int64_t> id_to_entry_;  // vocab_ entry of each id, or -1
  mutable std::string id_token_scratch_;
  MergeTable merges_;
  size_t merge_count_ = 0;
  std::array<int64_t, 256> byte_ids_{};  // id of the ByteLevel character of each byte, or -1
  // Byte-level pieces can start from byte_ids_ directly (and every id they meet fits the merge
  // table's fields).
  bool simple_bytes_ = false;
  // The merge rank of the pair of the ids of two bytes, when simple_bytes_: the first lookups
  // of every piece hit this 256 KB table instead of the large merge table.
  std::vector<uint32_t> byte_pairs_;
  // byte_ids_ as uint32, when simple_bytes_ (3 more: ids are copied four at a time).
  std::array<uint32_t, 256 + 3> byte_token_ids_{};
  ByteMergeTables byte_merge_tables_;
  // For ignore_merges: a one-hash Bloom filter of byte_vocab_ (about 16 bits per token, so a
  // piece that is no token is told apart with one load nearly always), and the longest token.
  std::vector<uint64_t> token_filter_;
  int token_filter_shift_ = 63;
  size_t max_token_bytes_ = 0;
  std::optional<uint32_t> unk_id_;
  std::string unk_token_;
  bool has_unk_token_ = false;
  std::string prefix_, suffix_;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  // Whether some merge has a byte-fallback token (<0x00>..<0xFF>, with byte_fallback) or the
  // unk token as a side, and the largest id of the vocabulary.
  bool merges_fallback_tokens_ = false;
  uint32_t max_id_ = 0;
  std::unique_ptr<CharWords> char_words_;
  uint64_t cache_owner_ = 0;  // identifies this model in the per-thread caches
};

}  // namespace reel::llm::internal
