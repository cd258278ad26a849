#include "jobs/spec/job_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "base/strings.h"

namespace reel::jobs {
namespace {

bool IsNameStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

}  // namespace

Result<std::string> ExpandVariables(std::string_view text, const EnvLookup& lookup) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c != '$') {
      out += c;
      ++i;
      continue;
    }
    if (text.substr(i, 3) == "$${") {
      out += "${";
      i += 3;
      continue;
    }
    if (text.substr(i, 2) != "${") {
      out += c;
      ++i;
      continue;
    }
    size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      return InvalidArgument("unterminated '${' (write '$${' for a literal '${')");
    }
    std::string_view inner = text.substr(i + 2, close - i - 2);
    std::string_view name = inner;
    std::optional<std::string_view> fallback;
    if (size_t dash = inner.find(":-"); dash != std::string_view::npos) {
      name = inner.substr(0, dash);
      fallback = inner.substr(dash + 2);
    }
    bool valid =
        !name.empty() && IsNameStart(name[0]) && std::all_of(name.begin(), name.end(), IsNameChar);
    if (!valid) {
      return InvalidArgument("bad variable reference '${" + std::string(inner) +
                             "}' (names are letters, digits and '_')");
    }
    std::optional<std::string> value = lookup(std::string(name));
    if (value && !value->empty()) {
      out += *value;
    } else if (fallback) {
      out += *fallback;
    } else if (value) {
      out += "";  // set but empty, no default: empty, like the shell
    } else {
      return InvalidArgument("environment variable '" + std::string(name) +
                             "' is not set (set it, or write ${" + std::string(name) +
                             ":-default})");
    }
    i = close + 1;
  }
  return out;
}

std::string EscapeVariables(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') out += '$';
    out += text[i];
  }
  return out;
}

