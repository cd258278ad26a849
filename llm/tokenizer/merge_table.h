// The merges of a BPE model: (left id, right id) -> rank, and rank -> merged id, laid out for the
// tokenizer's inner loop. Thread safety: const methods may run concurrently.
// The layout: llm/tokenizer/README.md, "Merge table".
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace reel::llm::internal {

class MergeTable {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  static constexpr uint32_t kMaxId = (1u << 21) - 2;
  static constexpr uint32_t kMaxRank = (1u << 22) - 1;

  // Room for `count` merges; ranks must be below `count`.
  void Reserve(size_t count);
  // Inserts or overwrites (a later merge of the same pair wins, as in the library). Ids must be
  // <= kMaxId and ranks <= kMaxRank.
  void Put(uint32_t a, uint32_t b, uint32_t rank, uint32_t merged);
  // Call after the last Put.
  void Finish();

  // The rank of (a, b), or kNone if the pair does not merge.
  uint32_t Rank(uint32_t a, uint32_t b) const {
    a = Clamp(a);
    b = Clamp(b);
    return RankIn(Locate(a, b), a, b);
  }
  void Prefetch(uint32_t a, uint32_t b) const { PrefetchBucket(Locate(Clamp(a), Clamp(b))); }

  // Rank in two steps, for callers that prefetch: the bucket of (a, b), then the rank in it.
  // These take ids <= kMaxId + 1 only (Rank takes any): a larger id would spill into the other
  // id's bits, and the pair could pass for another one.
  size_t Locate(uint32_t a, uint32_t b) const { return Index(Pair(a, b)); }
  void PrefetchBucket(size_t bucket) const { __builtin_prefetch(&buckets_[bucket]); }
  uint32_t RankIn(size_t bucket, uint32_t a, uint32_t b) const {
    const uint64_t* slots = Slots(bucket);
    const uint64_t key = SlotKey(a, b);
    uint32_t rank = kNone;
#pragma GCC unroll 8
    for (size_t k = 0; k < kSlots; ++k) {
      // Equal pairs leave only the rank bits (an empty slot never does: kEmpty >> 22 is no pair).
      uint64_t x = slots[k] ^ key;
      rank = x <= kMaxRank ? static_cast<uint32_t>(x) : rank;
    }
    // (One branch, taken rarely: "not found" alone would be guessed wrong half the time.)
    if ((static_cast<uint64_t>(rank == kNone) & OverflowBit(bucket)) != 0) [[unlikely]] {
      return RankAfter(key >> 22, bucket);
    }
    return rank;
  }

  // The layout, for search loops written with vector instructions (bpe_merge.cc): a bucket is
  // kSlots words, 64-byte aligned; a pair's word is SlotKey | rank; when the pair is not among
  // them, RankPastBucket gives the answer (a rare call).
  static constexpr size_t kSlots = 8;
  static uint64_t SlotKey(uint32_t a, uint32_t b) { return Pair(a, b) << 22; }
  const uint64_t* Slots(size_t bucket) const { return buckets_[bucket].slots; }
  bool Overflowed(size_t bucket) const { return OverflowBit(bucket) != 0; }
  uint32_t RankPastBucket(size_t bucket, uint32_t a, uint32_t b) const {
    return Overflowed(bucket) ? RankAfter(Pair(a, b), bucket) : kNone;
  }
  // The id a merge of the given rank makes.
  uint32_t Merged(uint32_t rank) const {
    return affine_ ? static_cast<uint32_t>(rank + merged_offset_) : merged_[rank];
  }
  void PrefetchMerged(uint32_t rank) const {
    if (!affine_ && rank != kNone) __builtin_prefetch(&merged_[rank]);
  }
  // The largest id a merge makes.
  uint32_t MaxMergedId() const { return max_merged_; }
  size_t MemoryBytes() const;

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  struct alignas(64) Bucket {
    uint64_t slots[kSlots] = {kEmpty, kEmpty, kEmpty, kEmpty, kEmpty, kEmpty, kEmpty, kEmpty};
  };
  static uint64_t Pair(uint32_t a, uint32_t b) { return (static_cast<uint64_t>(a) << 21) | b; }
  // Ids above kMaxId (a vocabulary may have them; no merge does) become kMaxId + 1, which no
  // merge has either.
  static uint32_t Clamp(uint32_t id) { return id <= kMaxId ? id : kMaxId + 1; }
  // One multiplication (it spreads the pair's bits into the high ones), then the high bits
  // scaled to the bucket count.
  size_t Index(uint64_t pair) const {
    uint64_t h = pair * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>((static_cast<unsigned __int128>(h) * buckets_.size()) >> 64);
  }
  size_t Next(size_t i) const { return i + 1 == buckets_.size() ? 0 : i + 1; }
  uint64_t OverflowBit(size_t i) const { return (overflowed_[i >> 6] >> (i & 63)) & 1; }
  // The rank of `pair` when its bucket `i` overflowed: the buckets after it.
  uint32_t RankAfter(uint64_t pair, size_t i) const;

  std::vector<Bucket> buckets_;
  std::vector<uint64_t> overflowed_;  // a bit per bucket: a pair of it went on to the next
  std::vector<uint32_t> merged_;
  bool affine_ = false;
  int64_t merged_offset_ = 0;
  uint32_t max_merged_ = 0;
};

}  // namespace reel::llm::internal
