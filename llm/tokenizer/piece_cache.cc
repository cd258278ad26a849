#include "llm/tokenizer/piece_cache.h"

#include <cstring>

#include "llm/tokenizer/hash_tables.h"

namespace reel::llm::internal {

PieceCache::PieceCache(size_t max_entries) : max_entries_(max_entries) { Clear(); }

void PieceCache::Clear() {
  slots_.assign(4096, 0);
  mask_ = slots_.size() - 1;
  size_ = 0;
  arena_.assign(kPadding, 0);
}

const uint32_t* PieceCache::Lookup(std::string_view key, uint64_t hash, size_t& count) const {
  const uint64_t tag = Tag(hash);
  for (size_t i = tag & mask_;; i = (i + 1) & mask_) {
    const uint64_t s = slots_[i];
    if (s == 0) return nullptr;
    if ((s >> 32) != tag) continue;
    const uint32_t* entry = arena_.data() + (static_cast<uint32_t>(s) - 1);
    const uint32_t length = entry[0] & 0xFFFF, ids = entry[0] >> 16;
    if (length == key.size() &&
        SameBytes(reinterpret_cast<const char*>(entry + 1 + ids), key.data(), key.size())) {
      count = ids;
      return entry + 1;
    }
  }
}

bool PieceCache::Find(std::string_view key, uint64_t hash, std::vector<uint32_t>& out) const {
  size_t count = 0;
  const uint32_t* ids = Lookup(key, hash, count);
  if (ids == nullptr) return false;
  out.insert(out.end(), ids, ids + count);
  return true;
}

void PieceCache::Insert(std::string_view key, uint64_t hash, const uint32_t* ids, size_t count) {
  if (key.empty() || key.size() > 0xFFFF || count > 0xFFFF) return;
  size_t existing = 0;
  if (Lookup(key, hash, existing) != nullptr) return;
  if (size_ >= max_entries_) Clear();
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  const size_t words = 1 + count + (key.size() + 3) / 4;
  const size_t offset = arena_.size() - kPadding;
  if (offset + words + kPadding >= 0xFFFFFFFFu) return;  // (an arena of 16 GB: never)
  arena_.resize(offset + words + kPadding);
  uint32_t* entry = arena_.data() + offset;
  entry[0] = static_cast<uint32_t>(key.size() | count << 16);
  std::memcpy(entry + 1, ids, count * sizeof(uint32_t));
  entry[words - 1] = 0;  // the key's last word, partly padding
  std::memcpy(entry + 1 + count, key.data(), key.size());
  std::memset(entry + words, 0, kPadding * sizeof(uint32_t));
  const uint64_t tag = Tag(hash);
  size_t i = tag & mask_;
  while (slots_[i] != 0) i = (i + 1) & mask_;
  slots_[i] = tag << 32 | (offset + 1);
  ++size_;
}

// The slots keep the high half of the hash, which is what places them: no key is read again.
void PieceCache::Grow() {
  std::vector<uint64_t> old(slots_.size() * 2, 0);
  old.swap(slots_);
  mask_ = slots_.size() - 1;
  for (uint64_t s : old) {
    if (s == 0) continue;
    size_t i = (s >> 32) & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

}  // namespace reel::llm::internal
