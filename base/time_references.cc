#include "base/time_references.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace reel {
namespace {

bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlnum(unsigned char c) { return IsDigit(c) || IsAlpha(c); }
bool IsWordByte(unsigned char c) { return IsAlnum(c) || c == '_'; }
bool IsSpace(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
char Lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool Contains(std::initializer_list<std::string_view> list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// Case-insensitive: does `text` at `pos` start with `word` (ASCII lowercase)?
bool StartsWithAt(std::string_view text, size_t pos, std::string_view word) {
  if (pos + word.size() > text.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (Lower(text[pos + i]) != word[i]) return false;
  }
  return true;
}

// Like StartsWithAt, and the word ends there (no ASCII letter or digit follows).
bool WordAt(std::string_view text, size_t pos, std::string_view word) {
  return StartsWithAt(text, pos, word) &&
         (pos + word.size() == text.size() || !IsAlnum(text[pos + word.size()]));
}

size_t SkipSpaces(std::string_view text, size_t pos, size_t max = 3) {
  size_t n = 0;
  while (pos < text.size() && n < max && (text[pos] == ' ' || text[pos] == '\t')) ++pos, ++n;
  return pos;
}

// Reads up to `max_digits` digits at `pos`; false if there are none or more than that.
bool ReadDigits(std::string_view text, size_t& pos, int max_digits, int64_t& value, int& count) {
  value = 0;
  count = 0;
  while (pos < text.size() && IsDigit(text[pos])) {
    if (++count > max_digits) return false;
    value = value * 10 + (text[pos] - '0');
    ++pos;
  }
  return count > 0;
}

// The byte before `pos` does not glue a number at `pos` to something else: a letter, a digit,
// '_', a colon, or a decimal point / thousands comma after a digit.
bool LeftBoundary(std::string_view text, size_t pos) {
  if (pos == 0) return true;
  unsigned char prev = text[pos - 1];
  if (IsWordByte(prev) || prev == ':') return false;
  if ((prev == '.' || prev == ',') && pos >= 2 && IsDigit(text[pos - 2])) return false;
  return true;
}

// --- the words around a candidate -------------------------------------------------------------

// Up to `max` words before `pos`, nearest first, lowercase: runs of ASCII letters (with inner
// apostrophes), runs of digits and date-like tokens ("2024-05-01"), and the symbols '@' and '~'.
// Stops at the end of a sentence or clause ('.', '!', '?', ';', a line break) and at any
// non-ASCII byte (another script), which is also returned as the word "#".
std::vector<std::string> PreviousWords(std::string_view text, size_t pos, int max) {
  std::vector<std::string> words;
  size_t i = pos;
  while (i > 0 && static_cast<int>(words.size()) < max) {
    unsigned char c = text[i - 1];
    if (c == ' ' || c == '\t' || c == ',' || c == '(' || c == '[' || c == '"' || c == '\'' ||
        c == '*' || c == '-' || c == ':' || c == '=' || c == '{' || c == '`') {
      --i;
      continue;
    }
    if (c == '.' || c == '!' || c == '?' || c == ';' || c == '\n' || c == '\r') break;
    if (c == '@' || c == '~') {
      words.emplace_back(1, static_cast<char>(c));
      --i;
      continue;
    }
    if (c >= 0x80) {
      words.emplace_back("#");
      break;
    }
    size_t end = i;
    if (IsAlpha(c)) {
      while (i > 0 && (IsAlpha(text[i - 1]) ||
                       (text[i - 1] == '\'' && i >= 2 && IsAlpha(text[i - 2]) && i < end))) {
        --i;
      }
    } else if (IsDigit(c)) {
      while (i > 0 && (IsDigit(text[i - 1]) || text[i - 1] == '-' || text[i - 1] == '/' ||
                       text[i - 1] == '.')) {
        --i;
      }
    } else {
      break;
    }
    std::string word(text.substr(i, end - i));
    for (char& ch : word) ch = Lower(ch);
    words.push_back(std::move(word));
  }
  return words;
}

// The first (up to) two ASCII words after `pos`, lowercase, skipping spaces and '-'.
std::array<std::string, 2> NextWords(std::string_view text, size_t pos) {
  std::array<std::string, 2> words;
  for (std::string& word : words) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '-')) ++pos;
    while (pos < text.size() && (IsAlpha(text[pos]) || text[pos] == '\'')) {
      word += Lower(text[pos]);
      ++pos;
    }
    if (word.empty()) break;
  }
  return words;
}

