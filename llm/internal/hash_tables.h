// Compact hash tables for the tokenizer's hot paths: the vocabulary (bytes -> id) and a cache
// from a pre-token's bytes to its ids (merge ranks: merge_table.h). Open addressing, linear
// probing, power-of-two sizes; no deletion (the cache is cleared as a whole when full).
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

// A hash of a byte string (not cryptographic; stable within a process). The last, partial word
// is read as overlapping loads rather than byte by byte: pieces are short, and a copy of a
// variable length is a call and a mispredicted branch.
inline uint64_t HashBytes(std::string_view s) {
  const char* p = s.data();
  const size_t n = s.size();
  auto word8 = [](const char* q) {
    uint64_t w;
    std::memcpy(&w, q, 8);
    return w;
  };
  auto word4 = [](const char* q) {
    uint32_t w;
    std::memcpy(&w, q, 4);
    return w;
  };
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xff51afd7ed558ccdull);
  uint64_t tail;
  if (n >= 8) {
    size_t i = 0;
    for (; i + 8 < n; i += 8) h = (h ^ Mix64(word8(p + i))) * 0x9fb21c651e98df25ull;
    tail = word8(p + n - 8);  // the last 8 bytes (overlapping the previous word, if any)
  } else if (n >= 4) {
    tail = (static_cast<uint64_t>(word4(p + n - 4)) << 32) | word4(p);
  } else {
    tail = n == 0 ? 0
                  : static_cast<uint64_t>(static_cast<unsigned char>(p[0])) |
                        static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 |
                        static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16;
  }
  h = (h ^ Mix64(tail ^ (static_cast<uint64_t>(n) << 56))) * 0x9fb21c651e98df25ull;
  return h ^ (h >> 29);
}

// Whether a[0, n) == b[0, n): short strings (most pieces) with a few overlapping word loads
// instead of a call to memcmp.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  auto word8 = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  auto word4 = [](const char* p) {
    uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
  };
  if (n >= 8) {
    if (n > 24) return std::memcmp(a, b, n) == 0;
    uint64_t d = (word8(a) ^ word8(b)) | (word8(a + n - 8) ^ word8(b + n - 8));
    if (n > 16) d |= word8(a + 8) ^ word8(b + 8);
    return d == 0;
  }
  if (n >= 4) return ((word4(a) ^ word4(b)) | (word4(a + n - 4) ^ word4(b + n - 4))) == 0;
  return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

// Strings -> uint32 (the vocabulary). Keys live in one arena; a later Put of the same key
// overwrites the value (as a JSON object read into a hash map does).
class StringIdMap {
 public:
  void Reserve(size_t count) {
    entries_.reserve(count);
    size_t cap = 16;
    while (cap < count * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
  }
  void Put(std::string_view key, uint32_t value) {
    if ((entries_.size() + 1) * 2 > slots_.size()) Grow();
    uint64_t h = HashBytes(key) | 1;
    size_t i = h & mask_;
    while (slots_[i].hash != 0) {
      if (slots_[i].hash == h && Key(slots_[i].entry) == key) {
        entries_[slots_[i].entry].value = value;
        return;
      }
      i = (i + 1) & mask_;
    }
    slots_[i] = {h, static_cast<uint32_t>(entries_.size())};
    entries_.push_back(
        {static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(key.size()), value});
    arena_.append(key);
  }
  const uint32_t* Find(std::string_view key) const { return Find(key, HashBytes(key)); }
  // The same with `hash` = HashBytes(key) already known.
  const uint32_t* Find(std::string_view key, uint64_t hash) const {
    if (slots_.empty()) return nullptr;
    uint64_t h = hash | 1;
    size_t i = h & mask_;
    while (slots_[i].hash != 0) {
      if (slots_[i].hash == h && Key(slots_[i].entry) == key) {
        return &entries_[slots_[i].entry].value;
      }
      i = (i + 1) & mask_;
    }
    return nullptr;
  }
  size_t size() const { return entries_.size(); }
  std::string_view Key(size_t entry) const {
    return {arena_.data() + entries_[entry].offset, entries_[entry].length};
  }
  uint32_t Value(size_t entry) const { return entries_[entry].value; }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t entry = 0;
  };
  struct Entry {
    uint32_t offset, length, value;
  };
  void Grow() {
    size_t cap = slots_.empty() ? 16 : slots_.size() * 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (size_t e = 0; e < entries_.size(); ++e) {
      uint64_t h = HashBytes(Key(e)) | 1;
      size_t i = h & mask_;
      while (slots_[i].hash != 0) i = (i + 1) & mask_;
      slots_[i] = {h, static_cast<uint32_t>(e)};
    }
  }
  std::string arena_;
  std::vector<Entry> entries_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

// Bytes -> small list of ids. A slot is one 64-byte cache line holding a piece of up to 24
// bytes and up to 5 ids inline (nearly every piece); longer ones live in two arenas.
class PieceCache {
 public:
  explicit PieceCache(size_t max_entries = 1 << 20) : max_entries_(max_entries) { Clear(); }

