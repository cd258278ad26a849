// Timed text out of speech: what every transcription backend returns.
// Times are seconds on the media's timeline (the same clock as pipeline::SpeechChunk::start_s
// and container subtitles), end >= start.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace reel::llm {

struct TranscriptWord {
  double start_s = 0;
  double end_s = 0;
  std::string text;
  std::optional<double> confidence;  // in [0, 1], where the backend gives one
};

struct TranscriptSegment {
  double start_s = 0;
  double end_s = 0;
  std::string text;  // UTF-8, one line, trimmed
  // In [0, 1] where the backend gives one: PocketSphinx's mean word posterior; a Whisper
  // server's exp(avg_logprob) times (1 - no_speech_prob).
  std::optional<double> confidence;
  std::vector<TranscriptWord> words;  // with times, where the backend gives them
  std::string language;               // ISO 639-1 ("en") where known
  std::string backend;                // "pocketsphinx" | "openai"
  std::string model;                  // e.g. "en-us", "openai/whisper-large-v3"
};

}  // namespace reel::llm