bool IsDateToken(std::string_view word) {
  // digits separated by at least one '-', '/' or '.', e.g. 2024-05-01, 5/1, 01.05.2024.
  int groups = 0;
  bool in_digits = false;
  for (char c : word) {
    if (IsDigit(c)) {
      if (!in_digits) ++groups;
      in_digits = true;
    } else {
      in_digits = false;
    }
  }
  return groups >= 2 && word.find_first_not_of("0123456789") != std::string_view::npos;
}

// What the words before a candidate say about it.
enum class Context { kNone, kLocating, kDuration };

// Words before a number that make it a duration. `clock`: the shorter list for clock forms, which
// are moments after "in", "of", "first" ("in 01:15", "the first shot at 0:05").
bool IsDurationWord(std::string_view w, bool clock) {
  if (Contains({"for",     "lasts", "lasting",  "lasted",   "takes",  "take",    "took", "taking",
                "spans",   "span",  "spanning", "spanned",  "every",  "each",    "over", "within",
                "another", "than",  "only",     "duration", "length", "runtime", "runs", "ran"},
               w)) {
    return true;
  }
  return !clock && Contains({"last", "first", "next", "final", "in", "of"}, w);
}

bool IsLocatingWord(std::string_view w) {
  return Contains({"at",        "@",      "by",    "from",     "until",     "till",  "til",
                   "after",     "before", "since", "starting", "starts",    "start", "begins",
                   "beginning", "ending", "ends",  "t",        "timestamp", "~"},
                  w);
}

// Words that may stand between a locating word and the time ("at about 75 seconds"); the first
// four of them locate on their own ("around 75 seconds").
bool IsSoftLocatingWord(std::string_view w) {
  return Contains({"around", "approximately", "approx", "roughly", "near", "about"}, w);
}
bool IsFillerWord(std::string_view w) {
  return Contains({"exactly", "precisely", "just", "the", "right", "already", "is", "was", "are",
                   "were", "be", "~"},
                  w);
}

Context BeforeContext(std::string_view text, size_t pos, bool clock) {
  // Chinese: 第 ("the Nth") or 在 ("at") right before the number locates it.
  if (pos >= 3) {
    std::string_view prev = text.substr(pos - 3, 3);
    if (prev == "\xE7\xAC\xAC" || prev == "\xE5\x9C\xA8") return Context::kLocating;
  }
  bool soft = false;
  for (const std::string& w : PreviousWords(text, pos, 4)) {
    if (IsDurationWord(w, clock)) return Context::kDuration;
    if (IsLocatingWord(w)) return Context::kLocating;
    if (IsSoftLocatingWord(w)) {
      soft = true;
      continue;
    }
    if (IsFillerWord(w)) continue;
    break;
  }
  return soft ? Context::kLocating : Context::kNone;
}

// Words after a time that make it a duration ("75 seconds long", "10 seconds later").
bool DurationAfter(std::string_view text, size_t end) {
  std::array<std::string, 2> next = NextWords(text, end);
  if (Contains({"long", "later", "earlier", "ago", "apart", "each", "per", "total", "lasting",
                "worth", "overall", "elapsed", "remaining", "left"},
               next[0])) {
    return true;
  }
  if (next[0] == "in" && Contains({"length", "duration", "total", "all"}, next[1])) return true;
  if (next[0] == "of" && Contains({"footage", "video", "silence", "music", "audio"}, next[1])) {
    return true;
  }
  return false;
}

// Words after a single unit that make it a moment ("75 seconds in", "the 75-second mark").
bool LocatingAfter(std::string_view text, size_t end) {
  if (end + 3 <= text.size()) {
    std::string_view next = text.substr(end, 3);
    if (next == "\xE5\xA4\x84" || next == "\xE6\x97\xB6") return true;  // 处 ("at"), 时 ("when")
  }
  std::array<std::string, 2> next = NextWords(text, end);
  return next[0] == "into" || next[0] == "mark" || (next[0] == "in" && !DurationAfter(text, end));
}

