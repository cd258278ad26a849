// libFuzzer target for the tokenizer.json loader and the tokenizer it builds (llm/): untrusted
// tokenizer files. The input is split at the first NUL byte: before it, the tokenizer.json text;
// after it, text to encode. Checks: no crash, no sanitizer report; a loaded tokenizer encodes
// the text (valid or not UTF-8), decodes the ids, and counts agree with encodings.
//
// Build and run (clang-14, ASan + UBSan), bounded:
//   configure with -DREEL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ (target tokenizer_json_fuzz), then
//   build/tests/tokenizer_json_fuzz -max_total_time=300 -max_len=8192 tests/fuzz/corpus/tokenizer
// The seed corpus (tests/fuzz/corpus/tokenizer) holds small tokenizer.json files written for it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "llm/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t nul = all.find('\0');
  std::string_view json = all.substr(0, nul);
  std::string_view text = nul == std::string_view::npos ? "Hello, world! 123" : all.substr(nul + 1);
  auto tokenizer = reel::llm::Tokenizer::FromJson(json, "fuzz.json");
  if (!tokenizer.ok()) return 0;
  std::vector<uint32_t> ids = tokenizer->Encode(text);
  if (tokenizer->Count(text) != ids.size()) std::abort();
  std::vector<uint32_t> with_special = tokenizer->Encode(text, /*add_special_tokens=*/true);
  std::string decoded = tokenizer->Decode(ids);
  decoded = tokenizer->Decode(with_special, /*skip_special_tokens=*/true);
  for (uint32_t id : ids) tokenizer->IdToToken(id);
  return 0;
}
