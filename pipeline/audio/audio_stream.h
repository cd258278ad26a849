// Which audio stream of a file carries the speech: the one in the requested language (matched
// against the streams' language tags), else the stream marked default, else the first.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reel::pipeline {

struct AudioStreamCandidate {
  int index = 0;            // the container's stream index
  std::string language;     // the stream's language tag, if any ("eng", "en", "ger")
  bool is_default = false;  // the container marks it default (disposition)
};

struct AudioStreamChoice {
  int index = 0;
  std::string language;  // the chosen stream's tag, as the file has it
  // For people: "stream #2 (ger): language 'de'", "stream #1: the default stream (no stream in
  // language 'fr')", "stream #0: the first audio stream".
  std::string reason;
  bool language_matched = false;  // a language was asked for and this stream has it
};

// Chooses among `candidates` (the file's audio streams, in stream order). `language` may be any
// spelling LanguageCode knows ("en", "eng", "English"; "" = no preference). nullopt when there
// are no candidates.
std::optional<AudioStreamChoice> ChooseAudioStream(
    const std::vector<AudioStreamCandidate>& candidates, std::string_view language);

}  // namespace reel::pipeline