// The time is in brackets of its own: "(75 s)", "[12.0 seconds]".
bool Bracketed(std::string_view text, size_t begin, size_t end) {
  if (begin == 0 || end >= text.size()) return false;
  char open = text[begin - 1];
  char close = text[end];
  return (open == '(' && close == ')') || (open == '[' && close == ']');
}

// A clock form that is something else: a time of day, a score, a ratio, a date and time.
bool ClockIsNotVideoTime(std::string_view text, size_t begin, size_t end) {
  std::vector<std::string> before = PreviousWords(text, begin, 4);
  if (!before.empty() && IsDateToken(before[0])) return true;
  for (const std::string& w : before) {
    if (Contains({"score",  "scores", "scored",   "scoreline", "scoreboard", "ratio", "ratios",
                  "aspect", "scale",  "odds",     "won",       "win",        "wins",  "lost",
                  "beat",   "beats",  "defeated", "lead",      "leads",      "led",   "tied",
                  "verse",  "verses", "version",  "clock",     "clocks",     "timer", "stopwatch"},
                 w)) {
      return true;
    }
  }
  std::array<std::string, 2> next = NextWords(text, end);
  if (Contains({"am",  "pm",   "a",    "p",     "o'clock", "oclock", "h",   "hrs", "hours",
                "uhr", "utc",  "gmt",  "cet",   "cest",    "eet",    "wet", "bst", "est",
                "edt", "cst",  "cdt",  "mst",   "mdt",     "pst",    "pdt", "ist", "jst",
                "kst", "aest", "aedt", "ratio", "aspect",  "odds"},
               next[0])) {
    // "a"/"p" only as "a.m."/"p.m.".
    if (next[0] != "a" && next[0] != "p") return true;
    size_t at = SkipSpaces(text, end);
    if (StartsWithAt(text, at, next[0] == "a" ? "a.m" : "p.m")) return true;
  }
  if (next[0] == "in" && next[1] == "the") {
    size_t at = SkipSpaces(text, end);
    for (std::string_view part : {"in the morning", "in the afternoon", "in the evening"}) {
      if (StartsWithAt(text, at, part)) return true;
    }
  }
  if (next[0] == "local" && next[1] == "time") return true;
  return false;
}

// --- the forms ---------------------------------------------------------------------------------

struct Span {
  size_t end = 0;
  double seconds = 0;
  TimeForm form = TimeForm::kClock;
};

// [H:]MM:SS[.f] at `pos` (a digit with a left boundary).
std::optional<Span> ParseClock(std::string_view text, size_t pos) {
  size_t i = pos;
  int64_t a = 0, b = 0, c = 0;
  int na = 0, nb = 0, nc = 0;
  if (!ReadDigits(text, i, 3, a, na)) return std::nullopt;
  if (i >= text.size() || text[i] != ':') return std::nullopt;
  ++i;
  if (!ReadDigits(text, i, 2, b, nb) || nb != 2 || b > 59) return std::nullopt;
  bool hours = false;
  if (i + 1 < text.size() && text[i] == ':' && IsDigit(text[i + 1])) {
    ++i;
    if (!ReadDigits(text, i, 2, c, nc) || nc != 2 || c > 59 || na > 2) return std::nullopt;
    hours = true;
  }
  double seconds = hours ? a * 3600.0 + b * 60.0 + c : a * 60.0 + b;
  // A fraction: '.' and 1-3 digits; after H:MM:SS also SRT's ',' and exactly 3 digits.
  if (i + 1 < text.size() && (text[i] == '.' || (hours && text[i] == ',')) &&
      IsDigit(text[i + 1])) {
    size_t f = i + 1;
    int64_t frac = 0;
    int nf = 0;
    if (!ReadDigits(text, f, 3, frac, nf)) return std::nullopt;
    if (text[i] == ',' && nf != 3) {
      // "1:02:03,45": the comma separates a list; stop before it.
    } else {
      seconds += frac / std::pow(10.0, nf);
      i = f;
    }
  }
  // Right boundary: no letter, digit, '_', or another ':' / '.' with a digit.
  if (i < text.size()) {
    unsigned char next = text[i];
    if (IsWordByte(next)) return std::nullopt;
    if ((next == ':' || next == '.') && i + 1 < text.size() && IsDigit(text[i + 1])) {
      return std::nullopt;
    }
  }
  return Span{i, seconds, TimeForm::kClock};
}

