// libFuzzer target for the tokenizer.json loader and the tokenizer it builds
// (llm/tokenizer/tokenizer.h): untrusted tokenizer files. The input is split at the first NUL byte:
// before it, the tokenizer.json text; after it, text to encode. Invariants: a file is loaded or
// refused with a message (never a crash); a loaded tokenizer encodes any bytes (valid UTF-8 or
// not), Count agrees with Encode, and decoding and id lookups never fail. Seeds:
// tests/fuzz/corpus/tokenizer_json (small tokenizer.json files written for it).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llm/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t nul = all.find('\0');
  std::string_view json = all.substr(0, nul);
  std::string_view text = nul == std::string_view::npos ? "Hello, world! 123" : all.substr(nul + 1);
  auto tokenizer = reel::llm::Tokenizer::FromJson(json, "fuzz.json");
  if (!tokenizer.ok()) {
    reel::fuzz::Require(!tokenizer.status().message().empty(), "a refusal has a message");
    return 0;
  }
  std::vector<uint32_t> ids = tokenizer->Encode(text);
  reel::fuzz::Require(tokenizer->Count(text) == ids.size(), "Count == Encode().size()");
  std::vector<uint32_t> with_special = tokenizer->Encode(text, /*add_special_tokens=*/true);
  std::string decoded = tokenizer->Decode(ids);
  decoded = tokenizer->Decode(with_special, /*skip_special_tokens=*/true);
  for (uint32_t id : ids) tokenizer->IdToToken(id);
  return 0;
}
