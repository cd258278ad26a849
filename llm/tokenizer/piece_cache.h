// A cache from a piece's bytes to its ids, one per thread and model: text seen before skips the
// merges. Thread safety: none; each thread has its own (BpeModel::ThreadCache).
// The layout: llm/tokenizer/README.md, "Piece cache".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace reel::llm::internal {

class PieceCache {
 public:
  explicit PieceCache(size_t max_entries = 1 << 20);

  void Clear();

  // Starts loading the slot a key of this hash (HashBytes) is looked up in: the lookups of
  // consecutive pieces are independent, and prefetched as a batch their cache misses overlap.
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[Home(hash)]); }

  // After Prefetch: starts loading the entry the slot points to (a lookup reads the slot, then
  // the entry; a batch of lookups done in these three steps waits for memory once, not twice).
  void PrefetchEntry(uint64_t hash) const {
    const uint64_t s = slots_[Home(hash)];
    if ((s >> 32) == Tag(hash) && s != 0) {
      __builtin_prefetch(arena_.data() + (static_cast<uint32_t>(s) - 1));
    }
  }

  // The cached ids of `key` (`hash` = HashBytes(key)) and their number, or nullptr. The
  // pointer is valid until the next Insert or Clear; at least four ids can be read from it
  // (those past `count` are meaningless), so that callers may copy short lists as one block.
  const uint32_t* Lookup(std::string_view key, uint64_t hash, size_t& count) const;
  // Appends the cached ids of `key` to `out` and returns true, or returns false.
  bool Find(std::string_view key, uint64_t hash, std::vector<uint32_t>& out) const;

  // Adds `key` with its ids, unless it is there already. Keys or id lists longer than 65,535
  // are not cached.
  void Insert(std::string_view key, uint64_t hash, const uint32_t* ids, size_t count);

  size_t size() const { return size_; }

 private:
  static constexpr size_t kPadding = 4;  // zero words after the last entry (see Lookup)
  // A slot: the high 32 bits of the hash, which also place it, and the entry's offset + 1.
  static uint64_t Tag(uint64_t hash) { return hash >> 32; }
  size_t Home(uint64_t hash) const { return Tag(hash) & mask_; }
  void Grow();

  std::vector<uint64_t> slots_;  // 0: empty; else Tag << 32 | (offset of the entry in arena_ + 1)
  std::vector<uint32_t> arena_;  // entries: [key length | id count << 16] [ids] [key, padded]
  size_t mask_ = 0;
  size_t size_ = 0;
  size_t max_entries_;
};

}  // namespace reel::llm::internal