// ]<]12.0 seconds[>[ at `pos`.
std::optional<Span> ParseMarker(std::string_view text, size_t pos) {
  if (text.substr(pos, 3) != "]<]") return std::nullopt;
  size_t i = SkipSpaces(text, pos + 3);
  int64_t whole = 0, frac = 0;
  int nw = 0, nf = 0;
  if (!ReadDigits(text, i, 7, whole, nw)) return std::nullopt;
  double seconds = static_cast<double>(whole);
  if (i + 1 < text.size() && text[i] == '.' && IsDigit(text[i + 1])) {
    ++i;
    if (!ReadDigits(text, i, 6, frac, nf)) return std::nullopt;
    seconds += frac / std::pow(10.0, nf);
  }
  i = SkipSpaces(text, i);
  if (!StartsWithAt(text, i, "seconds")) return std::nullopt;
  i = SkipSpaces(text, i + 7);
  if (text.substr(i, 3) != "[>[") return std::nullopt;
  return Span{i + 3, seconds, TimeForm::kMarker};
}

enum class Unit { kNone, kSecond, kMinute, kHour };

double UnitSeconds(Unit unit) {
  switch (unit) {
    case Unit::kHour:
      return 3600;
    case Unit::kMinute:
      return 60;
    default:
      return 1;
  }
}

struct UnitMatch {
  Unit unit = Unit::kNone;
  size_t end = 0;
  bool letter = false;    // a single letter: s, m, h
  bool singular = false;  // second, minute, hour, sec, min, hr
};

// A unit word at `pos`, longest spelling first.
UnitMatch ReadUnit(std::string_view text, size_t pos) {
  struct Spelling {
    std::string_view text;
    Unit unit;
    bool letter;
    bool singular;
  };
  static constexpr Spelling kSpellings[] = {
      {"seconds", Unit::kSecond, false, false}, {"second", Unit::kSecond, false, true},
      {"secs", Unit::kSecond, false, false},    {"sec", Unit::kSecond, false, false},
      {"s", Unit::kSecond, true, false},        {"minutes", Unit::kMinute, false, false},
      {"minute", Unit::kMinute, false, true},   {"mins", Unit::kMinute, false, false},
      {"min", Unit::kMinute, false, false},     {"m", Unit::kMinute, true, false},
      {"hours", Unit::kHour, false, false},     {"hour", Unit::kHour, false, true},
      {"hrs", Unit::kHour, false, false},       {"hr", Unit::kHour, false, false},
      {"h", Unit::kHour, true, false},
  };
  for (const Spelling& s : kSpellings) {
    // A unit may be followed by a digit ("1m15s"), never by a letter.
    size_t end = pos + s.text.size();
    if (StartsWithAt(text, pos, s.text) && (end == text.size() || !IsAlpha(text[end]))) {
      return {s.unit, end, s.letter, s.singular};
    }
  }
  // Chinese: 秒 second, 分钟 / 分 minute, 小时 hour.
  if (text.substr(pos, 3) == "\xE7\xA7\x92") return {Unit::kSecond, pos + 3, false, false};
  if (text.substr(pos, 6) == "\xE5\x88\x86\xE9\x92\x9F") return {Unit::kMinute, pos + 6};
  if (text.substr(pos, 3) == "\xE5\x88\x86") return {Unit::kMinute, pos + 3, false, false};
  if (text.substr(pos, 6) == "\xE5\xB0\x8F\xE6\x97\xB6") return {Unit::kHour, pos + 6};
  return {};
}

