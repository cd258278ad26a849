// Subtitle text (.srt / .vtt bytes in any encoding): encoding detection, then both parsers, on
// the raw bytes too. Invariants: cue text is valid UTF-8 without NUL, times are finite and end
// at or after the start, and a failure is kCorruptData (never anything else, never a crash).
#include <cmath>

#include "base/text_encoding.h"
#include "base/utf8.h"
#include "pipeline/subtitles.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

namespace {

void Check(const reel::Result<std::vector<reel::pipeline::TextSegment>>& cues) {
  if (!cues.ok()) {
    Require(cues.status().code() == reel::ErrorCode::kCorruptData, "parse error kind",
            cues.status().ToString());
    Require(reel::IsValidUtf8(cues.status().message()), "error message is UTF-8",
            cues.status().message());
    return;
  }
  for (const auto& cue : *cues) {
    Require(reel::IsValidUtf8(cue.text), "cue text is UTF-8", cue.text);
    Require(cue.text.find('\0') == std::string::npos, "no NUL in cue text", cue.text);
    Require(!cue.text.empty(), "no empty cue");
    Require(std::isfinite(cue.start_s) && std::isfinite(cue.end_s) && cue.end_s >= cue.start_s,
            "cue times");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string raw(reinterpret_cast<const char*>(data), size);
  Check(reel::pipeline::ParseSrt(raw, "fuzz.srt"));
  Check(reel::pipeline::ParseVtt(raw, "fuzz.vtt"));
  for (const char* fallback : {"windows-1252", "utf-8", "shift_jis"}) {
    auto decoded = reel::DecodeText(raw, {.fallback_encoding = fallback});
    Require(decoded.ok(), "DecodeText with a known fallback succeeds");
    Require(reel::IsValidUtf8(decoded->text), "decoded text is UTF-8", decoded->text);
    if (std::string_view(fallback) == "windows-1252") {
      Check(reel::pipeline::ParseSrt(decoded->text, "fuzz.srt"));
      Check(reel::pipeline::ParseVtt(decoded->text, "fuzz.vtt"));
    }
  }
  return 0;
}
