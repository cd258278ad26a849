#include "llm/tokenizer/bpe_model.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <queue>

#include <nlohmann/json.hpp>

#include "llm/tokenizer/byte_level.h"
#include "llm/tokenizer/char_words.h"
#include "llm/tokenizer/json_util.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {
namespace {

using nlohmann::json;

std::atomic<uint64_t> g_next_owner{1};

// Per-thread caches of recently tokenized pieces, for the few most recently used models: plain
// pieces, byte-level pieces, raw words of TokenizeCharWords (keyed before the substitution).
enum CacheKind { kPlainPieces = 0, kByteLevelPieces = 1, kRawWords = 2 };
struct ThreadCaches {
  struct Entry {
    uint64_t owner;
    PieceCache caches[3];
  };
  std::vector<std::unique_ptr<Entry>> entries;  // most recently used first

  PieceCache& Get(uint64_t owner, int kind) {
    if (!entries.empty() && entries[0]->owner == owner) return entries[0]->caches[kind];
    for (size_t i = 1; i < entries.size(); ++i) {
      if (entries[i]->owner == owner) {
        std::rotate(entries.begin(), entries.begin() + static_cast<long>(i),
                    entries.begin() + static_cast<long>(i) + 1);
        return entries[0]->caches[kind];
      }
    }
    if (entries.size() >= 4) entries.pop_back();
    auto e = std::make_unique<Entry>();
    e->owner = owner;
    entries.insert(entries.begin(), std::move(e));
    return entries[0]->caches[kind];
  }
};

ThreadCaches& Caches() {
  static thread_local ThreadCaches caches;
  return caches;
}

}  // namespace

BpeModel::~BpeModel() = default;

