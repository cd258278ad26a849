// The merge table (llm/tokenizer/merge_table.h) and the merge loops (llm/tokenizer/bpe_merge.h)
// of byte-level pieces and of pieces given as ids against plain reference code: random merge
// lists (with repeated pairs, as real files have, and enough merges that buckets overflow),
// random pieces over a small alphabet so that they merge a lot, both instruction sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "llm/tokenizer/bpe_merge.h"
#include "llm/tokenizer/merge_table.h"

namespace reel::llm::internal {
namespace {

struct Model {
  MergeTable table;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint32_t>> reference;  // rank, id
  std::vector<uint32_t> byte_ids, pair_ranks;
};

// `merges` random merges of tokens made so far; merged ids rank + 256 (`affine`) or scattered.
void MakeModel(Model& m, int merges, bool affine, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> ids(256 + merges);
  std::iota(ids.begin(), ids.end(), 0);
  if (!affine) std::shuffle(ids.begin() + 256, ids.end(), rng);
  m.byte_ids.assign(ids.begin(), ids.begin() + 256);
  std::shuffle(m.byte_ids.begin(), m.byte_ids.end(), rng);
  // The merges are made of the tokens of bytes 0-11 and what they merge into.
  std::vector<uint32_t> tokens(m.byte_ids.begin(), m.byte_ids.begin() + 12);
  m.table.Reserve(static_cast<size_t>(merges));
  for (int r = 0; r < merges; ++r) {
    uint32_t a = tokens[rng() % tokens.size()], b = tokens[rng() % tokens.size()];
    uint32_t merged = ids[256 + r];
    m.table.Put(a, b, static_cast<uint32_t>(r), merged);
    m.reference[{a, b}] = {static_cast<uint32_t>(r), merged};  // a later merge of a pair wins
    tokens.push_back(merged);
  }
  m.table.Finish();
  m.pair_ranks.resize(1 << 16);
  for (uint32_t a = 0; a < 256; ++a) {
    for (uint32_t b = 0; b < 256; ++b) {
      m.pair_ranks[a << 8 | b] = m.table.Rank(m.byte_ids[a], m.byte_ids[b]);
    }
  }
}

// Lowest rank first, leftmost among equal ranks.
std::vector<uint32_t> ReferenceMergeIds(const Model& m, std::vector<uint32_t> ids) {
  while (true) {
    size_t best = ids.size();
    uint32_t best_rank = MergeTable::kNone, merged = 0;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      auto it = m.reference.find({ids[i], ids[i + 1]});
      if (it != m.reference.end() && it->second.first < best_rank) {
        best = i;
        best_rank = it->second.first;
        merged = it->second.second;
      }
    }
    if (best == ids.size()) return ids;
    ids[best] = merged;
    ids.erase(ids.begin() + static_cast<long>(best) + 1);
  }
}

std::vector<uint32_t> ReferenceMerge(const Model& m, const std::vector<unsigned char>& bytes) {
  std::vector<uint32_t> ids;
  for (unsigned char b : bytes) ids.push_back(m.byte_ids[b]);
  return ReferenceMergeIds(m, ids);
}

TEST(BpeMergeTest, TableFindsEveryMergeAndNothingElse) {
  Model m;
  MakeModel(m, 60000, /*affine=*/false, 1);
  for (const auto& [pair, value] : m.reference) {
    ASSERT_EQ(m.table.Rank(pair.first, pair.second), value.first);
    ASSERT_EQ(m.table.Merged(value.first), value.second);
  }
  std::mt19937 rng(2);
  for (int i = 0; i < 200000; ++i) {
    uint32_t a = rng() % 60300, b = rng() % 60300;
    auto it = m.reference.find({a, b});
    ASSERT_EQ(m.table.Rank(a, b), it == m.reference.end() ? MergeTable::kNone : it->second.first);
  }
}

TEST(BpeMergeTest, MergeLoopsAgreeWithTheReference) {
  for (bool affine : {true, false}) {
    Model m;
    MakeModel(m, 20000, affine, affine ? 3 : 4);
    const ByteMergeTables tables{&m.table, m.byte_ids.data(), m.pair_ranks.data()};
    std::mt19937 rng(5);
    std::vector<std::vector<unsigned char>> texts;
    for (int i = 0; i < 3000; ++i) {
      std::vector<unsigned char> t(2 + rng() % (kMaxMergePieceBytes - 1));
      // Mostly bytes 0-11 (the tokens the merges are made of), sometimes any byte.
      for (unsigned char& b : t)
        b = static_cast<unsigned char>(rng() % 8 == 0 ? rng() : rng() % 12);
      texts.push_back(t);
    }
    for (MergeInstructions instructions :
         {MergeInstructions::kBest, MergeInstructions::kPortable}) {
      std::vector<std::vector<uint32_t>> out(texts.size());
      std::vector<BytePiece> pieces;
      for (size_t i = 0; i < texts.size(); ++i) {
        out[i].assign(texts[i].size(), 0);
        pieces.push_back(
            {texts[i].data(), static_cast<uint32_t>(texts[i].size()), 0, out[i].data()});
      }
      MergeBytePieces(tables, pieces, instructions);
      int merged_some = 0;
      for (size_t i = 0; i < texts.size(); ++i) {
        std::vector<uint32_t> got(out[i].begin(), out[i].begin() + pieces[i].count);
        ASSERT_EQ(got, ReferenceMerge(m, texts[i]))
            << "piece " << i << ", affine " << affine << ", portable "
            << (instructions == MergeInstructions::kPortable);
        merged_some += got.size() < texts[i].size();
      }
      EXPECT_GT(merged_some, 1500);
    }
  }
}

// Pieces given as ids (SentencePiece-style words): any ids, merged ones among them, of every
// length the loop takes.
TEST(BpeMergeTest, MergeLoopOfIdPiecesAgreesWithTheReference) {
  Model m;
  MakeModel(m, 20000, /*affine=*/false, 6);
  std::mt19937 rng(7);
  std::vector<std::vector<uint32_t>> pieces_ids;
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint32_t> ids(2 + rng() % (kMaxMergePieceIds - 1));
    for (uint32_t& id : ids) {
      const uint32_t r = rng() % 16;
      id = r < 12 ? m.byte_ids[r] : r < 15 ? 256 + rng() % 20000 : rng() % (MergeTable::kMaxId + 1);
    }
    pieces_ids.push_back(ids);
  }
  for (MergeInstructions instructions : {MergeInstructions::kBest, MergeInstructions::kPortable}) {
    std::vector<std::vector<uint32_t>> work = pieces_ids;
    std::vector<IdPiece> pieces;
    for (auto& ids : work) pieces.push_back({static_cast<uint32_t>(ids.size()), 0, ids.data()});
    MergeIdPieces(m.table, pieces, instructions);
    int merged_some = 0;
    for (size_t i = 0; i < work.size(); ++i) {
      std::vector<uint32_t> got(work[i].begin(), work[i].begin() + pieces[i].count);
      ASSERT_EQ(got, ReferenceMergeIds(m, pieces_ids[i]))
          << "piece " << i << ", portable " << (instructions == MergeInstructions::kPortable);
      merged_some += got.size() < pieces_ids[i].size();
    }
    EXPECT_GT(merged_some, 1500);
  }
}

}  // namespace
}  // namespace reel::llm::internal
