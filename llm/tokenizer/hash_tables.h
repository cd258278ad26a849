// Hashing and comparing short byte strings, and the vocabulary map (bytes -> id), for the
// tokenizer's hot paths (merge ranks: merge_table.h; the piece cache: piece_cache.h). Open
// addressing, linear probing, power-of-two sizes; no deletion.
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

}  // namespace reel::llm::internal