Result<std::unique_ptr<BpeModel>> BpeModel::Make(const json& config, const VocabAndMerges& tables) {
  const std::string what = "model BPE";
  std::unique_ptr<BpeModel> m(new BpeModel());
  m->cache_owner_ = g_next_owner.fetch_add(1);
  if (auto d = config.find("dropout"); d != config.end() && !d->is_null()) {
    if (!d->is_number() || d->get<double>() != 0.0) {
      return Unsupported(what + ": dropout is random; Reel cannot reproduce it");
    }
  }
  auto optional_string = [&](const char* key, std::string& out, bool& present) -> Status {
    present = false;
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return Status::Ok();
    if (!it->is_string()) return Unsupported(what + ": \"" + key + "\" must be a string");
    out = it->get<std::string>();
    present = true;
    return Status::Ok();
  };
  bool present;
  REEL_RETURN_IF_ERROR(optional_string("unk_token", m->unk_token_, m->has_unk_token_));
  REEL_RETURN_IF_ERROR(optional_string("continuing_subword_prefix", m->prefix_, present));
  REEL_RETURN_IF_ERROR(optional_string("end_of_word_suffix", m->suffix_, present));
  REEL_ASSIGN_OR_RETURN(m->fuse_unk_, GetOptionalBool(config, "fuse_unk", false, what));
  REEL_ASSIGN_OR_RETURN(m->byte_fallback_, GetOptionalBool(config, "byte_fallback", false, what));
  REEL_ASSIGN_OR_RETURN(m->ignore_merges_, GetOptionalBool(config, "ignore_merges", false, what));

  if (!tables.has_vocab) return Unsupported(what + ": \"vocab\" must be an object of token -> id");
  m->vocab_.Reserve(tables.vocab.size());
  uint32_t max_id = 0;
  for (const auto& [token, id] : tables.vocab) {
    if (id > (1u << 26)) {
      return Unsupported(what + ": the id of \"" + token + "\" is not a valid token id");
    }
    m->vocab_.Put(token, id);
    max_id = std::max(max_id, id);
  }
  m->max_id_ = max_id;
  m->id_to_entry_.assign(m->vocab_.size() == 0 ? 0 : max_id + 1, -1);
  for (size_t e = 0; e < m->vocab_.size(); ++e) {
    m->id_to_entry_[m->vocab_.Value(e)] = static_cast<int64_t>(e);
  }
  if (m->has_unk_token_) {
    const uint32_t* unk = m->vocab_.Find(m->unk_token_);
    if (unk == nullptr) {
      return Unsupported(what + ": unk_token \"" + m->unk_token_ + "\" is not in the vocabulary");
    }
    m->unk_id_ = *unk;
  }

  // The byte-fallback and unk tokens (merges of them rule out TokenizeCharWords).
  std::vector<bool> fallback_token(m->vocab_.size() == 0 ? 0 : max_id + 1, false);
  if (m->byte_fallback_) {
    for (int byte = 0; byte < 256; ++byte) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", byte);
      if (const uint32_t* id = m->vocab_.Find(std::string_view(name))) fallback_token[*id] = true;
    }
  }
  if (m->unk_id_) fallback_token[*m->unk_id_] = true;

  if (!tables.has_merges) return Unsupported(what + ": \"merges\" must be a list");
  m->merges_.Reserve(tables.merges.size());
  const size_t prefix_len = m->prefix_.size();
  uint32_t rank = 0;
  std::string a, b, merged;
  for (const auto& entry : tables.merges) {
    if (tables.legacy_merges) {
      const std::string& line = entry.first;
      if (line.rfind("#version", 0) == 0) continue;
      size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
        return Unsupported(what + ": merge " + std::to_string(rank + 1) + " (\"" + line +
                           "\") is not two tokens separated by one space");
      }
      a.assign(line, 0, space);
      b.assign(line, space + 1);
    } else {
      a = entry.first;
      b = entry.second;
    }
    const uint32_t* ia = m->vocab_.Find(a);
    const uint32_t* ib = m->vocab_.Find(b);
    if (ia == nullptr || ib == nullptr) {
      return Unsupported(what + ": merge " + std::to_string(rank + 1) + " uses a token (\"" +
                         (ia == nullptr ? a : b) + "\") that is not in the vocabulary");
    }
    if (b.size() < prefix_len) {
      return Unsupported(what + ": merge " + std::to_string(rank + 1) +
                         " is shorter than the continuing_subword_prefix");
    }
    merged.assign(a);
    merged.append(b, prefix_len, std::string::npos);
    const uint32_t* im = m->vocab_.Find(merged);
    if (im == nullptr) {
      return Unsupported(what + ": merge " + std::to_string(rank + 1) + " makes \"" + merged +
                         "\", which is not in the vocabulary");
    }
    if (*ia > MergeTable::kMaxId || *ib > MergeTable::kMaxId || rank > MergeTable::kMaxRank) {
      return Unsupported(what + ": more than 2,097,150 token ids or 4,194,303 merges");
    }
    m->merges_.Put(*ia, *ib, rank, *im);
    if (fallback_token[*ia] || fallback_token[*ib]) m->merges_fallback_tokens_ = true;
    ++rank;
  }
  m->merge_count_ = rank;
  m->merges_.Finish();

  m->simple_bytes_ = m->prefix_.empty() && m->suffix_.empty();
  for (int byte = 0; byte < 256; ++byte) {
    const uint32_t* id = m->vocab_.Find(ByteLevelUtf8(static_cast<uint8_t>(byte)));
    m->byte_ids_[static_cast<size_t>(byte)] = id == nullptr ? -1 : *id;
    if (id == nullptr || *id > MergeTable::kMaxId) m->simple_bytes_ = false;
  }
  // (The merge loop of byte-level pieces needs every id it meets within the merge table's
  // range; a vocabulary with larger ids takes the general path.)
  if (m->merges_.MaxMergedId() > MergeTable::kMaxId) m->simple_bytes_ = false;
  if (m->simple_bytes_) {
    for (int byte = 0; byte < 256; ++byte) {
      m->byte_token_ids_[static_cast<size_t>(byte)] =
          static_cast<uint32_t>(m->byte_ids_[static_cast<size_t>(byte)]);
    }
    m->byte_merge_tables_ = {&m->merges_, m->byte_token_ids_.data(), nullptr};
    m->byte_pairs_.resize(1 << 16);
    for (int a = 0; a < 256; ++a) {
      for (int b = 0; b < 256; ++b) {
        m->byte_pairs_[(a << 8) | b] = m->merges_.Rank(static_cast<uint32_t>(m->byte_ids_[a]),
                                                       static_cast<uint32_t>(m->byte_ids_[b]));
      }
    }
  }
  if (m->ignore_merges_) {
    // Whole-piece lookups of byte-level pieces go through the bytes the tokens stand for.
    m->byte_vocab_.Reserve(m->vocab_.size());
    for (size_t e = 0; e < m->vocab_.size(); ++e) {
      std::string_view token = m->vocab_.Key(e);
      std::string bytes;
      size_t i = 0;
      bool ok = true;
      while (i < token.size()) {
        int byte = CharToByte(NextCodePoint(token, i));
        if (byte < 0) {
          ok = false;
          break;
        }
        bytes.push_back(static_cast<char>(byte));
      }
      if (ok && m->byte_vocab_.Find(bytes) == nullptr)
        m->byte_vocab_.Put(bytes, m->vocab_.Value(e));
    }
    size_t bits = 64;
    int shift = 58;
    while (bits < m->byte_vocab_.size() * 16) {
      bits <<= 1;
      --shift;
    }
    m->token_filter_.assign(bits / 64, 0);
    m->token_filter_shift_ = shift;
    for (size_t e = 0; e < m->byte_vocab_.size(); ++e) {
      std::string_view key = m->byte_vocab_.Key(e);
      m->max_token_bytes_ = std::max(m->max_token_bytes_, key.size());
      uint64_t bit = HashBytes(key) >> shift;
      m->token_filter_[bit >> 6] |= 1ull << (bit & 63);
    }
  }
  m->byte_merge_tables_.pair_ranks = m->byte_pairs_.data();
  return m;
}