  void Clear() {
    slots_.assign(1024, Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    keys_.clear();
    ids_.clear();
  }

  // Starts loading the slot a key of this hash is looked up in (lookups of consecutive pieces
  // are independent: prefetching a batch overlaps their cache misses).
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[(hash | 1) & mask_]); }

  // The cached ids of `key` (`hash` = HashBytes(key)) and their number, or nullptr. The
  // pointer is valid until the next Insert.
  const uint32_t* Lookup(std::string_view key, uint64_t hash, size_t& count) const {
    hash |= 1;  // 0 marks an empty slot
    size_t i = hash & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return nullptr;
      if (s.hash == hash && s.length == key.size() && SameBytes(KeyOf(s), key.data(), key.size())) {
        count = s.id_count;
        return s.id_count <= kInlineIds ? s.ids : ids_.data() + s.ids[0];
      }
      i = (i + 1) & mask_;
    }
  }
  // Appends the cached ids of `key` to `out` and returns true, or returns false.
  bool Find(std::string_view key, uint64_t hash, std::vector<uint32_t>& out) const {
    size_t count = 0;
    const uint32_t* ids = Lookup(key, hash, count);
    if (ids == nullptr) return false;
    out.insert(out.end(), ids, ids + count);
    return true;
  }

  // Adds `key` (unless it is there already).
  void Insert(std::string_view key, uint64_t hash, const uint32_t* ids, size_t count) {
    if (key.empty() || key.size() > 0xFFFF || count > 0xFFFF) return;
    hash |= 1;
    if (size_ >= max_entries_) Clear();
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    size_t i = hash & mask_;
    for (; slots_[i].hash != 0; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.hash == hash && s.length == key.size() && SameBytes(KeyOf(s), key.data(), key.size())) {
        return;
      }
    }
    Slot& s = slots_[i];
    s.hash = hash;
    s.length = static_cast<uint16_t>(key.size());
    s.id_count = static_cast<uint16_t>(count);
    if (key.size() <= kInlineKey) {
      std::memcpy(s.key, key.data(), key.size());
    } else {
      uint32_t offset = static_cast<uint32_t>(keys_.size());
      std::memcpy(s.key, &offset, 4);
      keys_.append(key);
    }
    if (count <= kInlineIds) {
      if (count > 0) std::memcpy(s.ids, ids, count * 4);
    } else {
      s.ids[0] = static_cast<uint32_t>(ids_.size());
      ids_.insert(ids_.end(), ids, ids + count);
    }
    ++size_;
  }

  size_t size() const { return size_; }

 private:
  static constexpr size_t kInlineKey = 24;
  static constexpr size_t kInlineIds = 5;
  struct alignas(64) Slot {
    uint64_t hash = 0;
    uint16_t length = 0;
    uint16_t id_count = 0;
    uint32_t ids[kInlineIds] = {};
    char key[kInlineKey] = {};
  };
  static_assert(sizeof(Slot) == 64, "one cache line per slot");
  const char* KeyOf(const Slot& s) const {
    if (s.length <= kInlineKey) return s.key;
    uint32_t offset;
    std::memcpy(&offset, s.key, 4);
    return keys_.data() + offset;
  }
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
