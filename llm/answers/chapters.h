// The `chapters` prompt kind: the question (ChaptersQuestion), the answer's schema
// (ChaptersJsonSchema) and its check (ValidateChapters: chapters snapped to the nearest sampled
// frame, or kInvalidArgument saying what is wrong, asked again once with ChaptersRetryQuestion).
// Pure functions, thread-safe, no I/O.
// The answer's format and what is valid: llm/answers/README.md, "Chapters".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel::llm {

// The prompt id a job uses for the built-in kind, and `reel ask --chapters`.
inline constexpr std::string_view kChaptersPromptId = "chapters";

// Items shorter than this are chaptered in tenths of a second: the question asks for MM:SS.s,
// the schema's pattern allows the fraction, and times print as "00:01.5" (whole seconds cannot
// divide a 3-second clip; "chapter 1 is empty: it starts and ends at 00:00" was all a model
// could say).
inline constexpr double kSubSecondBelowSeconds = 60;

// The JSON schema of the answer (JSON text, stable key order); with the item's duration, the
// times of a short item may have tenths.
std::string ChaptersJsonSchema(std::optional<double> duration_seconds = std::nullopt);

// The default question. With the item's duration it says how long the item is (in MM:SS, or
// MM:SS.s for a short item, whose times it then asks in tenths of a second).
std::string ChaptersQuestion(std::optional<double> duration_seconds = std::nullopt);

// A chapter time as messages and ChaptersToJson write it: FormatClockTime, with tenths when the
// time has them ("00:01.5"; "00:42" for a whole second).
std::string FormatChapterTime(double seconds);

// The follow-up question after an answer failed the check: the reason, and the request to answer
// again in the same form.
std::string ChaptersRetryQuestion(std::string_view reason);

// What the answer is checked against: the item's sampled frames and its length.
struct ChapterTimeline {
  std::vector<double> frame_times;         // seconds, ascending
  std::optional<double> duration_seconds;  // the item's duration, if known
};

struct Chapter {
  double start_seconds = 0;  // as the model wrote it
  double end_seconds = 0;    // as the model wrote it, clamped to the item's end
  std::string title;
  std::string summary;
  // The nearest sampled frames to start and end (indexes into ChapterTimeline::frame_times), and
  // their times; unset when the item has no frames.
  std::optional<size_t> start_frame;
  std::optional<size_t> end_frame;
  std::optional<double> frame_start_seconds;
  std::optional<double> frame_end_seconds;
};

// Checks `answer` (the response's content). kInvalidArgument says what is wrong, e.g.
// "chapter 3 (01:00-02:00) overlaps chapter 2 (00:30-01:30)", "the answer is not JSON (syntax
// error at byte 12)", "chapter 4 ends at 05:10, after the end of the video (04:58)".
Result<std::vector<Chapter>> ValidateChapters(std::string_view answer,
                                              const ChapterTimeline& timeline);

// Validated chapters as JSON: [{"start": "00:00", "end": "01:15", "start_seconds": 0,
// "end_seconds": 75, "start_frame": 0, "end_frame": 75, "title": ..., "summary": ...}]
// (frame keys only when set).
std::string ChaptersToJson(const std::vector<Chapter>& chapters);

}  // namespace reel::llm
