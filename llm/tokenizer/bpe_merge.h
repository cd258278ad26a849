// The merge loop of BPE for many pieces at once, in the library's order (lowest rank first,
// leftmost first among equal ranks). MergeBytePieces and MergeIdPieces only read the tables; they
// may run concurrently. Why round-robin: llm/tokenizer/README.md, "BPE merge".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace reel::llm::internal {

class MergeTable;

// What the merge loop of byte-level pieces reads. Every byte id and merged id must be at most
// MergeTable::kMaxId (the loop looks pairs up without clamping them).
struct ByteMergeTables {
  const MergeTable* merges = nullptr;
  const uint32_t* byte_ids = nullptr;    // the token id of each byte (256)
  const uint32_t* pair_ranks = nullptr;  // rank of the ids of bytes (a, b) at [a << 8 | b]
};

// The longest piece MergeBytePieces takes.
inline constexpr size_t kMaxMergePieceBytes = 64;

// A piece to merge: `length` bytes (2 to kMaxMergePieceBytes); its ids are written to `ids`
// (room for `length`) and their number to `count`.
struct BytePiece {
  const unsigned char* bytes;
  uint32_t length;
  uint32_t count;
  uint32_t* ids;
};

// Which instructions the merge loop uses: the best the processor has (AVX2 where present), or
// only the portable ones (SSE2 on x86-64; for tests, which compare the two).
enum class MergeInstructions { kBest, kPortable };

void MergeBytePieces(const ByteMergeTables& tables, std::span<BytePiece> pieces,
                     MergeInstructions instructions = MergeInstructions::kBest);

// The longest piece MergeIdPieces takes, in ids.
inline constexpr size_t kMaxMergePieceIds = kMaxMergePieceBytes;

// A piece given as ids: `ids` holds its `length` first ids (2 to kMaxMergePieceIds, each at most
// MergeTable::kMaxId) and receives the merged ones, their number in `count`.
struct IdPiece {
  uint32_t length;
  uint32_t count;
  uint32_t* ids;
};

// The same loop for pieces given as ids (their first ranks come from the merge table, looked up
// a round after their buckets are prefetched).
void MergeIdPieces(const MergeTable& merges, std::span<IdPiece> pieces,
                   MergeInstructions instructions = MergeInstructions::kBest);

}  // namespace reel::llm::internal