std::optional<uint32_t> BpeModel::TokenToId(std::string_view token) const {
  const uint32_t* id = vocab_.Find(token);
  if (id == nullptr) return std::nullopt;
  return *id;
}

std::optional<std::string_view> BpeModel::IdToToken(uint32_t id) const {
  if (id >= id_to_entry_.size() || id_to_entry_[id] < 0) return std::nullopt;
  return vocab_.Key(static_cast<size_t>(id_to_entry_[id]));
}

PieceCache& BpeModel::ThreadCache(bool byte_level) const {
  return Caches().Get(cache_owner_, byte_level ? kByteLevelPieces : kPlainPieces);
}

void BpeModel::Tokenize(std::string_view text, bool byte_level, std::vector<uint32_t>& out) const {
  if (text.empty()) return;
  Tokenize(text, byte_level, ThreadCache(byte_level), HashBytes(text), out);
}

void BpeModel::Tokenize(std::string_view text, bool byte_level, PieceCache& cache, uint64_t hash,
                        std::vector<uint32_t>& out) const {
  if (text.empty()) return;
  if (text.size() > kMaxCachedPieceBytes) {
    TokenizeUncached(text, byte_level, out);
    return;
  }
  if (cache.Find(text, hash, out)) return;
  size_t before = out.size();
  TokenizeUncached(text, byte_level, out);
  cache.Insert(text, hash, out.data() + before, out.size() - before);
}

void BpeModel::TokenizePieces(std::string_view text, std::span<const PieceSpan> pieces,
                              bool byte_level, std::vector<uint32_t>& out) const {
  PieceCache& cache = ThreadCache(byte_level);
  if (byte_level && simple_bytes_) {
    TokenizeBytePieces(text, pieces, cache, out);
    return;
  }
  // In batches: hash the pieces and prefetch their cache slots, then look them up (the
  // lookups of new text miss the CPU caches; issued together, the misses overlap).
  constexpr size_t kBatch = 16;
  uint64_t hashes[kBatch];
  for (size_t b = 0; b < pieces.size(); b += kBatch) {
    const size_t n = std::min(kBatch, pieces.size() - b);
    for (size_t k = 0; k < n; ++k) {
      const PieceSpan& p = pieces[b + k];
      hashes[k] = HashBytes(text.substr(p.start, p.end - p.start));
      cache.Prefetch(hashes[k]);
    }
    for (size_t k = 0; k < n; ++k) {
      const PieceSpan& p = pieces[b + k];
      Tokenize(text.substr(p.start, p.end - p.start), byte_level, cache, hashes[k], out);
    }
  }
}

