#include "llm/tokenizer/merge_table.h"

namespace reel::llm::internal {

void MergeTable::Reserve(size_t count) {
  buckets_.assign(count * 2 / kSlots + 1, Bucket{});
  overflowed_.assign(buckets_.size() / 64 + 1, 0);
  merged_.assign(count, 0);
}

void MergeTable::Put(uint32_t a, uint32_t b, uint32_t rank, uint32_t merged) {
  const uint64_t pair = Pair(a, b);
  for (size_t i = Index(pair);; i = Next(i)) {
    for (uint64_t& slot : buckets_[i].slots) {
      if (slot == kEmpty || (slot >> 22) == pair) {
        slot = (pair << 22) | rank;
        if (rank >= merged_.size()) merged_.resize(rank + 1);
        merged_[rank] = merged;
        return;
      }
    }
    overflowed_[i >> 6] |= 1ull << (i & 63);
  }
}

void MergeTable::Finish() {
  merged_offset_ = merged_.empty() ? 0 : static_cast<int64_t>(merged_[0]);
  affine_ = true;
  for (size_t r = 0; r < merged_.size() && affine_; ++r) {
    affine_ = static_cast<int64_t>(merged_[r]) == static_cast<int64_t>(r) + merged_offset_;
  }
  max_merged_ = 0;
  for (uint32_t id : merged_) max_merged_ = id > max_merged_ ? id : max_merged_;
}

uint32_t MergeTable::RankAfter(uint64_t pair, size_t i) const {
  while (OverflowBit(i) != 0) {
    i = Next(i);
    for (uint64_t slot : buckets_[i].slots) {
      if ((slot >> 22) == pair) return static_cast<uint32_t>(slot & kMaxRank);
    }
  }
  return kNone;
}

size_t MergeTable::MemoryBytes() const {
  return buckets_.size() * sizeof(Bucket) + overflowed_.size() * 8 + merged_.size() * 4;
}

}  // namespace reel::llm::internal
