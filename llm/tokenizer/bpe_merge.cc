#include "llm/tokenizer/bpe_merge.h"

#include <climits>
#include <cstring>
#include <memory>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define REEL_HAVE_AVX2 1
#define REEL_AVX2 __attribute__((target("avx2,bmi")))
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "llm/tokenizer/merge_table.h"

namespace reel::llm::internal {
namespace {

// Ranks are kept as int32 with "no merge" the largest value.
constexpr int32_t kNoMerge = INT32_MAX;

// MergeTable's kNone (all ones) becomes kNoMerge; ranks (22 bits) stay. No branch: whether a
// pair merges is a coin toss to a branch predictor.
int32_t ToRank(uint32_t rank) {
  static_assert(MergeTable::kNone == 0xFFFFFFFFu && MergeTable::kMaxRank < kNoMerge);
  return static_cast<int32_t>(rank & 0x7FFFFFFFu);
}

// Ranks are searched in blocks of 32 (pieces are nearly all shorter), with no branch on the
// piece's length inside a block; the padding keeps every block in bounds.
constexpr uint32_t kBlock = 32;
constexpr uint32_t kArray = kMaxMergePieceBytes + 2 + kBlock;
// An id no merge uses, before and after the piece's ids: every merge then has a left and a
// right neighbour pair to look up, which takes fewer instructions than branches that guess
// wrong a third of the time.
constexpr uint32_t kSentinel = MergeTable::kMaxId + 1;

// One piece being merged: a list of symbols at fixed positions (a merge joins a symbol with
// the next one alive, which leaves the list), so nothing is moved.
struct Lane {
  uint32_t* out;  // where the merged ids go
  uint32_t* out_count;
  uint32_t n;  // the piece's bytes are at positions 1..n; 0 and n + 1 hold kSentinel
  // The position of the last merge, whose pairs with its neighbours are to be looked up in the
  // buckets prefetched (and the buckets); 0 when none.
  uint32_t pending;
  uint32_t pending_bucket[2];
  // A piece loaded from ids: the ranks of all its pairs are to be looked up (their buckets were
  // prefetched when it was loaded).
  bool initial;
  uint8_t next[kArray], prev[kArray];  // the neighbours alive of each position alive
  uint32_t ids[kArray];
  // ranks[i]: the pair (ids[i], ids[next[i]]) of a position alive; kNoMerge for the others.
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

// The two searches of the merge loop, for any x86-64 (SSE2) or other processor:
//   FindLowest: the lowest rank among ranks[0, count) (count >= 1) and the first position
//     holding it (any position when it is kNoMerge); ranks[count, ...) hold kNoMerge up to the
//     end of the block.
//   RankIn: MergeTable::RankIn.
struct Portable {
  static uint32_t FindLowest(const int32_t* ranks, uint32_t count, int32_t& lowest) {
#if defined(__SSE2__)
    __m128i m = _mm_set1_epi32(kNoMerge);
    uint32_t i = 0;
    do {
      for (uint32_t j = i; j < i + kBlock; j += 16) {
        m = Min32(m, Min32(Min32(Load4(ranks + j), Load4(ranks + j + 4)),
                           Min32(Load4(ranks + j + 8), Load4(ranks + j + 12))));
      }
      i += kBlock;
    } while (i < count);
    m = Min32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = Min32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
    lowest = _mm_cvtsi128_si32(m);
    for (i = 0;; i += 16) {
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
  static uint32_t RankIn(const MergeTable& merges, size_t bucket, uint32_t a, uint32_t b) {
    return merges.RankIn(bucket, a, b);
  }
};

#if defined(REEL_HAVE_AVX2)
// The same with AVX2 (a minimum in one instruction, a bucket in two registers), chosen at run
// time where the processor has it.
struct Avx2 {
  // (Helpers, not lambdas: a lambda does not take the function's target attribute.)
  REEL_AVX2 static __m256i Load8(const int32_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  REEL_AVX2 static uint32_t EqualMask(const int32_t* p, __m256i value) {
    return static_cast<uint32_t>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(Load8(p), value))));
  }
  // Bit k set when slot k of the four at `p` holds the pair of `key`.
  REEL_AVX2 static uint32_t SameKeys(const uint64_t* p, __m256i key, __m256i pair_bits) {
    __m256i x = _mm256_xor_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)), key);
    return static_cast<uint32_t>(_mm256_movemask_pd(_mm256_castsi256_pd(
        _mm256_cmpeq_epi64(_mm256_and_si256(x, pair_bits), _mm256_setzero_si256()))));
  }

