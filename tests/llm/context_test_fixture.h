// What the context builder's tests share: a tokenizer with one token per byte and MiniMax-M3's
// special tokens as added tokens, so the count of a layout is the bytes of its text, plus one per
// special token (HandCount), plus the placeholders; the M3 template's text around the user turn;
// and a fixture with the template, that counter and options without prefix padding.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "llm/context/chat_template.h"
#include "llm/context/context_builder.h"
#include "llm/context/token_counter.h"
#include "llm/tokenizer/byte_level.h"
#include "llm/tokenizer/tokenizer.h"

namespace reel::llm::context_test {

inline constexpr const char* kM3SpecialTokens[] = {
    "]~!b[",       "]~b]",        "[e~[",       "]<]start of image[>[", "]<]end of image[>[",
    "]<]image[>[", "]<]video[>[", "<mm:think>", "</mm:think>"};

// One token per byte; each of kM3SpecialTokens one token.
inline const Tokenizer& ByteTokenizer() {
  static const Tokenizer* t = [] {
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) {
      vocab[std::string(internal::ByteLevelUtf8(static_cast<uint8_t>(b)))] = b;
    }
    nlohmann::json added = nlohmann::json::array();
    for (const char* s : kM3SpecialTokens) {
      added.push_back({{"id", 0},
                       {"content", s},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", true}});
    }
    nlohmann::json j = {
        {"version", "1.0"},
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer",
         {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}},
        {"post_processor", nullptr},
        {"decoder", {{"type", "ByteLevel"}}},
        {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}};
    auto r = Tokenizer::FromJson(j.dump(), "bytes.json");
    if (!r.ok()) std::abort();
    return new Tokenizer(std::move(r).value());
  }();
  return *t;
}

// Hand count of a server string: one per byte, special tokens one each.
inline int64_t HandCount(std::string s) {
  int64_t specials = 0;
  for (const char* sp : kM3SpecialTokens) {
    size_t at;
    while ((at = s.find(sp)) != std::string::npos) {
      s.erase(at, std::string(sp).size());
      ++specials;
    }
  }
  return static_cast<int64_t>(s.size()) + specials;
}

// The M3 template's text before the user's content and after it (default system prompt).
inline const std::string kM3Head =
    "]~!b[]~b]system\nCurrent thinking mode: adaptive.[e~[\n]~b]developer\nYou are a helpful "
    "assistant.[e~[\n]~b]user\n";
inline const std::string kM3Tail = "[e~[\n]~b]ai\n";

// The M3 template, the byte counter, and options with `question` and no prefix padding.
struct ContextFixture {
  ChatTemplate tmpl = BuiltInChatTemplate("minimax-m3").value();
  TokenCounter counter{&ByteTokenizer(), "bytes"};
  ContextOptions options;
  explicit ContextFixture(std::string question) {
    options.prefix_block = 0;
    options.question = std::move(question);
  }
};

}  // namespace reel::llm::context_test
