// The answer of POST /v1/audio/transcriptions, read into segments with chunk-relative times.
//
// Shapes read: OpenAI's verbose_json (`segments` with start, end, text, avg_logprob,
// no_speech_prob; `words` at the top level with word, start, end), whisper.cpp's (words inside
// each segment, with `probability`), and a plain `{"text": ...}` (a server that ignored
// response_format): one segment over the whole chunk, noted. Times are clamped into
// [0, chunk_s] and made ordered; words without a segment go to the segment they fall in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "llm/speech/transcript.h"

namespace reel::llm {

struct ParsedTranscription {
  std::vector<TranscriptSegment> segments;  // times relative to the chunk's start
  std::string language;                     // ISO 639-1 when the server named a known one
  bool timed = true;                        // false: no segment times (the text spans the chunk)
  bool has_words = false;                   // word times were given
};

// Errors: kCorruptData when the body is not JSON, nests deeper than kMaxJsonDepth, or has
// neither `segments` nor `text`.
Result<ParsedTranscription> ParseTranscriptionResponse(std::string_view body, double chunk_s);

}  // namespace reel::llm