  REEL_AVX2 static uint32_t FindLowest(const int32_t* ranks, uint32_t count, int32_t& lowest) {
    __m256i m = _mm256_set1_epi32(kNoMerge);
    uint32_t i = 0;
    do {
      m = _mm256_min_epi32(
          m, _mm256_min_epi32(_mm256_min_epi32(Load8(ranks + i), Load8(ranks + i + 8)),
                              _mm256_min_epi32(Load8(ranks + i + 16), Load8(ranks + i + 24))));
      i += kBlock;
    } while (i < count);
    __m128i h = _mm_min_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    h = _mm_min_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
    h = _mm_min_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
    lowest = _mm_cvtsi128_si32(h);
    const __m256i all = _mm256_broadcastd_epi32(h);
    for (i = 0;; i += kBlock) {
      uint32_t bits = EqualMask(ranks + i, all) | EqualMask(ranks + i + 8, all) << 8 |
                      EqualMask(ranks + i + 16, all) << 16 | EqualMask(ranks + i + 24, all) << 24;
      if (bits != 0) return i + static_cast<uint32_t>(__builtin_ctz(bits));
    }
  }

  REEL_AVX2 static uint32_t RankIn(const MergeTable& merges, size_t bucket, uint32_t a,
                                   uint32_t b) {
    static_assert(MergeTable::kSlots == 8);
    const uint64_t* slots = merges.Slots(bucket);
    const __m256i key = _mm256_set1_epi64x(static_cast<long long>(MergeTable::SlotKey(a, b)));
    const __m256i pair_bits = _mm256_set1_epi64x(~static_cast<long long>(MergeTable::kMaxRank));
    const uint32_t found = SameKeys(slots, key, pair_bits) | SameKeys(slots + 4, key, pair_bits)
                                                                 << 4;
    // The slot found (slot 0 when none, its rank then replaced): no branch on "found".
    const uint32_t rank =
        static_cast<uint32_t>(slots[__builtin_ctz(found | 0x100) & 7] & MergeTable::kMaxRank);
    if ((static_cast<int>(found == 0) & static_cast<int>(merges.Overflowed(bucket))) != 0)
        [[unlikely]] {
      return merges.RankPastBucket(bucket, a, b);
    }
    return found != 0 ? rank : MergeTable::kNone;
  }
};
#endif

template <class Isa>
class Merger {
 public:
  explicit Merger(const ByteMergeTables& t) : t_(t), merges_(*t.merges) {}

  void Load(Lane& lane, BytePiece& piece) const {
    const unsigned char* b = piece.bytes;
    const uint32_t n = piece.length;
    lane.out = piece.ids;
    lane.out_count = &piece.count;
    lane.n = n;
    lane.pending = 0;
    lane.initial = false;
    lane.ids[0] = kSentinel;
    lane.ranks[0] = kNoMerge;
    for (uint32_t i = 0; i < n; ++i) {
      lane.ids[i + 1] = t_.byte_ids[b[i]];
      lane.next[i] = static_cast<uint8_t>(i + 1);
      lane.prev[i + 1] = static_cast<uint8_t>(i);
    }
    lane.next[n] = static_cast<uint8_t>(n + 1);
    lane.ids[n + 1] = kSentinel;
    for (uint32_t i = 0; i + 1 < n; ++i) {
      const uint32_t rank = t_.pair_ranks[(static_cast<uint32_t>(b[i]) << 8) | b[i + 1]];
      lane.ranks[i + 1] = ToRank(rank);
      merges_.PrefetchMerged(rank);
    }
    for (uint32_t i = n; i < n + kBlock; i += 4) {
      std::memcpy(lane.ranks + i, kNoMerges, sizeof kNoMerges);
    }
  }

  // A piece given as ids: the buckets of its pairs are prefetched; Resolve reads them.
  void Load(Lane& lane, IdPiece& piece) const {
    const uint32_t n = piece.length;
    lane.out = piece.ids;
    lane.out_count = &piece.count;
    lane.n = n;
    lane.pending = 0;
    lane.initial = true;
    lane.ids[0] = kSentinel;
    lane.ranks[0] = kNoMerge;
    for (uint32_t i = 0; i < n; ++i) {
      lane.ids[i + 1] = piece.ids[i];
      lane.next[i] = static_cast<uint8_t>(i + 1);
      lane.prev[i + 1] = static_cast<uint8_t>(i);
    }
    lane.next[n] = static_cast<uint8_t>(n + 1);
    lane.ids[n + 1] = kSentinel;
    for (uint32_t i = 1; i < n; ++i) {
      merges_.PrefetchBucket(merges_.Locate(lane.ids[i], lane.ids[i + 1]));
    }
    for (uint32_t i = n; i < n + kBlock; i += 4) {
      std::memcpy(lane.ranks + i, kNoMerges, sizeof kNoMerges);
    }
  }