// A number: 1-6 digits, optionally '.' and 1-6 digits.
bool ReadNumber(std::string_view text, size_t& pos, double& value) {
  int64_t whole = 0;
  int n = 0;
  size_t i = pos;
  if (!ReadDigits(text, i, 6, whole, n)) return false;
  value = static_cast<double>(whole);
  if (i + 1 < text.size() && text[i] == '.' && IsDigit(text[i + 1])) {
    ++i;
    int64_t frac = 0;
    int nf = 0;
    if (!ReadDigits(text, i, 6, frac, nf)) return false;
    value += frac / std::pow(10.0, nf);
  }
  if (i < text.size() && (IsWordByte(text[i]) && !IsAlpha(text[i]))) return false;
  if (i + 1 < text.size() && (text[i] == '.' || text[i] == ',' || text[i] == ':') &&
      IsDigit(text[i + 1])) {
    return false;  // 1.2.3, 1,000, 1:2
  }
  pos = i;
  return true;
}

struct WordTime {
  size_t end = 0;
  double seconds = 0;
  double number = 0;  // the first number as written
  int parts = 0;      // number-unit pairs (0: a bare number)
  Unit first_unit = Unit::kNone;
  bool letter_only = false;  // a single part with a one-letter unit
  bool hyphenated = false;   // "75-second": an adjective unless followed by "mark"
  bool singular = false;     // the single part's unit is singular ("second")
};

// A number, optionally followed by a unit and further smaller number-unit pairs.
std::optional<WordTime> ParseWordTime(std::string_view text, size_t pos) {
  WordTime t;
  size_t i = pos;
  if (!ReadNumber(text, i, t.number)) return std::nullopt;
  t.end = i;
  double number = t.number;
  Unit last = Unit::kNone;
  while (true) {
    size_t u = i;
    bool hyphen = false;
    if (u < text.size() && text[u] == '-' && t.parts == 0) {
      hyphen = true;
      ++u;
    } else {
      u = SkipSpaces(text, u, 1);
    }
    UnitMatch unit = ReadUnit(text, u);
    if (unit.unit == Unit::kNone || (hyphen && unit.letter)) break;
    if (last != Unit::kNone && unit.unit >= last) break;  // h, then m, then s
    if (t.parts == 0) {
      t.first_unit = unit.unit;
      t.letter_only = unit.letter;
      t.hyphenated = hyphen;
      t.singular = unit.singular;
    }
    t.seconds += number * UnitSeconds(unit.unit);
    ++t.parts;
    last = unit.unit;
    t.end = i = unit.end;
    if (last == Unit::kSecond) break;
    // The next pair: "1m15s", "1 min 15 s", "1 minute and 15 seconds", "1 hour, 2 minutes".
    size_t n = SkipSpaces(text, i, 2);
    if (n < text.size() && text[n] == ',') n = SkipSpaces(text, n + 1, 2);
    if (WordAt(text, n, "and")) n = SkipSpaces(text, n + 3, 2);
    if (n >= text.size() || !IsDigit(text[n])) break;
    size_t k = n;
    double next = 0;
    if (!ReadNumber(text, k, next)) break;
    // Only if a unit follows: peek.
    size_t peek = SkipSpaces(text, k, 1);
    UnitMatch following = ReadUnit(text, peek);
    if (following.unit == Unit::kNone || following.unit >= last) break;
    number = next;
    i = k;
  }
  if (t.parts == 0) t.seconds = t.number;
  if (t.parts > 1) t.letter_only = false;
  return t;
}

// A range separator after `pos`: returns where the second time starts, or npos.
size_t RangeSeparator(std::string_view text, size_t pos, bool allow_and) {
  size_t i = SkipSpaces(text, pos);
  size_t after = std::string_view::npos;
  if (text.substr(i, 3) == "-->") {
    after = i + 3;
  } else if (text.substr(i, 3) == "\xE2\x80\x93" || text.substr(i, 3) == "\xE2\x80\x94") {
    after = i + 3;  // en dash, em dash
  } else if (i < text.size() && (text[i] == '-' || text[i] == '~')) {
    after = i + 1;
  } else if (WordAt(text, i, "to")) {
    after = i + 2;
  } else if (WordAt(text, i, "until")) {
    after = i + 5;
  } else if (WordAt(text, i, "till")) {
    after = i + 4;
  } else if (WordAt(text, i, "through")) {
    after = i + 7;
  } else if (allow_and && WordAt(text, i, "and")) {
    after = i + 3;
  }
  if (after == std::string_view::npos) return after;
  after = SkipSpaces(text, after);
  if (after >= text.size() || !IsDigit(text[after])) return std::string_view::npos;
  return after;
}