namespace {

// Per-thread space of TokenizeBytePieces.
constexpr size_t kPieceBatch = 256;
struct PieceBatch {
  uint64_t hashes[kPieceBatch];
  const uint32_t* ids[kPieceBatch];  // each piece's ids: in the cache, byte_token_ids_ or `buffer`
  uint32_t counts[kPieceBatch];
  uint32_t misses[kPieceBatch];  // the pieces not in the cache
  uint32_t merged[kPieceBatch];  // the piece of each of `merges`
  std::vector<BytePiece> merges;
  std::vector<uint32_t> buffer;
  std::vector<uint32_t> long_ids;
  // TokenizeWords: added tokens' ids (padded: four ids are read from each), words given as ids,
  // a word substituted.
  uint32_t tokens[kPieceBatch + 3];
  std::pair<uint32_t, uint32_t> repeats[kPieceBatch];  // (word, the same word earlier)
  std::vector<IdPiece> id_pieces;
  std::string substituted;
};

PieceBatch& Batch() {
  static thread_local PieceBatch batch;
  return batch;
}

// The end of a batch of pieces [b, b + n): appends every piece's ids in order, then caches the
// pieces that were missing (s.misses[0, miss_count)). Nearly every piece has at most four ids:
// they are copied as one 16-byte block (every source has room: the cache and the other sources
// are padded), into room made for it.
void FinishBatch(const PieceBatch& s, std::string_view text, std::span<const PieceSpan> pieces,
                 size_t b, size_t n, size_t miss_count, PieceCache& cache,
                 std::vector<uint32_t>& out) {
  size_t total = 0;
  for (size_t k = 0; k < n; ++k) total += s.counts[k];
  const size_t at = out.size();
  out.resize(at + total + 3);
  uint32_t* o = out.data() + at;
  for (size_t k = 0; k < n; ++k) {
    if (s.counts[k] <= 4) {
      uint32_t block[4];
      std::memcpy(block, s.ids[k], sizeof block);
      std::memcpy(o, block, sizeof block);
    } else {
      std::memcpy(o, s.ids[k], s.counts[k] * sizeof(uint32_t));
    }
    o += s.counts[k];
  }
  out.resize(at + total);
  for (size_t m = 0; m < miss_count; ++m) {
    const size_t k = s.misses[m];
    const PieceSpan& span = pieces[b + k];
    std::string_view piece = text.substr(span.start, span.end - span.start);
    if (piece.size() <= BpeModel::kMaxCachedPieceBytes) {
      cache.Insert(piece, s.hashes[k], s.ids[k], s.counts[k]);
    }
  }
}

// Per-thread space of TokenizeCharWords.
struct CharWordsScratch {
  std::string buffer;  // the texts with the prefix, when there is one
  std::vector<AddedPiece> prefixed;
  std::vector<PieceSpan> words;
};

}  // namespace

