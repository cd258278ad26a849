#include "jobs/job_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace reel::jobs {
namespace {

bool IsNameStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

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
                                           {"subtitle", InputKind::kSubtitle}}};
  return names;
}

const EnumNames<ThinkingMode>& ThinkingModeNames() {
  static const EnumNames<ThinkingMode> names{{{"enabled", ThinkingMode::kEnabled},
                                              {"disabled", ThinkingMode::kDisabled},
                                              {"adaptive", ThinkingMode::kAdaptive}}};
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
const char* FitStrategyName(FitStrategy s) { return NameOf(FitStrategyNames(), s); }
const char* VisionDTypeName(VisionDType d) { return NameOf(VisionDTypeNames(), d); }

}  // namespace reel::jobs
