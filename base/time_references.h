// Time references in a model's answer: the places where it says *when* in the video something
// happens ("at 01:15", "00:10-00:25", "at 75 seconds", "1m15s"), found in the text with their
// byte spans and values in seconds, and linked to the nearest sampled frame.
//
// The grammar (documented with examples in docs/database.md, "Answer time references"):
//   clock     [H:]MM:SS[.f]      H 1-2 digits; MM 00-59 after H, else 0-999 minutes; SS 00-59 (two
//                                digits); .f 1-3 digits (",fff" after H:MM:SS, as in SRT)
//   marker    ]<]12.0 seconds[>[ M3's own frame timestamp, echoed back
//   compound  1m15s, 1h2m3s, 1 min 15 s, 1 minute and 15 seconds, 1 hour 2 minutes, 1分15秒
//   single    75 seconds, 75 s, 75.5 sec, 2 minutes, 1 hour, 第75秒 -- only where the words around
//             say it is a moment: after a locating word (at, around, about, near, approximately,
//             roughly, by, from, until, till, after, before, since, starting, begins, ends,
//             timestamp, t=, @, ~, 在, 第; "at about", "at exactly" too), in brackets "(75 s)", or
//             followed by "in", "into", "mark" ("75 seconds in", "the 75-second mark"), 处, 时;
//             "t=75" needs no unit
//   range     two of the above joined by -, –, —, ~, -->, to, until, till, through, or "and" after
//             "between": 00:10-00:25, from 0:10 to 0:25, 10-25 seconds, between 10 and 25 s
// and what is *not* a video time, and so left out:
//   - digits glued to letters, more colons or dots ("v1:20", "12:30pm", "1:02:03:04", "2.35:10");
//   - one-digit seconds ("16:9", "4:3") and minutes or seconds past 59 after hours;
//   - clock times of day: followed by am, pm, a.m., o'clock, h, hrs, uhr, or a time zone (UTC, GMT,
//     CET, EST, ...), or "in the morning/afternoon/evening", "local time"; or following a date
//     ("2024-05-01 12:00", "5/1 10:30");
//   - scores, ratios and the like: a clock form with one of score(s|d|line|board), ratio, aspect,
//     scale, odds, won, win(s), lost, beat(s), defeated, lead(s), led, tied, verse, version, clock,
//     timer, stopwatch among the four words before it, or ratio / aspect / odds after it;
//   - durations: a time after for, lasts, lasting, takes, took, spans, every, each, over, within,
//     another, than, only, duration, length, runtime, runs (words like is, the, exactly, about may
//     stand between: "it lasts about 10 seconds", "its duration is 1:30"), or followed by long,
//     later, earlier, ago, apart, each, per, total, "in length", "in duration", "in total",
//     "of footage"; a number with a unit also after first, last, next, final, in, of ("in the
//     first 10 seconds"), and as an adjective ("a 75-second clip", "a 75 second clip");
//   - single letters m and h alone ("2m" may be metres): only inside a compound ("1m15s", "1h2m").
// Single units, ranges and compounds take ASCII words case-insensitively; Chinese 秒 / 分 / 分钟 /
// 小时 are units too.
//
// Pure text (it lives in base/ so the results database can index answers without the model
// layer). Pure functions of their input, thread-safe, no I/O. Never fails: text with no time in it
// gives no references; any bytes (invalid UTF-8 included) are accepted.
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