// Batches of pieces: (1) hash each and prefetch its cache slot, then the entry the slot points
// to (a piece's own slot is nearly always the one); (2) look them up; (3) tokenize
// the ones not found, merging them all together; (4) append every piece's ids in order; (5)
// cache the new ones (after (4): an insertion may move what the found ones point into).
void BpeModel::TokenizeBytePieces(std::string_view text, std::span<const PieceSpan> pieces,
                                  PieceCache& cache, std::vector<uint32_t>& out) const {
  PieceBatch& s = Batch();
  auto piece_text = [&](size_t i) {
    return text.substr(pieces[i].start, pieces[i].end - pieces[i].start);
  };
  for (size_t b = 0; b < pieces.size(); b += kPieceBatch) {
    const size_t n = std::min(kPieceBatch, pieces.size() - b);
    for (size_t k = 0; k < n; ++k) {
      s.hashes[k] = HashBytes(piece_text(b + k));
      cache.Prefetch(s.hashes[k]);
    }
    for (size_t k = 0; k < n; ++k) cache.PrefetchEntry(s.hashes[k]);
    size_t miss_count = 0, miss_bytes = 0;
    for (size_t k = 0; k < n; ++k) {
      std::string_view piece = piece_text(b + k);
      if (piece.size() <= 1) {  // one byte, one token: not worth a cache slot
        s.ids[k] = &byte_token_ids_[piece.empty() ? 0 : static_cast<uint8_t>(piece[0])];
        s.counts[k] = static_cast<uint32_t>(piece.size());
        continue;
      }
      size_t count = 0;
      const uint32_t* ids =
          piece.size() <= kMaxCachedPieceBytes ? cache.Lookup(piece, s.hashes[k], count) : nullptr;
      if (ids != nullptr) {
        s.ids[k] = ids;
        s.counts[k] = static_cast<uint32_t>(count);
        continue;
      }
      s.misses[miss_count++] = static_cast<uint32_t>(k);
      miss_bytes += piece.size();  // a byte-level piece has at most one id per byte
    }
    if (miss_count > 0) {
      s.buffer.resize(miss_bytes + 3);
      s.merges.clear();
      uint32_t* dest = s.buffer.data();
      for (size_t m = 0; m < miss_count; ++m) {
        const size_t k = s.misses[m];
        std::string_view piece = piece_text(b + k);
        uint32_t* ids = dest;
        dest += piece.size();
        s.ids[k] = ids;
        if (ignore_merges_ && piece.size() <= max_token_bytes_ && MaybeToken(s.hashes[k])) {
          if (const uint32_t* id = byte_vocab_.Find(piece, s.hashes[k])) {
            ids[0] = *id;
            s.counts[k] = 1;
            continue;
          }
        }
        if (piece.size() <= kMaxMergePieceBytes) {
          s.merged[s.merges.size()] = static_cast<uint32_t>(k);
          s.merges.push_back({reinterpret_cast<const unsigned char*>(piece.data()),
                              static_cast<uint32_t>(piece.size()), 0, ids});
          continue;
        }
        s.long_ids.clear();
        TokenizeUncached(piece, true, s.long_ids);
        std::copy(s.long_ids.begin(), s.long_ids.end(), ids);
        s.counts[k] = static_cast<uint32_t>(s.long_ids.size());
      }
      MergeBytePieces(byte_merge_tables_, s.merges);
      for (size_t j = 0; j < s.merges.size(); ++j) s.counts[s.merged[j]] = s.merges[j].count;
    }
    FinishBatch(s, text, pieces, b, n, miss_count, cache, out);
  }
}

bool BpeModel::EnableCharWords(const CharSubstitution& substitution) {
  char_words_.reset();
  if (!prefix_.empty() || !suffix_.empty() || ignore_merges_ || merges_fallback_tokens_ ||
      max_id_ > MergeTable::kMaxId) {
    return false;
  }
  std::vector<uint32_t> byte_ids;
  if (byte_fallback_) {
    for (int byte = 0; byte < 256; ++byte) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", byte);
      const uint32_t* id = vocab_.Find(std::string_view(name));
      if (id == nullptr) {
        byte_ids.clear();
        break;
      }
      byte_ids.push_back(*id);
    }
  }
  // A character with neither a token nor byte fallback, and no unk token, is dropped: its
  // neighbours would meet across it, and a cut next to it could separate them.
  if (byte_ids.empty() && !unk_id_) return false;
  char_words_ = CharWords::Make(vocab_, substitution, byte_ids);
  return char_words_ != nullptr;
}

