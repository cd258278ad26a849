#include "llm/internal/bpe_merge.h"

#include <climits>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "llm/internal/merge_table.h"

namespace reel::llm::internal {
namespace {

// Ranks are kept as int32 with "no merge" the largest value.
constexpr int32_t kNoMerge = INT32_MAX;

int32_t ToRank(uint32_t rank) {
  return rank == MergeTable::kNone ? kNoMerge : static_cast<int32_t>(rank);
}

// The arrays of a lane are worked on in blocks of 16 entries, with no branch on the piece's
// length inside a block; the padding keeps every block in bounds.
constexpr uint32_t kBlock = 16;
constexpr uint32_t kArray = kMaxMergePieceBytes + 2 + 2 * kBlock;
// An id no merge uses, before and after the piece's ids: every merge then has a left and a
// right neighbour pair to look up, which takes fewer instructions than branches that guess
// wrong a third of the time.
constexpr uint32_t kSentinel = MergeTable::kMaxId + 1;

// One piece being merged.
struct Lane {
  BytePiece* piece;
  uint32_t len;  // the piece's ids are ids[1, len]; ids[0] and ids[len + 1] are kSentinel
  // The position of the last merge: the ranks at pending - 1 and pending are to be looked up
  // (their buckets were prefetched); 0 when none.
  uint32_t pending;
  // When merged ids take a table load: the merge found, applied next round; or 0.
  uint32_t merge_at;
  int32_t merge_rank;
  uint32_t ids[kArray];
  // ranks[i]: the pair (ids[i], ids[i + 1]); kNoMerge from len on, to the end.
  int32_t ranks[kArray];
};

#if defined(__SSE2__)
inline __m128i Min32(__m128i a, __m128i b) {  // (SSE2 has no pminsd)
  __m128i a_less = _mm_cmplt_epi32(a, b);
  return _mm_or_si128(_mm_and_si128(a_less, a), _mm_andnot_si128(a_less, b));
}
inline __m128i Load4(const int32_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
#endif

// The lowest rank among ranks[0, count) (count >= 1) and the first position holding it (any
// position when it is kNoMerge). ranks[count, ...) hold kNoMerge up to the end of the block.
inline uint32_t FindLowest(const int32_t* ranks, uint32_t count, int32_t& lowest) {
#if defined(__SSE2__)
  __m128i m = _mm_set1_epi32(kNoMerge);
  uint32_t i = 0;
  do {
    m = Min32(m, Min32(Min32(Load4(ranks + i), Load4(ranks + i + 4)),
                       Min32(Load4(ranks + i + 8), Load4(ranks + i + 12))));
    i += kBlock;
  } while (i < count);
  m = Min32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = Min32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
  lowest = _mm_cvtsi128_si32(m);
  for (i = 0;; i += kBlock) {
    auto mask = [&](uint32_t at) {
      return static_cast<uint32_t>(
          _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(Load4(ranks + at), m))));
    };
    uint32_t bits = mask(i) | mask(i + 4) << 4 | mask(i + 8) << 8 | mask(i + 12) << 12;
    if (bits != 0) return i + static_cast<uint32_t>(__builtin_ctz(bits));
  }
#else
  uint64_t min_key = ~0ull;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t key = (static_cast<uint64_t>(ranks[i]) << 32) | i;
    min_key = key < min_key ? key : min_key;
  }
  lowest = static_cast<int32_t>(min_key >> 32);
  return static_cast<uint32_t>(min_key & 0xFFFFFFFFu);
#endif
}

// a[i] = a[i + 1] for i in [from, to), in whole blocks, at least one (reads a[from + 16]).
template <typename T>
inline void ShiftLeft(T* a, uint32_t from, uint32_t to) {
  uint32_t i = from;
  do {
    T block[kBlock];
    std::memcpy(block, a + i + 1, sizeof block);
    std::memcpy(a + i, block, sizeof block);
    i += kBlock;
  } while (i < to);
}

class Merger {
 public:
  explicit Merger(const ByteMergeTables& t) : t_(t), merges_(*t.merges) {}

