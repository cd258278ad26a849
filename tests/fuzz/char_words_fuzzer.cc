// libFuzzer target for the word-cutting fast path of SentencePiece-style tokenizers
// (llm/tokenizer/char_words.h: raw text cut into words before '▁', cached and merged together)
// against the general path, on any text (outside input: every prompt is tokenized). The first
// byte picks one of 256 small random tokenizers (tests/support/sentencepiece_tokenizers.h:
// merges that put characters before '▁', byte fallback / unk, with and without a Prepend, "\n"
// and "<t>" as added tokens); the rest is the text. Invariants: the tokenizer takes the fast path
// exactly when expected; its ids equal the general path's, cold and again with the words cached.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llm/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/support/sentencepiece_tokenizers.h"

namespace {

struct Pair {
  std::unique_ptr<reel::llm::Tokenizer> fast, general;
};

const Pair& Tokenizers(uint8_t seed) {
  static std::array<Pair, 256> pairs;
  Pair& p = pairs[seed];
  if (p.fast == nullptr) {
    reel::testing::SentencePieceTokenizer spec = reel::testing::RandomSentencePieceTokenizer(seed);
    auto fast = reel::llm::Tokenizer::FromJson(spec.fast.dump(), "fast.json");
    auto general = reel::llm::Tokenizer::FromJson(spec.general.dump(), "general.json");
    reel::fuzz::Require(fast.ok() && general.ok(), "the random tokenizers load");
    const bool has_fast =
        fast->Description().find("fast path: SentencePiece words") != std::string::npos;
    reel::fuzz::Require(has_fast == spec.expect_fast, "the fast path is taken when expected",
                        fast->Description());
    reel::fuzz::Require(general->Description().find("fast path") == std::string::npos,
                        "the general form takes the general path");
    p.fast = std::make_unique<reel::llm::Tokenizer>(std::move(fast).value());
    p.general = std::make_unique<reel::llm::Tokenizer>(std::move(general).value());
  }
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Pair& p = Tokenizers(data[0]);
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<uint32_t> general = p.general->Encode(text);
  reel::fuzz::Require(p.fast->Encode(text) == general, "fast path ids == general path ids");
  reel::fuzz::Require(p.fast->Encode(text) == general, "the same with the words cached");
  return 0;
}