class Scanner {
 public:
  Scanner(std::string_view text, bool lenient) : text_(text), lenient_(lenient) {}

  std::vector<TimeReference> Run() {
    size_t pos = 0;
    while (pos < text_.size()) {
      std::optional<TimeReference> ref = TryAt(pos);
      if (ref) {
        refs_.push_back(*ref);
        pos = ref->end;
      } else {
        ++pos;
      }
    }
    return std::move(refs_);
  }

 private:
  std::optional<TimeReference> TryAt(size_t pos) {
    if (text_[pos] == ']') {
      if (std::optional<Span> m = ParseMarker(text_, pos)) {
        return TimeReference{pos, m->end, m->seconds, std::nullopt, TimeForm::kMarker};
      }
      return std::nullopt;
    }
    if (!IsDigit(text_[pos]) || !LeftBoundary(text_, pos)) return std::nullopt;
    if (std::optional<TimeReference> clock = TryClock(pos)) return clock;
    return TryWords(pos);
  }

  std::optional<TimeReference> TryClock(size_t pos) {
    std::optional<Span> first = ParseClock(text_, pos);
    if (!first) return std::nullopt;
    TimeReference ref{pos, first->end, first->seconds, std::nullopt, TimeForm::kClock};
    std::vector<std::string> before = PreviousWords(text_, pos, 1);
    const bool between = !before.empty() && before[0] == "between";
    size_t second_at = RangeSeparator(text_, first->end, between);
    if (second_at != std::string_view::npos && LeftBoundary(text_, second_at)) {
      if (std::optional<Span> second = ParseClock(text_, second_at)) {
        if (second->seconds >= first->seconds) {
          ref.end = second->end;
          ref.end_seconds = second->seconds;
        }
      }
    }
    if (!lenient_) {
      if (ClockIsNotVideoTime(text_, ref.begin, ref.end)) return std::nullopt;
      if (BeforeContext(text_, pos, /*clock=*/true) == Context::kDuration ||
          DurationAfter(text_, ref.end)) {
        return std::nullopt;
      }
    }
    return ref;
  }

  std::optional<TimeReference> TryWords(size_t pos) {
    // "t=75", "t = 75s": an explicit time variable.
    const bool t_equals = TEqualsBefore(pos);
    std::optional<WordTime> first = ParseWordTime(text_, pos);
    if (!first) return std::nullopt;
    TimeReference ref{pos, first->end, first->seconds, std::nullopt, TimeForm::kWords};
    std::vector<std::string> before = PreviousWords(text_, pos, 1);
    const bool between = !before.empty() && before[0] == "between";
    bool range = false;
    size_t second_at = RangeSeparator(text_, first->end, between);
    if (second_at != std::string_view::npos && LeftBoundary(text_, second_at)) {
      std::optional<WordTime> second = ParseWordTime(text_, second_at);
      if (second && second->parts > 0) {
        double start = first->seconds;
        if (first->parts == 0) {
          // "10-25 seconds": the first number takes the second's unit (a single one).
          start = second->parts == 1 ? first->number * UnitSeconds(second->first_unit) : -1;
        }
        if (start >= 0 && second->seconds >= start &&
            !(second->letter_only && second->first_unit != Unit::kSecond)) {
          ref.seconds = start;
          ref.end = second->end;
          ref.end_seconds = second->seconds;
          range = true;
          if (second->hyphenated && !NextIsMark(second->end)) return std::nullopt;
        }
      }
    }
    if (!range && first->parts == 0) {
      if (!t_equals) return std::nullopt;  // a bare number is a time only as "t=75"
    }
    if (lenient_) return ref;
    Context context = BeforeContext(text_, pos, /*clock=*/false);
    if (context == Context::kDuration || DurationAfter(text_, ref.end)) return std::nullopt;
    if (range || first->parts >= 2) return ref;
    // A single number and unit.
    if (first->parts == 1) {
      if (first->letter_only && first->first_unit != Unit::kSecond) return std::nullopt;
      if (first->hyphenated) return NextIsMark(ref.end) ? std::optional(ref) : std::nullopt;
      if (first->singular && first->number != 1) return std::nullopt;  // "a 75 second clip"
    }
    if (t_equals || context == Context::kLocating || Bracketed(text_, ref.begin, ref.end) ||
        LocatingAfter(text_, ref.end)) {
      return ref;
    }
    return std::nullopt;
  }

