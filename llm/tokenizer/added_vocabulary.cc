#include "llm/tokenizer/added_vocabulary.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

#include <nlohmann/json.hpp>

#include "llm/tokenizer/bpe_model.h"
#include "llm/tokenizer/normalizer.h"
#include "llm/tokenizer/unicode.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {

using nlohmann::json;

// A byte trie of the patterns, for leftmost-longest search.
struct AddedVocabulary::Trie {
  struct Node {
    std::vector<std::pair<uint8_t, uint32_t>> children;  // sorted by byte
    int64_t id = -1;                                     // a pattern ends here
    uint32_t token = 0;                                  // its index in tokens_
  };
  std::vector<Node> nodes{Node{}};
  std::array<bool, 256> first{};  // the bytes patterns start with
  int first_count = 0;
  unsigned char only_first = 0;  // the byte, when first_count is 1

  // The first position at or after `pos` where a pattern may start, or text.size(). (Texts
  // are long and added tokens rare: with one first byte, as in nearly every file, memchr.)
  size_t NextStart(std::string_view text, size_t pos) const {
    if (first_count == 1) {
      const void* p = std::memchr(text.data() + pos, only_first, text.size() - pos);
      return p == nullptr ? text.size()
                          : static_cast<size_t>(static_cast<const char*>(p) - text.data());
    }
    while (pos < text.size() && !first[static_cast<unsigned char>(text[pos])]) ++pos;
    return pos;
  }

  void Add(std::string_view pattern, uint32_t id, uint32_t token) {
    uint32_t n = 0;
    for (unsigned char b : pattern) {
      auto& kids = nodes[n].children;
      auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(b, uint32_t{0}));
      if (it != kids.end() && it->first == b) {
        n = it->second;
        continue;
      }
      auto next = static_cast<uint32_t>(nodes.size());
      kids.insert(it, {b, next});
      nodes.emplace_back();
      n = next;
    }
    nodes[n].id = id;
    nodes[n].token = token;
    auto b = static_cast<unsigned char>(pattern[0]);
    if (!first[b]) {
      first[b] = true;
      ++first_count;
      only_first = b;
    }
  }

  // The longest pattern starting at text[pos]: its length (or 0), id and index in tokens_.
  size_t LongestAt(std::string_view text, size_t pos, uint32_t& id, uint32_t& token) const {
    uint32_t n = 0;
    size_t best = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      const auto& kids = nodes[n].children;
      auto b = static_cast<uint8_t>(text[i]);
      auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(b, uint32_t{0}));
      if (it == kids.end() || it->first != b) break;
      n = it->second;
      if (nodes[n].id >= 0) {
        best = i + 1 - pos;
        id = static_cast<uint32_t>(nodes[n].id);
        token = nodes[n].token;
      }
    }
    return best;
  }
};

AddedVocabulary::AddedVocabulary() = default;
AddedVocabulary::~AddedVocabulary() = default;

Result<std::unique_ptr<AddedVocabulary>> AddedVocabulary::Make(const json& list,
                                                               const BpeModel& model,
                                                               const Normalizer* normalizer) {
  std::unique_ptr<AddedVocabulary> v(new AddedVocabulary());
  if (list.is_null()) return v;
  if (!list.is_array()) return Unsupported("added_tokens is not a list");
  // The library's add_tokens: ids from the model's vocabulary size on.
  auto next_id = static_cast<uint32_t>(model.VocabSize());
  std::map<uint32_t, AddedToken> by_id;
  for (const json& t : list) {
    if (!t.is_object() || !t.contains("content") || !t["content"].is_string()) {
      return Unsupported("added_tokens: an entry without a \"content\" string");
    }
    AddedToken token;
    token.content = t["content"].get<std::string>();
    auto flag = [&](const char* key, bool fallback) {
      auto it = t.find(key);
      return it != t.end() && it->is_boolean() ? it->get<bool>() : fallback;
    };
    token.special = flag("special", false);
    token.single_word = flag("single_word", false);
    token.lstrip = flag("lstrip", false);
    token.rstrip = flag("rstrip", false);
    token.normalized = flag("normalized", !token.special);
    if (token.content.empty()) continue;
    auto existing = v->by_content_.find(token.content);
    if (existing != v->by_content_.end()) {
      const AddedToken& old = by_id[existing->second];
      if (old.content == token.content && old.special == token.special &&
          old.single_word == token.single_word && old.lstrip == token.lstrip &&
          old.rstrip == token.rstrip && old.normalized == token.normalized) {
        continue;
      }
    }
    uint32_t id;
    if (existing != v->by_content_.end()) {
      id = existing->second;
    } else if (auto model_id = model.TokenToId(token.content)) {
      id = *model_id;
    } else {
      id = next_id++;
    }
    token.id = id;
    token.normalized_content = token.content;
    if (token.normalized && normalizer != nullptr) {
      std::string out;
      if (normalizer->Normalize(token.content, out)) token.normalized_content = out;
    }
    v->by_content_[token.content] = id;
    if (token.special) v->special_[token.content] = true;
    by_id[id] = std::move(token);
  }
  for (auto& [id, token] : by_id) {
    v->by_id_[id] = v->tokens_.size();
    v->tokens_.push_back(std::move(token));
  }
  // The library builds one matcher per kind and fails on a repeated pattern.
  std::map<std::string, uint32_t> raw_patterns, normalized_patterns;  // -> index in tokens_
  for (uint32_t index = 0; index < v->tokens_.size(); ++index) {
    const AddedToken& t = v->tokens_[index];
    auto& patterns = t.normalized ? normalized_patterns : raw_patterns;
    const std::string& pattern = t.normalized ? t.normalized_content : t.content;
    if (pattern.empty()) {
      return Unsupported("added token \"" + t.content + "\" normalizes to nothing");
    }
    if (!patterns.emplace(pattern, index).second) {
      return Unsupported("added tokens: two tokens match the same text \"" + pattern + "\"");
    }
  }
  if (!raw_patterns.empty()) {
    v->raw_trie_ = std::make_unique<Trie>();
    for (const auto& [p, index] : raw_patterns) v->raw_trie_->Add(p, v->tokens_[index].id, index);
  }
  if (!normalized_patterns.empty()) {
    v->normalized_trie_ = std::make_unique<Trie>();
    for (const auto& [p, index] : normalized_patterns) {
      v->normalized_trie_->Add(p, v->tokens_[index].id, index);
    }
  }
  return v;
}