void BpeModel::TokenizeCharWords(std::string_view text, std::span<const AddedPiece> pieces,
                                 std::vector<uint32_t>& out) const {
  PieceCache& cache = Caches().Get(cache_owner_, kRawWords);
  static thread_local CharWordsScratch scratch;
  const std::string& prefix = char_words_->substitution().prefix;
  if (!prefix.empty()) {
    // Each text with the prefix before it, in one buffer (the prefix has no replaced
    // character: as raw text, it stands for itself).
    scratch.buffer.clear();
    scratch.prefixed.clear();
    for (const AddedPiece& p : pieces) {
      if (p.end == p.start || p.id >= 0) {
        scratch.prefixed.push_back(p);
        continue;
      }
      const auto at = static_cast<uint32_t>(scratch.buffer.size());
      scratch.buffer += prefix;
      scratch.buffer.append(text.substr(p.start, p.end - p.start));
      scratch.prefixed.push_back({at, static_cast<uint32_t>(scratch.buffer.size()), -1});
    }
    text = scratch.buffer;
    pieces = scratch.prefixed;
  }
  // Words of several texts go together (a line is a text in files whose added tokens include
  // "\n"; its few words alone would keep few merges in flight).
  constexpr size_t kFlush = 4096;
  std::vector<PieceSpan>& words = scratch.words;
  words.clear();
  for (const AddedPiece& p : pieces) {
    if (p.end == p.start) continue;
    if (p.id >= 0) {
      words.push_back({static_cast<uint32_t>(p.id), kTokenSpan});
    } else {
      char_words_->Cut(text.substr(p.start, p.end - p.start), p.start, words);
    }
    if (words.size() >= kFlush) {
      TokenizeWords(text, words, cache, out);
      words.clear();
    }
  }
  TokenizeWords(text, words, cache, out);
}

// As TokenizeBytePieces: batches of words hashed and prefetched, looked up, the new ones merged
// together, every word's ids appended, the new ones cached.
void BpeModel::TokenizeWords(std::string_view text, std::span<const PieceSpan> words,
                             PieceCache& cache, std::vector<uint32_t>& out) const {
  PieceBatch& s = Batch();
  auto word_text = [&](size_t i) {
    return text.substr(words[i].start, words[i].end - words[i].start);
  };
  constexpr size_t kSeenSlots = 2 * kPieceBatch;
  constexpr uint16_t kEmptySeen = 0xFFFF;
  uint16_t seen[kSeenSlots];
  for (size_t b = 0; b < words.size(); b += kPieceBatch) {
    const size_t n = std::min(kPieceBatch, words.size() - b);
    std::fill(seen, seen + kSeenSlots, kEmptySeen);
    size_t repeat_count = 0;
    for (size_t k = 0; k < n; ++k) {
      if (words[b + k].end == kTokenSpan) continue;
      s.hashes[k] = HashBytes(word_text(b + k));
      cache.Prefetch(s.hashes[k]);
    }
    for (size_t k = 0; k < n; ++k) {
      if (words[b + k].end != kTokenSpan) cache.PrefetchEntry(s.hashes[k]);
    }
    size_t miss_count = 0, miss_bytes = 0;
    for (size_t k = 0; k < n; ++k) {
      if (words[b + k].end == kTokenSpan) {
        s.tokens[k] = words[b + k].start;
        s.ids[k] = &s.tokens[k];
        s.counts[k] = 1;
        continue;
      }
      std::string_view word = word_text(b + k);
      size_t count = 0;
      const uint32_t* ids =
          word.size() <= kMaxCachedPieceBytes ? cache.Lookup(word, s.hashes[k], count) : nullptr;
      if (ids != nullptr) {
        s.ids[k] = ids;
        s.counts[k] = static_cast<uint32_t>(count);
        continue;
      }
      // A word new twice in a batch (new text repeats itself) is merged once.
      size_t slot = (s.hashes[k] >> 40) & (kSeenSlots - 1);
      bool repeated = false;
      for (; seen[slot] != kEmptySeen; slot = (slot + 1) & (kSeenSlots - 1)) {
        const size_t j = seen[slot];
        if (s.hashes[j] == s.hashes[k] && word_text(b + j) == word) {
          s.repeats[repeat_count++] = {static_cast<uint32_t>(k), static_cast<uint32_t>(j)};
          repeated = true;
          break;
        }
      }
      if (repeated) continue;
      seen[slot] = static_cast<uint16_t>(k);
      s.misses[miss_count++] = static_cast<uint32_t>(k);
      miss_bytes += word.size();  // a word has at most one first id per byte
    }
    if (miss_count > 0) {
      s.buffer.resize(miss_bytes + 3);
      s.id_pieces.clear();
      uint32_t* dest = s.buffer.data();
      for (size_t m = 0; m < miss_count; ++m) {
        const size_t k = s.misses[m];
        std::string_view word = word_text(b + k);
        uint32_t* ids = dest;
        dest += word.size();
        s.ids[k] = ids;
        const uint32_t count = char_words_->FirstIds(word, ids);
        s.counts[k] = count;
        if (count == 1) continue;
        if (count >= 2 && count <= kMaxMergePieceIds) {
          s.merged[s.id_pieces.size()] = static_cast<uint32_t>(k);
          s.id_pieces.push_back({count, 0, ids});
          continue;
        }
        // Long words, and characters left to the unk token: the general way, on the word
        // substituted (the same ids: a word merges on its own).
        char_words_->Substitute(word, s.substituted);
        s.long_ids.clear();
        TokenizeUncached(s.substituted, false, s.long_ids);
        // (No more ids than bytes: each character gives one id or its bytes' ids, and the
        // substitute has a token.)
        const size_t kept = std::min(s.long_ids.size(), word.size());
        std::copy(s.long_ids.begin(), s.long_ids.begin() + static_cast<long>(kept), ids);
        s.counts[k] = static_cast<uint32_t>(kept);
      }
      MergeIdPieces(merges_, s.id_pieces);
      for (size_t j = 0; j < s.id_pieces.size(); ++j) {
        s.counts[s.merged[j]] = s.id_pieces[j].count;
      }
    }
    for (size_t r = 0; r < repeat_count; ++r) {
      const auto [k, first] = s.repeats[r];
      s.ids[k] = s.ids[first];
      s.counts[k] = s.counts[first];
    }
    FinishBatch(s, text, words, b, n, miss_count, cache, out);
  }
}

