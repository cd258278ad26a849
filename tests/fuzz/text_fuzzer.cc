// The UTF-8 boundary (base/utf8.h, base/text_encoding.h), document chunking, and the JSON writer
// every command uses (jobs/json_output.h), on arbitrary bytes. Invariants:
// - ReplaceInvalidUtf8 / EscapeInvalidUtf8 / SafeUtf8 always give valid UTF-8, leave valid input
//   alone (the escape: unless it holds "\\x" or "\\\\"), and UnescapeInvalidUtf8 undoes the escape;
// - DecodeText always gives valid UTF-8 with every fallback;
// - SplitDocument never splits a UTF-8 sequence;
// - DumpJson never throws and always writes valid UTF-8 JSON.
#include <nlohmann/json.hpp>

#include "base/text_encoding.h"
#include "base/utf8.h"
#include "jobs/json_output.h"
#include "jobs/stages/document_chunks.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const bool valid = reel::IsValidUtf8(bytes);

  size_t replaced = 0;
  const std::string replaced_text = reel::ReplaceInvalidUtf8(bytes, &replaced);
  Require(reel::IsValidUtf8(replaced_text), "ReplaceInvalidUtf8 gives UTF-8", bytes);
  Require(valid == (replaced == 0), "replacements counted exactly when invalid", bytes);
  if (valid) Require(replaced_text == bytes, "valid text is left alone", bytes);

  const std::string escaped = reel::EscapeInvalidUtf8(bytes);
  Require(reel::IsValidUtf8(escaped), "EscapeInvalidUtf8 gives UTF-8", bytes);
  Require(reel::UnescapeInvalidUtf8(escaped) == bytes, "the escape is reversible", escaped);
  if (valid && bytes.find("\\x") == std::string::npos && bytes.find("\\\\") == std::string::npos) {
    Require(escaped == bytes, "ordinary valid names are unchanged", bytes);
  }
  Require(reel::IsValidUtf8(reel::SafeUtf8(bytes)), "SafeUtf8 gives UTF-8", bytes);

  for (const char* fallback : {"windows-1252", "utf-8", "gbk"}) {
    auto decoded = reel::DecodeText(bytes, {.fallback_encoding = fallback});
    Require(decoded.ok(), "DecodeText with a known fallback succeeds", fallback);
    Require(reel::IsValidUtf8(decoded->text), "DecodeText gives UTF-8", bytes);
    if (valid && !bytes.starts_with("\xEF\xBB\xBF") &&
        decoded->info.basis == reel::EncodingBasis::kValidUtf8) {
      Require(decoded->text == bytes, "valid UTF-8 is decoded as itself", bytes);
    }
  }

  auto decoded = reel::DecodeText(bytes);
  for (const std::string& chunk :
       reel::jobs::SplitDocument(decoded->text, {.target_chars = 40, .max_chars = 80})) {
    Require(reel::IsValidUtf8(chunk), "document chunks are whole UTF-8", chunk);
    Require(!chunk.empty(), "no empty chunk");
  }

  nlohmann::json j = {{"text", bytes}, {bytes, nlohmann::json::array({bytes, 1})}};
  const std::string dumped = reel::jobs::DumpJson(j);
  reel::fuzz::RequireValidJson(dumped, "DumpJson output");
  reel::fuzz::RequireValidJson(reel::jobs::DumpJson(j, 2), "DumpJson indented output");
  return 0;
}