  void Load(Lane& lane, BytePiece& piece) const {
    const unsigned char* b = piece.bytes;
    const uint32_t n = piece.length;
    lane.piece = &piece;
    lane.len = n;
    lane.pending = 0;
    lane.merge_at = 0;
    lane.ids[0] = kSentinel;
    for (uint32_t i = 0; i < n; ++i) lane.ids[i + 1] = t_.byte_ids[b[i]];
    lane.ids[n + 1] = kSentinel;
    lane.ranks[0] = kNoMerge;
    for (uint32_t i = 0; i + 1 < n; ++i) {
      lane.ranks[i + 1] = ToRank(t_.pair_ranks[(static_cast<uint32_t>(b[i]) << 8) | b[i + 1]]);
    }
    for (uint32_t i = n; i < n + 2 * kBlock; i += 4) {
      std::memcpy(lane.ranks + i, kNoMerges, sizeof kNoMerges);
    }
  }

  // One merge (or half of one); false when the piece is done and its ids written out.
  bool Step(Lane& lane) const {
    if (lane.merge_at != 0) {
      Apply(lane, lane.merge_at, static_cast<uint32_t>(lane.merge_rank));
      lane.merge_at = 0;
      return true;
    }
    if (const uint32_t p = lane.pending; p != 0) {
      lane.ranks[p - 1] = ToRank(merges_.Rank(lane.ids[p - 1], lane.ids[p]));
      lane.ranks[p] = ToRank(merges_.Rank(lane.ids[p], lane.ids[p + 1]));
    }
    int32_t best;
    const uint32_t at = FindLowest(lane.ranks, lane.len + 1, best);
    if (best == kNoMerge) {
      BytePiece& piece = *lane.piece;
      std::memcpy(piece.ids, lane.ids + 1, lane.len * sizeof(uint32_t));
      piece.count = lane.len;
      return false;
    }
    if (merges_.MergedNeedsLoad()) {
      // Load the merged id now, use it next round.
      merges_.PrefetchMerged(static_cast<uint32_t>(best));
      lane.merge_at = at;
      lane.merge_rank = best;
      lane.pending = 0;
      return true;
    }
    Apply(lane, at, static_cast<uint32_t>(best));
    return true;
  }

 private:
  static constexpr int32_t kNoMerges[4] = {kNoMerge, kNoMerge, kNoMerge, kNoMerge};

  // Replaces ids[at], ids[at + 1] by the merged id and prefetches what the ranks of its two
  // new pairs need.
  void Apply(Lane& lane, uint32_t at, uint32_t rank) const {
    lane.ids[at] = merges_.Merged(rank);
    const uint32_t len = --lane.len;
    ShiftLeft(lane.ids, at + 1, len + 2);
    ShiftLeft(lane.ranks, at + 1, len + 1);
    lane.pending = at;
    merges_.Prefetch(lane.ids[at - 1], lane.ids[at]);
    merges_.Prefetch(lane.ids[at], lane.ids[at + 1]);
  }

  const ByteMergeTables& t_;
  const MergeTable& merges_;
};

}  // namespace

void MergeBytePieces(const ByteMergeTables& tables, std::span<BytePiece> pieces) {
  // Enough pieces in flight that a prefetch has a few hundred instructions to arrive.
  constexpr size_t kLanes = 8;
  const Merger merger(tables);
  Lane lanes[kLanes];
  Lane* active[kLanes];
  size_t active_count = 0;
  size_t next = 0;
  for (; active_count < kLanes && next < pieces.size(); ++active_count) {
    active[active_count] = &lanes[active_count];
    merger.Load(*active[active_count], pieces[next++]);
  }
  while (active_count > 0) {
    for (size_t k = 0; k < active_count;) {
      if (merger.Step(*active[k])) {
        ++k;
      } else if (next < pieces.size()) {
        merger.Load(*active[k], pieces[next++]);
        ++k;
      } else {
        active[k] = active[--active_count];
      }
    }
  }
}

}  // namespace reel::llm::internal
