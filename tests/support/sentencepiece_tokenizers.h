// Small random SentencePiece-style tokenizer.json files (a ' ' -> '▁' Replace, maybe a Prepend,
// BPE with byte fallback or unk), each in two forms that must give the same ids: one that takes
// the tokenizer's word-cutting fast path (llm/tokenizer/char_words.h) and one that does not (its
// pre-tokenizer is a Split on the *regex* " ", which finds nothing in text whose spaces became
// '▁', so it changes nothing, but is not recognized as leaving the text whole). The merges are
// random over a few characters, '▁', '>' and '<' among them, so that some tokens have
// characters before '▁' (places where the text must not be cut). Used by
// tests/llm/char_words_test.cc and tests/fuzz/char_words_fuzzer.cc. Header-only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace reel::testing {

// How characters without a token are handled.
enum class SentencePieceFallback {
  kBytes,            // byte_fallback with <0x00>..<0xFF>
  kSomeBytesAndUnk,  // byte_fallback with only <0x00>..<0x7F>, and an unk token
  kUnk,              // an unk token only (fuse_unk on or off)
  kNothing,          // neither: such characters are dropped (no fast path)
  kMergedBytes,      // byte_fallback, and a merge of byte tokens (no fast path)
};

struct SentencePieceTokenizer {
  nlohmann::json fast, general;
  SentencePieceFallback fallback;
  bool expect_fast;                   // whether `fast` should take the fast path
  std::vector<std::string> alphabet;  // characters texts are made of (tokens and not)
};

inline SentencePieceTokenizer RandomSentencePieceTokenizer(uint32_t seed) {
  using nlohmann::json;
  std::mt19937 rng(seed);
  const std::string kSpace = "\xe2\x96\x81";  // ▁
  SentencePieceTokenizer t;
  t.fallback = static_cast<SentencePieceFallback>(rng() % 5);
  json vocab = json::object();
  uint32_t next_id = 0;
  auto add = [&](const std::string& token) {
    if (!vocab.contains(token)) vocab[token] = next_id++;
  };
  add("<unk>");
  add("<t>");  // an added token too
  const bool byte_tokens = t.fallback == SentencePieceFallback::kBytes ||
                           t.fallback == SentencePieceFallback::kSomeBytesAndUnk ||
                           t.fallback == SentencePieceFallback::kMergedBytes;
  if (byte_tokens) {
    const int last = t.fallback == SentencePieceFallback::kSomeBytesAndUnk ? 0x7F : 0xFF;
    for (int b = 0; b <= last; ++b) {
      char name[16];  // "<0xFF>" and its NUL; room for what -Wformat-truncation assumes
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      add(name);
    }
  }
  std::vector<std::string> chars = {
      "a", "b", "c", ">", "<", "/", kSpace, "\xc3\xa9" /* é */, "\xe6\x97\xa5" /* 日 */};
  for (const std::string& c : chars) add(c);
  std::vector<std::string> tokens = chars;
  json merges = json::array();
  std::set<std::pair<std::string, std::string>> pairs;
  const int merge_count = 20 + static_cast<int>(rng() % 120);
  for (int r = 0; r < merge_count; ++r) {
    // Short tokens more often; '▁' on the right now and then after anything.
    const std::string& a = tokens[rng() % (rng() % 2 ? tokens.size() : chars.size())];
    const std::string& b =
        rng() % 6 == 0 ? kSpace : tokens[rng() % (rng() % 2 ? tokens.size() : chars.size())];
    if (a.size() + b.size() > 24 || !pairs.insert({a, b}).second) continue;
    add(a + b);
    merges.push_back({a, b});
    tokens.push_back(a + b);
  }
  if (t.fallback == SentencePieceFallback::kMergedBytes) {
    add("<0x41><0x42>");
    merges.push_back({"<0x41>", "<0x42>"});
  }
  const bool unk = t.fallback == SentencePieceFallback::kSomeBytesAndUnk ||
                   t.fallback == SentencePieceFallback::kUnk;
  json model = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", unk ? json("<unk>") : json(nullptr)},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"fuse_unk", rng() % 2 == 0},
                {"byte_fallback", byte_tokens},
                {"ignore_merges", false},
                {"vocab", vocab},
                {"merges", merges}};
  json replace = {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSpace}};
  json normalizer;
  switch (rng() % 4) {
    case 0:
      normalizer = replace;
      break;
    case 1:
      normalizer = {{"type", "Sequence"},
                    {"normalizers", {{{"type", "Prepend"}, {"prepend", kSpace}}, replace}}};
      break;
    case 2:
      normalizer = {{"type", "Sequence"},
                    {"normalizers", {replace, {{"type", "Prepend"}, {"prepend", "a" + kSpace}}}}};
      break;
    default:
      normalizer = {{"type", "Sequence"}, {"normalizers", {replace}}};
      break;
  }
  json added = json::array();
  auto added_token = [&](const std::string& content, uint32_t id, bool special) {
    added.push_back({{"id", id},
                     {"content", content},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", special}});
  };
  added_token("<t>", 1, true);
  added_token("\n", next_id++, false);
  auto split = [](json pattern) {
    return json{{"type", "Split"},
                {"pattern", pattern},
                {"behavior", "MergedWithPrevious"},
                {"invert", false}};
  };
  json root = {{"version", "1.0"},         {"truncation", nullptr},
               {"padding", nullptr},       {"added_tokens", added},
               {"normalizer", normalizer}, {"post_processor", nullptr},
               {"decoder", nullptr},       {"model", model}};
  t.fast = root;
  t.fast["pre_tokenizer"] = rng() % 2 ? json(nullptr) : split({{"String", " "}});
  t.general = root;
  t.general["pre_tokenizer"] = split({{"Regex", " "}});
  t.expect_fast = t.fallback == SentencePieceFallback::kBytes ||
                  t.fallback == SentencePieceFallback::kSomeBytesAndUnk ||
                  t.fallback == SentencePieceFallback::kUnk;
  t.alphabet = chars;
  for (const char* c : {" ", " ", " ", "  ", "\n", "<t>", "z", "\xf0\x9f\x98\x80" /* 😀 */,
                        "\xd7\x90" /* א */, "\x01"}) {
    t.alphabet.push_back(c);
  }
  return t;
}

// A random text over the tokenizer's alphabet, `length` characters or strings of it.
inline std::string RandomSentencePieceText(const SentencePieceTokenizer& t, std::mt19937& rng,
                                           size_t length) {
  std::string text;
  for (size_t i = 0; i < length; ++i) text += t.alphabet[rng() % t.alphabet.size()];
  return text;
}

}  // namespace reel::testing