  bool NextIsMark(size_t end) const { return NextWords(text_, end)[0] == "mark"; }

  bool TEqualsBefore(size_t pos) const {
    size_t i = pos;
    while (i > 0 && text_[i - 1] == ' ') --i;
    if (i == 0 || text_[i - 1] != '=') return false;
    --i;
    while (i > 0 && text_[i - 1] == ' ') --i;
    return i > 0 && Lower(text_[i - 1]) == 't' && (i == 1 || !IsWordByte(text_[i - 2]));
  }

  std::string_view text_;
  bool lenient_;
  std::vector<TimeReference> refs_;
};

}  // namespace

const char* TimeFormName(TimeForm form) {
  switch (form) {
    case TimeForm::kClock:
      return "clock";
    case TimeForm::kWords:
      return "words";
    case TimeForm::kMarker:
      return "marker";
  }
  return "clock";
}

std::vector<TimeReference> FindTimeReferences(std::string_view text) {
  return Scanner(text, /*lenient=*/false).Run();
}

std::optional<double> ParseTimeText(std::string_view text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && IsSpace(text[begin])) ++begin;
  while (end > begin && IsSpace(text[end - 1])) --end;
  std::string_view trimmed = text.substr(begin, end - begin);
  if (trimmed.empty()) return std::nullopt;
  size_t i = 0;
  double number = 0;
  if (ReadNumber(trimmed, i, number) && i == trimmed.size()) return number;
  std::vector<TimeReference> refs = Scanner(trimmed, /*lenient=*/true).Run();
  if (refs.size() == 1 && refs[0].begin == 0 && refs[0].end == trimmed.size() &&
      !refs[0].end_seconds) {
    return refs[0].seconds;
  }
  return std::nullopt;
}

std::string FormatClockTime(double seconds) {
  int64_t s = seconds > 0 ? static_cast<int64_t>(std::floor(seconds + 0.5)) : 0;
  char buffer[48];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof(buffer), "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%02lld:%02lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  }
  return buffer;
}

int64_t CodePointOffset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  int64_t count = 0;
  for (size_t i = 0; i < offset; ++i) {
    // Continuation bytes (10xxxxxx) belong to the code point before them.
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++count;
  }
  return count;
}

bool IsInsideItem(double seconds, std::optional<double> duration_seconds,
                  const std::vector<double>& frame_times) {
  if (!(seconds >= 0)) return false;
  double limit = 0;
  if (duration_seconds && *duration_seconds > 0) {
    limit = *duration_seconds;
  } else if (!frame_times.empty()) {
    limit = frame_times.back();
  } else {
    return false;
  }
  return seconds <= limit + kTimeSlackSeconds;
}

std::optional<size_t> NearestFrame(double seconds, std::optional<double> duration_seconds,
                                   const std::vector<double>& frame_times) {
  if (frame_times.empty() || !IsInsideItem(seconds, duration_seconds, frame_times)) {
    return std::nullopt;
  }
  auto it = std::lower_bound(frame_times.begin(), frame_times.end(), seconds);
  if (it == frame_times.end()) return frame_times.size() - 1;
  size_t after = static_cast<size_t>(it - frame_times.begin());
  if (after == 0) return 0;
  // The earlier frame wins a tie.
  return (seconds - frame_times[after - 1] <= frame_times[after] - seconds) ? after - 1 : after;
}

}  // namespace reel
