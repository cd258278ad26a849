// Timed text: subtitle streams inside a container and side-car .srt / .vtt files.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace reel::pipeline {

struct TextSegment {
  double start_s = 0;    // seconds on the media's timeline
  double end_s = 0;      // seconds; >= start_s
  std::string text;      // plain UTF-8: markup (ASS overrides, <i>, {\an8}) removed, lines
                         // joined with '\n'
  std::string source;    // "stream:N" for a container stream, or the side-car file's path
  std::string language;  // from the stream's metadata or the file name (clip.en.srt), if any
};

// Parses SubRip (.srt) text. Tolerates a BOM, CRLF, missing blank lines and numbering.
// Errors: kCorruptData naming `name` and the line when no cue can be read.
Result<std::vector<TextSegment>> ParseSrt(const std::string& text, const std::string& name);

// Parses WebVTT (.vtt) text (header, cues with optional identifiers and settings, NOTE/STYLE
// blocks skipped).
Result<std::vector<TextSegment>> ParseVtt(const std::string& text, const std::string& name);

// Reads a side-car file by extension (.srt or .vtt).
Result<std::vector<TextSegment>> ReadSubtitleFile(const std::string& path);

// Decodes every text subtitle stream (mov_text, SubRip, ASS/SSA, WebVTT) inside `path`.
// Bitmap subtitle streams are skipped. An empty list is not an error.
Result<std::vector<TextSegment>> ExtractSubtitleStreams(const std::string& path);

}  // namespace reel::pipeline
