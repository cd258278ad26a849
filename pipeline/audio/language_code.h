// Language names as media files and speech services write them: a stream's tag ("eng", "ger",
// "deu", "en-US"), a person's choice ("en", "English"), a transcription server's answer
// ("english"). One table of the languages Whisper transcribes, with their ISO 639-1 and 639-2
// (bibliographic and terminology) codes and English names.
#pragma once

#include <string>
#include <string_view>

namespace reel::pipeline {

// The language's short code (ISO 639-1, "en"; Whisper's own code where it has no 639-1 code:
// "haw", "yue"), from any of its codes or its English name, case-insensitive, a region or
// script suffix ignored ("en-US", "pt_BR", "zh-Hans"). "" when the text names no language of the
// table ("", "und", "mul", "zxx", an unknown code).
std::string LanguageCode(std::string_view text);

// The language's English name in lower case ("english"), or "" as LanguageCode.
std::string LanguageName(std::string_view text);

// Whether two texts name the same language (both known and equal); "" never matches.
bool SameLanguage(std::string_view a, std::string_view b);

}  // namespace reel::pipeline
