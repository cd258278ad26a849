// Compact hash tables for the tokenizer's hot paths: merge ranks keyed by a pair of ids, and a
// cache from a pre-token's bytes to its ids. Open addressing, linear probing, power-of-two
// sizes; no deletion (the cache is cleared as a whole when full).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace reel::llm::internal {

inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// A hash of a byte string (not cryptographic; stable within a process).
inline uint64_t HashBytes(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ Mix64(w)) * 0x9fb21c651e98df25ull;
    p += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  h = (h ^ Mix64(tail ^ (static_cast<uint64_t>(n) << 56))) * 0x9fb21c651e98df25ull;
  return h ^ (h >> 29);
}

// (left id, right id) -> (rank, merged id).
class MergeTable {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  void Reserve(size_t count) {
    size_t cap = 16;
    while (cap < count * 2) cap <<= 1;
    keys_.assign(cap, kEmpty);
    values_.assign(cap, 0);
    mask_ = cap - 1;
  }
  // Inserts or overwrites (a later merge of the same pair wins, as in the library).
  void Put(uint32_t a, uint32_t b, uint32_t rank, uint32_t merged) {
    uint64_t key = Key(a, b);
    size_t i = Mix64(key) & mask_;
    while (keys_[i] != kEmpty && keys_[i] != key) i = (i + 1) & mask_;
    keys_[i] = key;
    values_[i] = (static_cast<uint64_t>(rank) << 32) | merged;
  }
  // Rank and merged id of (a, b); rank kNone if the pair does not merge.
  inline void Get(uint32_t a, uint32_t b, uint32_t& rank, uint32_t& merged) const {
    uint64_t key = Key(a, b);
    size_t i = Mix64(key) & mask_;
    while (true) {
      uint64_t k = keys_[i];
      if (k == key) {
        rank = static_cast<uint32_t>(values_[i] >> 32);
        merged = static_cast<uint32_t>(values_[i]);
        return;
      }
      if (k == kEmpty) {
        rank = kNone;
        return;
      }
      i = (i + 1) & mask_;
    }
  }
  size_t MemoryBytes() const { return keys_.size() * 16; }

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  static uint64_t Key(uint32_t a, uint32_t b) { return (static_cast<uint64_t>(a) << 32) | b; }
  std::vector<uint64_t> keys_;
  std::vector<uint64_t> values_;
  size_t mask_ = 0;
};

// Bytes -> small list of ids. Keys and values live in two arenas.
class PieceCache {
 public:
  explicit PieceCache(size_t max_entries = 1 << 18) : max_entries_(max_entries) { Clear(); }

  void Clear() {
    slots_.assign(1024, Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    keys_.clear();
    ids_.clear();
  }

  // Appends the cached ids of `key` to `out` and returns true, or returns false.
  bool Find(std::string_view key, uint64_t hash, std::vector<uint32_t>& out) const {
    hash |= 1;  // 0 marks an empty slot
    size_t i = hash & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return false;
      if (s.hash == hash && s.length == key.size() &&
          std::memcmp(keys_.data() + s.key_offset, key.data(), key.size()) == 0) {
        out.insert(out.end(), ids_.begin() + s.ids_offset,
                   ids_.begin() + s.ids_offset + s.id_count);
        return true;
      }
      i = (i + 1) & mask_;
    }
  }

  void Insert(std::string_view key, uint64_t hash, const uint32_t* ids, size_t count) {
    if (key.empty() || key.size() > 0xFFFF || count > 0xFFFF) return;
    hash |= 1;
    if (size_ >= max_entries_) Clear();
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    size_t i = hash & mask_;
    while (slots_[i].hash != 0) i = (i + 1) & mask_;
    Slot& s = slots_[i];
    s.hash = hash;
    s.key_offset = static_cast<uint32_t>(keys_.size());
    s.length = static_cast<uint16_t>(key.size());
    s.id_count = static_cast<uint16_t>(count);
    s.ids_offset = static_cast<uint32_t>(ids_.size());
    keys_.append(key);
    ids_.insert(ids_.end(), ids, ids + count);
    ++size_;
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_offset = 0;
    uint32_t ids_offset = 0;
    uint16_t length = 0;
    uint16_t id_count = 0;
  };
  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.hash == 0) continue;
      size_t i = s.hash & mask_;
      while (slots_[i].hash != 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  size_t max_entries_;
  std::string keys_;
  std::vector<uint32_t> ids_;
};

}  // namespace reel::llm::internal