void BpeModel::TokenizeUncached(std::string_view text, bool byte_level,
                                std::vector<uint32_t>& out) const {
  if (ignore_merges_) {
    const uint32_t* id = (byte_level ? byte_vocab_ : vocab_).Find(text);
    if (id != nullptr) {
      out.push_back(*id);
      return;
    }
  }
  static thread_local std::vector<uint32_t> ids;
  ids.clear();
  if (byte_level && simple_bytes_) {
    for (unsigned char b : text) ids.push_back(static_cast<uint32_t>(byte_ids_[b]));
    MergeAll(ids, reinterpret_cast<const unsigned char*>(text.data()));
    out.insert(out.end(), ids.begin(), ids.end());
    return;
  } else if (byte_level) {
    std::string mapped;
    AppendByteLevel(text, mapped);
    InitialSymbols(mapped, ids);
  } else {
    InitialSymbols(text, ids);
  }
  MergeAll(ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

void BpeModel::InitialSymbols(std::string_view text, std::vector<uint32_t>& ids) const {
  bool has_pending_unk = false;
  uint32_t pending_unk = 0;
  std::string s;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    NextCodePoint(text, i);
    bool first = start == 0;
    bool last = i == text.size();
    s.clear();
    if (!first) s.append(prefix_);
    s.append(text.substr(start, i - start));
    if (last) s.append(suffix_);
    if (const uint32_t* id = vocab_.Find(s)) {
      if (has_pending_unk) {
        ids.push_back(pending_unk);
        has_pending_unk = false;
      }
      ids.push_back(*id);
      continue;
    }
    if (byte_fallback_) {
      std::vector<uint32_t> bytes;
      bool all = true;
      for (unsigned char b : s) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        const uint32_t* bt = vocab_.Find(std::string_view(name));
        if (bt == nullptr) {
          all = false;
          break;
        }
        bytes.push_back(*bt);
      }
      if (all) {
        ids.insert(ids.end(), bytes.begin(), bytes.end());
        continue;  // (a pending unk stays pending, as in the library)
      }
    }
    if (unk_id_) {
      if (has_pending_unk && !fuse_unk_) ids.push_back(pending_unk);
      has_pending_unk = true;
      pending_unk = *unk_id_;
    }
    // Without an unk token the character is dropped, as in the library.
  }
  if (has_pending_unk) ids.push_back(pending_unk);
}