std::optional<int64_t> ParseInteger(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseNumber(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<bool> ParseBool(std::string_view text) {
  std::string lower = Lower(text);
  if (lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "no" || lower == "off") return false;
  return std::nullopt;
}

std::optional<double> ParseSeconds(std::string_view text) {
  if (text.find(':') != std::string_view::npos) {
    // [[H:]M:]S with S possibly fractional; earlier fields are whole numbers.
    double total = 0;
    size_t start = 0;
    int fields = 0;
    while (true) {
      size_t colon = text.find(':', start);
      std::string_view part = text.substr(
          start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
      ++fields;
      if (part.empty() || part[0] == '-' || part[0] == '+' || fields > 3) return std::nullopt;
      if (colon == std::string_view::npos) {
        std::optional<double> seconds = ParseNumber(part);
        if (!seconds || *seconds >= 60) return std::nullopt;
        return total * 60 + *seconds;
      }
      std::optional<int64_t> whole = ParseInteger(part);
      if (!whole || (fields > 1 && *whole >= 60)) return std::nullopt;
      total = total * 60 + static_cast<double>(*whole);
      start = colon + 1;
    }
  }
  struct Unit {
    const char* suffix;
    double scale;
  };
  static const Unit kUnits[] = {{"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
  for (const Unit& unit : kUnits) {
    std::string_view suffix(unit.suffix);
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      std::string_view number = text.substr(0, text.size() - suffix.size());
      if (number.back() == ' ') number.remove_suffix(1);
      // "5ms" must not be read as 5m + "s": the digits before the suffix must parse alone.
      std::optional<double> value = ParseNumber(number);
      if (value) return *value * unit.scale;
    }
  }
  return ParseNumber(text);
}

std::optional<int64_t> ParseByteSize(std::string_view text) {
  if (std::optional<int64_t> plain = ParseInteger(text)) return plain;
  size_t split = 0;
  while (split < text.size() &&
         ((text[split] >= '0' && text[split] <= '9') || text[split] == '.' || text[split] == '+')) {
    ++split;
  }
  std::string_view number = text.substr(0, split);
  std::string unit = Lower(text.substr(split));
  if (!unit.empty() && unit[0] == ' ') unit.erase(0, 1);
  struct Unit {
    const char* name;
    double scale;
  };
  static const Unit kUnits[] = {
      {"b", 1},           {"kb", 1e3},           {"mb", 1e6},
      {"gb", 1e9},        {"tb", 1e12},          {"kib", 1024.0},
      {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
  };
  std::optional<double> value = ParseNumber(number);
  if (!value) return std::nullopt;
  for (const Unit& u : kUnits) {
    if (unit == u.name) {
      double bytes = std::floor(*value * u.scale);
      if (bytes >= 9.2e18) return std::nullopt;
      return static_cast<int64_t>(bytes);
    }
  }
  return std::nullopt;
}

std::string FormatNumber(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, end);
}

std::string FormatByteSize(int64_t bytes) {
  static const char* kUnits[] = {"TiB", "GiB", "MiB", "KiB"};
  for (int i = 0; i < 4; ++i) {
    int64_t scale = int64_t{1} << (10 * (4 - i));
    if (bytes >= scale && bytes % (scale / 4) == 0) {
      return FormatNumber(static_cast<double>(bytes) / static_cast<double>(scale)) + " " +
             kUnits[i];
    }
  }
  return std::to_string(bytes) + " B";
}

TextPosition PositionOfOffset(std::string_view text, size_t offset) {
  TextPosition position;
  offset = std::min(offset, text.size());
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++position.line;
      position.column = 1;
    } else {
      ++position.column;
    }
  }
  return position;
}

std::optional<int> LastTabIndentedLine(std::string_view text, int up_to_line) {
  std::optional<int> found;
  int line = 1;
  size_t start = 0;
  while (start <= text.size() && line <= up_to_line) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    for (size_t i = start; i < end && (text[i] == ' ' || text[i] == '\t'); ++i) {
      if (text[i] == '\t') {
        // A line of only blanks is no indentation problem.
        size_t rest = text.find_first_not_of(" \t\r", i);
        if (rest != std::string_view::npos && rest < end) found = line;
        break;
      }
    }
    start = end + 1;
    ++line;
  }
  return found;
}

std::optional<OpenBracket> FindUnclosedFlow(std::string_view text, size_t end) {
  end = std::min(end, text.size());
  struct Open {
    char bracket;
    size_t offset;
  };
  std::vector<Open> stack;
  bool value_start = true;  // block context: where a flow collection or a quote may begin
  size_t line_indent = 0;   // indentation of the current line
  bool at_line_start = true;
  std::optional<size_t> block_scalar_indent;  // inside a '|' or '>' scalar: its key's indent
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  size_t i = 0;
  while (i < end) {
    const char c = text[i];
    if (at_line_start) {
      size_t j = i;
      while (j < end && (text[j] == ' ' || text[j] == '\t')) ++j;
      line_indent = j - i;
      at_line_start = false;
      if (block_scalar_indent) {
        bool empty = j >= end || text[j] == '\n' || text[j] == '\r';
        if (empty || line_indent > *block_scalar_indent) {  // still the scalar's content
          size_t nl = text.find('\n', j);
          i = nl == std::string_view::npos ? end : nl + 1;
          at_line_start = true;
          continue;
        }
        block_scalar_indent.reset();
      }
      if (stack.empty()) value_start = true;
      i = j;
      continue;
    }
    if (c == '\n') {
      at_line_start = true;
      ++i;
      continue;
    }
    const bool after_blank = i == 0 || blank(text[i - 1]);
    if (c == '#' && after_blank) {  // a comment
      size_t nl = text.find('\n', i);
      i = nl == std::string_view::npos ? end : nl;
      continue;
    }
    const bool token_start =
        stack.empty()
            ? value_start
            : (after_blank || std::string_view("[{,:").find(text[i - 1]) != std::string_view::npos);
    if ((c == '"' || c == '\'') && token_start) {  // a quoted scalar, possibly over lines
      size_t j = i + 1;
      while (j < end) {
        if (c == '"' && text[j] == '\\') {
          j += 2;
        } else if (text[j] == c) {
          if (c == '\'' && j + 1 < end && text[j + 1] == '\'') {
            j += 2;
          } else {
            break;
          }
        } else {
          ++j;
        }
      }
      i = j + 1;
      value_start = false;
      continue;
    }
    if (stack.empty()) {
      if (value_start && (c == '[' || c == '{')) {
        stack.push_back({c, i++});
        continue;
      }
      if (value_start && (c == '|' || c == '>')) {
        block_scalar_indent = line_indent;
        value_start = false;
        ++i;
        continue;
      }
      const bool indicator_follows = i + 1 >= text.size() || blank(text[i + 1]);
      if ((c == '-' || c == ':' || c == '?') && indicator_follows) {
        value_start = true;  // a list entry, a map value or a complex key follows
      } else if (value_start && (c == '&' || c == '!')) {
        while (i < end && !blank(text[i])) ++i;  // an anchor or a tag before the value
        continue;
      } else if (!blank(c)) {
        value_start = false;
      }
      ++i;
      continue;
    }
    if (c == '[' || c == '{') {
      stack.push_back({c, i});
    } else if ((c == ']' && stack.back().bracket == '[') ||
               (c == '}' && stack.back().bracket == '{')) {
      stack.pop_back();
      if (stack.empty()) value_start = false;
    }
    ++i;
  }
  if (stack.empty()) return std::nullopt;
  return OpenBracket{stack.back().bracket, PositionOfOffset(text, stack.back().offset)};
}

int EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates) {
  std::string lower = Lower(name);
  std::string best;
  int best_distance = std::numeric_limits<int>::max();
  for (const std::string& candidate : candidates) {
    int distance = EditDistance(lower, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  // A typo: at most a third of the longer name changed, and never more than 3 edits.
  size_t longer = std::max(name.size(), best.size());
  if (best.empty() || best_distance > 3 || best_distance * 3 > static_cast<int>(longer)) {
    // A prefix of a valid name ("max" for "max_frames") or a valid name with extra words
    // ("sampling_policy" for "policy") is also a likely intent.
    for (const std::string& candidate : candidates) {
      if (lower.size() >= 3 && (candidate.starts_with(lower) || lower.ends_with(candidate))) {
        return candidate;
      }
    }
    return "";
  }
  return best;
}

const EnumNames<pipeline::SamplingPolicy>& SamplingPolicyNames() {
  using P = pipeline::SamplingPolicy;
  static const EnumNames<P> names{{{"fps", P::kFps},
                                   {"count", P::kCount},
                                   {"keyframes", P::kKeyframes},
                                   {"scene", P::kScene},
                                   {"timestamps", P::kTimestamps}}};
  return names;
}

const EnumNames<pipeline::FpsTimeline>& FpsTimelineNames() {
  using T = pipeline::FpsTimeline;
  static const EnumNames<T> names{{{"auto", T::kAuto}, {"index", T::kIndex}, {"time", T::kTime}}};
  return names;
}

const EnumNames<pipeline::ResizeMode>& ResizeModeNames() {
  using M = pipeline::ResizeMode;
  static const EnumNames<M> names{
      {{"smart", M::kSmart}, {"long_side", M::kLongSide}, {"none", M::kNone}}};
  return names;
}

const EnumNames<pipeline::FrameShape>& FrameShapeNames() {
  using S = pipeline::FrameShape;
  static const EnumNames<S> names{{{"display", S::kDisplay}, {"storage", S::kStorage}}};
  return names;
}

const EnumNames<InputKind>& InputKindNames() {
  static const EnumNames<InputKind> names{{{"auto", InputKind::kAuto},
                                           {"video", InputKind::kVideo},
                                           {"image", InputKind::kImage},
                                           {"document", InputKind::kDocument},
                                           {"subtitle", InputKind::kSubtitle},
                                           {"audio", InputKind::kAudio}}};
  return names;
}

const EnumNames<ThinkingMode>& ThinkingModeNames() {
  static const EnumNames<ThinkingMode> names{{{"enabled", ThinkingMode::kEnabled},
                                              {"disabled", ThinkingMode::kDisabled},
                                              {"adaptive", ThinkingMode::kAdaptive}}};
  return names;
}

const EnumNames<PromptKind>& PromptKindNames() {
  static const EnumNames<PromptKind> names{
      {{"question", PromptKind::kQuestion}, {"chapters", PromptKind::kChapters}}};
  return names;
}

const EnumNames<FitStrategy>& FitStrategyNames() {
  static const EnumNames<FitStrategy> names{{{"thin_frames", FitStrategy::kThinFrames},
                                             {"lower_resolution", FitStrategy::kLowerResolution},
                                             {"split", FitStrategy::kSplit},
                                             {"fail", FitStrategy::kFail}}};
  return names;
}

const EnumNames<VisionDType>& VisionDTypeNames() {
  static const EnumNames<VisionDType> names{
      {{"f32", VisionDType::kF32}, {"f16", VisionDType::kF16}, {"bf16", VisionDType::kBF16}}};
  return names;
}

const EnumNames<SpeechPrefer>& SpeechPreferNames() {
  static const EnumNames<SpeechPrefer> names{{{"subtitles", SpeechPrefer::kSubtitles},
                                              {"speech", SpeechPrefer::kSpeech},
                                              {"both", SpeechPrefer::kBoth}}};
  return names;
}

namespace {
template <typename E>
const char* NameOf(const EnumNames<E>& names, E value) {
  for (const auto& [n, e] : names.entries) {
    if (e == value) return n.c_str();
  }
  return "?";
}
}  // namespace

const char* SamplingPolicyKey(pipeline::SamplingPolicy p) {
  return NameOf(SamplingPolicyNames(), p);
}
const char* FpsTimelineKey(pipeline::FpsTimeline t) { return NameOf(FpsTimelineNames(), t); }
const char* ResizeModeKey(pipeline::ResizeMode m) { return NameOf(ResizeModeNames(), m); }
const char* FrameShapeKey(pipeline::FrameShape s) { return NameOf(FrameShapeNames(), s); }
const char* InputKindName(InputKind kind) { return NameOf(InputKindNames(), kind); }
const char* ThinkingModeName(ThinkingMode mode) { return NameOf(ThinkingModeNames(), mode); }
const char* PromptKindName(PromptKind k) { return NameOf(PromptKindNames(), k); }
const char* FitStrategyName(FitStrategy s) { return NameOf(FitStrategyNames(), s); }
const char* VisionDTypeName(VisionDType d) { return NameOf(VisionDTypeNames(), d); }
const char* SpeechPreferName(SpeechPrefer p) { return NameOf(SpeechPreferNames(), p); }

}  // namespace reel::jobs
