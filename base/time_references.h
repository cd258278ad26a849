// Time references in a model's answer ("at 01:15", "00:10-00:25", "1m15s"): found with their byte
// spans and values in seconds, and linked to the nearest sampled frame; times of day, scores,
// ratios and durations are left out. Pure functions, thread-safe, no I/O; never fails (any bytes
// accepted; text with no time gives no references).
// The grammar: base/README.md, "Time references"; examples in docs/database.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reel {

// Bumped whenever the grammar changes, so stored references made by an older grammar are
// re-derived (storage keeps the version each response was scanned with).
inline constexpr int kTimeReferenceGrammarVersion = 1;

enum class TimeForm {
  kClock,   // 01:15, 1:02:03.5
  kWords,   // 75 seconds, 1m15s, 1 minute 15 seconds, 第75秒
  kMarker,  // ]<]75.0 seconds[>[
};

const char* TimeFormName(TimeForm form);  // "clock", "words", "marker"

struct TimeReference {
  size_t begin = 0;                   // byte offset of the first byte in the text
  size_t end = 0;                     // byte offset one past the last byte
  double seconds = 0;                 // the moment, or the start of a range
  std::optional<double> end_seconds;  // a range's end (>= seconds)
  TimeForm form = TimeForm::kClock;   // of the start
  bool operator==(const TimeReference&) const = default;
};

// Every time reference in `text`, in order, not overlapping.
std::vector<TimeReference> FindTimeReferences(std::string_view text);

// `text` as one time, if all of it (spaces around allowed) is one point reference of the grammar
// above, or a plain non-negative number of seconds ("75", "75.5"). For chapter boundaries.
std::optional<double> ParseTimeText(std::string_view text);

// Seconds as the model is asked to write them: "MM:SS" under an hour, "H:MM:SS" from an hour on;
// rounded to whole seconds (half up). Negative values are shown as 00:00.
std::string FormatClockTime(double seconds);

// The number of Unicode code points in `text` before byte `offset` (UTF-8; a stray byte counts as
// one), which is what SQLite's substr() and length() count.
int64_t CodePointOffset(std::string_view text, size_t offset);

// Linking to frames. `frame_times` are the item's sampled frame times in seconds, ascending.
// A time is inside the item when 0 <= t <= limit + kTimeSlackSeconds, where limit is the item's
// duration if known, else its last frame's time; the slack covers answers rounded to whole seconds.
inline constexpr double kTimeSlackSeconds = 1.0;
bool IsInsideItem(double seconds, std::optional<double> duration_seconds,
                  const std::vector<double>& frame_times);
// The index of the frame nearest to `seconds` (the earlier one on a tie), or nullopt when there
// are no frames or the time is outside the item.
std::optional<size_t> NearestFrame(double seconds, std::optional<double> duration_seconds,
                                   const std::vector<double>& frame_times);

}  // namespace reel
