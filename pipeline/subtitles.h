// Timed text: subtitle streams inside a container and side-car .srt / .vtt files.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "base/text_encoding.h"

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

struct SubtitleReadOptions {
  // How text that is neither UTF-8 nor marked as UTF-16/32 is read: any encoding iconv knows
  // (base/text_encoding.h); "utf-8" replaces bad bytes with U+FFFD instead of guessing.
  std::string fallback_encoding = std::string(kDefaultFallbackEncoding);
};

// Reads a side-car file by extension (.srt or .vtt), detecting its text encoding (byte-order
// mark, UTF-16 without one, UTF-8, else options.fallback_encoding) and converting it to UTF-8.
// `encoding`, if given, says how the file was read (TextEncodingInfo::Noteworthy: worth telling
// the user). Errors: as ParseSrt / ParseVtt, kNotFound / kIoError, kLimitExceeded past 64 MiB,
// kUnsupported for another extension, kInvalidArgument for an unknown fallback encoding.
Result<std::vector<TextSegment>> ReadSubtitleFile(const std::string& path,
                                                  const SubtitleReadOptions& options = {},
                                                  TextEncodingInfo* encoding = nullptr);

// How the text of one container subtitle stream was read, when some of it was not UTF-8.
struct StreamTextEncoding {
  int stream_index = 0;
  TextEncodingInfo info;  // how the last such cue was read
  int cues = 0;           // cues whose text was not UTF-8
};

// Decodes every text subtitle stream (mov_text, SubRip, ASS/SSA, WebVTT) inside `path`.
// Bitmap subtitle streams are skipped. An empty list is not an error. Text that is not UTF-8
// (containers should hold UTF-8, but a muxed legacy .srt keeps its bytes) is decoded like a
// side-car file's; `encodings`, if given, gets one entry per stream where that happened.
Result<std::vector<TextSegment>> ExtractSubtitleStreams(
    const std::string& path, const SubtitleReadOptions& options = {},
    std::vector<StreamTextEncoding>* encodings = nullptr);

}  // namespace reel::pipeline