bool AddedVocabulary::HasTokens(bool normalized) const {
  return (normalized ? normalized_trie_ : raw_trie_) != nullptr;
}

std::optional<uint32_t> AddedVocabulary::TokenToId(std::string_view content) const {
  auto it = by_content_.find(std::string(content));
  if (it == by_content_.end()) return std::nullopt;
  return it->second;
}

const std::string* AddedVocabulary::IdToToken(uint32_t id) const {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return nullptr;
  const AddedToken& t = tokens_[it->second];
  return t.normalized ? &t.normalized_content : &t.content;
}

bool AddedVocabulary::IsSpecial(std::string_view content) const {
  return special_.count(std::string(content)) != 0;
}

namespace {

// The regex crate's \w (Unicode) on the last / first character of a text.
bool EndsWithWord(std::string_view s) {
  if (s.empty()) return false;
  size_t i = s.size();
  return IsRegexWord(PrevCodePoint(s, i));
}
bool StartsWithWord(std::string_view s) {
  if (s.empty()) return false;
  size_t i = 0;
  return IsRegexWord(NextCodePoint(s, i));
}

}  // namespace

void AddedVocabulary::Split(std::string_view text, bool normalized,
                            std::vector<AddedPiece>& out) const {
  const Trie* trie = normalized ? normalized_trie_.get() : raw_trie_.get();
  if (text.empty()) return;
  if (trie == nullptr) {
    out.push_back({0, static_cast<uint32_t>(text.size()), -1});
    return;
  }
  size_t start_offset = 0;
  size_t pos = 0;
  while ((pos = trie->NextStart(text, pos)) < text.size()) {
    uint32_t id = 0, index = 0;
    size_t len = trie->LongestAt(text, pos, id, index);
    if (len == 0) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + len;
    pos = stop;  // the search goes on after this match, whether it is kept or not
    const AddedToken& token = tokens_[index];
    if (token.single_word) {
      bool start_space = start == 0 || !EndsWithWord(text.substr(0, start));
      bool stop_space = stop == text.size() || !StartsWithWord(text.substr(stop));
      if (!start_space || !stop_space) continue;
    }
    if (token.lstrip) {
      size_t s = start;
      while (s > 0) {
        size_t j = s;
        if (!IsWhiteSpace(PrevCodePoint(text, j))) break;
        s = j;
      }
      start = std::max(s, start_offset);
    }
    if (token.rstrip) {
      while (stop < text.size()) {
        size_t j = stop;
        if (!IsWhiteSpace(NextCodePoint(text, j))) break;
        stop = j;
      }
    }
    if (start_offset < start) {
      out.push_back({static_cast<uint32_t>(start_offset), static_cast<uint32_t>(start), -1});
    }
    out.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(stop), id});
    start_offset = stop;
  }
  if (start_offset != text.size()) {
    out.push_back({static_cast<uint32_t>(start_offset), static_cast<uint32_t>(text.size()), -1});
  }
}

}  // namespace reel::llm::internal