void BpeModel::MergeAll(std::vector<uint32_t>& ids, const unsigned char* bytes) const {
  const size_t n = ids.size();
  if (n < 2) return;
  if (n <= 64) {
    // Small pieces: rescan the ranks of neighbouring pairs; lowest rank, leftmost first.
    uint32_t ranks[64];
    size_t len = n;
    if (bytes != nullptr) {
      for (size_t i = 0; i + 1 < len; ++i) {
        ranks[i] = byte_pairs_[(static_cast<size_t>(bytes[i]) << 8) | bytes[i + 1]];
      }
    } else {
      for (size_t i = 0; i + 1 < len; ++i) merges_.Prefetch(ids[i], ids[i + 1]);
      for (size_t i = 0; i + 1 < len; ++i) ranks[i] = merges_.Rank(ids[i], ids[i + 1]);
    }
    for (size_t i = 0; i + 1 < len; ++i) merges_.PrefetchMerged(ranks[i]);
    while (true) {
      // The lowest (rank, position), without branches: ranks in the high half of the key.
      uint64_t min_key = ~0ull;
      for (size_t i = 0; i + 1 < len; ++i) {
        uint64_t key = (static_cast<uint64_t>(ranks[i]) << 32) | i;
        min_key = key < min_key ? key : min_key;
      }
      uint32_t best = static_cast<uint32_t>(min_key >> 32);
      size_t at = static_cast<size_t>(min_key & 0xFFFFFFFFu);
      if (best == MergeTable::kNone) break;
      ids[at] = merges_.Merged(best);
      --len;
      for (size_t i = at + 1; i < len; ++i) ids[i] = ids[i + 1];
      for (size_t i = at + 1; i + 1 < len; ++i) ranks[i] = ranks[i + 1];
      if (at > 0) merges_.Prefetch(ids[at - 1], ids[at]);
      if (at + 1 < len) merges_.Prefetch(ids[at], ids[at + 1]);
      if (at > 0) {
        ranks[at - 1] = merges_.Rank(ids[at - 1], ids[at]);
        merges_.PrefetchMerged(ranks[at - 1]);
      }
      if (at + 1 < len) {
        ranks[at] = merges_.Rank(ids[at], ids[at + 1]);
        merges_.PrefetchMerged(ranks[at]);
      }
    }
    ids.resize(len);
    return;
  }
  // Long pieces: the library's algorithm, a heap of candidate merges checked when popped.
  struct Node {
    uint32_t id;
    int32_t prev, next;
    bool alive;
  };
  std::vector<Node> nodes(n);
  for (size_t i = 0; i < n; ++i) {
    nodes[i] = {ids[i], static_cast<int32_t>(i) - 1, i + 1 < n ? static_cast<int32_t>(i + 1) : -1,
                true};
  }
  struct Candidate {
    uint32_t rank;
    uint32_t pos;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  for (size_t i = 0; i + 1 < n; ++i) {
    uint32_t r = merges_.Rank(ids[i], ids[i + 1]);
    if (r != MergeTable::kNone) queue.push({r, static_cast<uint32_t>(i)});
  }
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Node& left = nodes[top.pos];
    if (!left.alive || left.next < 0) continue;
    Node& right = nodes[static_cast<size_t>(left.next)];
    // A stale entry: the pair at this position changed since it was queued. (Equal ranks mean
    // the same merge: a rank belongs to one pair.)
    if (merges_.Rank(left.id, right.id) != top.rank) continue;
    left.id = merges_.Merged(top.rank);
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0)
      nodes[static_cast<size_t>(right.next)].prev = static_cast<int32_t>(top.pos);
    if (left.prev >= 0) {
      uint32_t r = merges_.Rank(nodes[static_cast<size_t>(left.prev)].id, left.id);
      if (r != MergeTable::kNone) queue.push({r, static_cast<uint32_t>(left.prev)});
    }
    if (left.next >= 0) {
      uint32_t r = merges_.Rank(left.id, nodes[static_cast<size_t>(left.next)].id);
      if (r != MergeTable::kNone) queue.push({r, top.pos});
    }
  }
  ids.clear();
  for (const Node& node : nodes) {
    if (node.alive) ids.push_back(node.id);
  }
}

}  // namespace reel::llm::internal
