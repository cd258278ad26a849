#include "pipeline/audio/audio_stream.h"

#include "pipeline/audio/language_code.h"

namespace reel::pipeline {
namespace {

std::string Describe(const AudioStreamCandidate& c) {
  std::string text = "stream #" + std::to_string(c.index);
  if (!c.language.empty()) text += " (" + c.language + ")";
  return text;
}

}  // namespace

std::optional<AudioStreamChoice> ChooseAudioStream(
    const std::vector<AudioStreamCandidate>& candidates, std::string_view language) {
  if (candidates.empty()) return std::nullopt;
  const bool wanted = !language.empty();
  if (wanted) {
    // Among several streams in the language, the default one.
    const AudioStreamCandidate* match = nullptr;
    for (const AudioStreamCandidate& c : candidates) {
      if (!SameLanguage(c.language, language)) continue;
      if (match == nullptr || (c.is_default && !match->is_default)) match = &c;
    }
    if (match != nullptr) {
      return AudioStreamChoice{match->index, match->language,
                               Describe(*match) + ": language '" + std::string(language) + "'",
                               true};
    }
  }
  const std::string missing =
      wanted ? " (no stream in language '" + std::string(language) + "')" : "";
  for (const AudioStreamCandidate& c : candidates) {
    if (c.is_default && candidates.size() > 1) {
      return AudioStreamChoice{c.index, c.language, Describe(c) + ": the default stream" + missing,
                               false};
    }
  }
  const AudioStreamCandidate& first = candidates.front();
  return AudioStreamChoice{
      first.index, first.language,
      Describe(first) +
          (candidates.size() > 1 ? ": the first audio stream" : ": the audio stream") + missing,
      false};
}

}  // namespace reel::pipeline