  // Looks up the ranks of the last merge's new pairs. (A round does this for every lane before
  // any lane's Step: the ranks are written as single words and read back as vectors, and a
  // vector load right behind such stores waits for them to reach the cache.)
  void Resolve(Lane& lane) const {
    if (lane.initial) [[unlikely]] {
      for (uint32_t i = 1; i < lane.n; ++i) {
        const uint32_t rank = Isa::RankIn(merges_, merges_.Locate(lane.ids[i], lane.ids[i + 1]),
                                          lane.ids[i], lane.ids[i + 1]);
        lane.ranks[i] = ToRank(rank);
        merges_.PrefetchMerged(rank);
      }
      lane.initial = false;
      return;
    }
    if (const uint32_t p = lane.pending; p != 0) {
      const uint32_t left = lane.prev[p], right = lane.next[p];
      const uint32_t r0 = Isa::RankIn(merges_, lane.pending_bucket[0], lane.ids[left], lane.ids[p]);
      const uint32_t r1 =
          Isa::RankIn(merges_, lane.pending_bucket[1], lane.ids[p], lane.ids[right]);
      lane.ranks[left] = ToRank(r0);
      lane.ranks[p] = ToRank(r1);
      // Where merged ids are read from a table, from a round before they may be needed.
      merges_.PrefetchMerged(r0);
      merges_.PrefetchMerged(r1);
      lane.pending = 0;
    }
  }

  // One merge after Resolve; false when the piece is done and its ids written out.
  bool Step(Lane& lane) const {
    int32_t best;
    const uint32_t at = Isa::FindLowest(lane.ranks, lane.n + 1, best);
    if (best == kNoMerge) {
      uint32_t count = 0;
      for (uint32_t i = lane.next[0]; i <= lane.n; i = lane.next[i])
        lane.out[count++] = lane.ids[i];
      *lane.out_count = count;
      return false;
    }
    Apply(lane, at, static_cast<uint32_t>(best));
    return true;
  }

 private:
  static constexpr int32_t kNoMerges[4] = {kNoMerge, kNoMerge, kNoMerge, kNoMerge};

  // Joins the symbol at `at` with the next one into the merged id and prefetches what the
  // ranks of its two new pairs need.
  void Apply(Lane& lane, uint32_t at, uint32_t rank) const {
    const uint32_t gone = lane.next[at];
    const uint32_t right = lane.next[gone];
    const uint32_t left = lane.prev[at];
    lane.ids[at] = merges_.Merged(rank);
    lane.ranks[gone] = kNoMerge;
    lane.next[at] = static_cast<uint8_t>(right);
    lane.prev[right] = static_cast<uint8_t>(at);
    lane.pending = at;
    const size_t b0 = merges_.Locate(lane.ids[left], lane.ids[at]);
    const size_t b1 = merges_.Locate(lane.ids[at], lane.ids[right]);
    merges_.PrefetchBucket(b0);
    merges_.PrefetchBucket(b1);
    lane.pending_bucket[0] = static_cast<uint32_t>(b0);
    lane.pending_bucket[1] = static_cast<uint32_t>(b1);
  }

  const ByteMergeTables& t_;
  const MergeTable& merges_;
};

template <class Isa, class Piece>
inline void MergePieces(const ByteMergeTables& tables, std::span<Piece> pieces) {
  // Enough pieces in flight that a prefetch has a few hundred instructions to arrive (32 was
  // fastest on the benchmark: the lookups of 8 still waited on memory).
  constexpr size_t kLanes = 32;
  const Merger<Isa> merger(tables);
  // (32 KB: per thread, not on the stack of whatever thread tokenizes.)
  static thread_local std::unique_ptr<Lane[]> storage(new Lane[kLanes]);
  Lane* lanes = storage.get();
  Lane* active[kLanes];
  size_t active_count = 0;
  size_t next = 0;
  for (; active_count < kLanes && next < pieces.size(); ++active_count) {
    active[active_count] = &lanes[active_count];
    merger.Load(*active[active_count], pieces[next++]);
  }
  while (active_count > 0) {
    for (size_t k = 0; k < active_count; ++k) merger.Resolve(*active[k]);
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

#if defined(REEL_HAVE_AVX2)
// (flatten: the whole loop compiled for AVX2, with everything it calls inlined into it.)
REEL_AVX2 __attribute__((flatten)) void MergePiecesAvx2(const ByteMergeTables& tables,
                                                        std::span<BytePiece> pieces) {
  MergePieces<Avx2>(tables, pieces);
}
REEL_AVX2 __attribute__((flatten)) void MergeIdPiecesAvx2(const ByteMergeTables& tables,
                                                          std::span<IdPiece> pieces) {
  MergePieces<Avx2>(tables, pieces);
}
#endif

}  // namespace

void MergeBytePieces(const ByteMergeTables& tables, std::span<BytePiece> pieces,
                     MergeInstructions instructions) {
#if defined(REEL_HAVE_AVX2)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi");
  if (avx2 && instructions == MergeInstructions::kBest) {
    MergePiecesAvx2(tables, pieces);
    return;
  }
#endif
  MergePieces<Portable>(tables, pieces);
}

void MergeIdPieces(const MergeTable& merges, std::span<IdPiece> pieces,
                   MergeInstructions instructions) {
  const ByteMergeTables tables{&merges, nullptr, nullptr};
#if defined(REEL_HAVE_AVX2)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi");
  if (avx2 && instructions == MergeInstructions::kBest) {
    MergeIdPiecesAvx2(tables, pieces);
    return;
  }
#endif
  MergePieces<Portable>(tables, pieces);
}

}  // namespace reel::llm::internal
