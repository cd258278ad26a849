// The small text rules of job files, shared by the parser, the renderer and tests: variable
// expansion, numbers, durations, byte sizes, enum names and "did you mean" suggestions. Pure
// functions, no I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "base/status.h"
#include "jobs/spec/job_spec.h"
#include "pipeline/sampling.h"
#include "pipeline/smart_resize.h"

namespace reel::jobs {

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Expands ${VAR} and ${VAR:-default} (default used when VAR is unset or empty; it may not itself
// contain '}'). "$${" is a literal "${"; a '$' not followed by '{' is literal. Errors
// (kInvalidArgument): an unset variable without default (the message names it), an unterminated
// "${", a bad variable name.
Result<std::string> ExpandVariables(std::string_view text, const EnvLookup& lookup);

// The inverse for literal text: "${" becomes "$${", so ExpandVariables gives `text` back.
std::string EscapeVariables(std::string_view text);

// Strict scalar parsing: the whole text must be consumed; surrounding spaces are not allowed.
std::optional<int64_t> ParseInteger(std::string_view text);
std::optional<double> ParseNumber(std::string_view text);  // finite decimal or exponent form
std::optional<bool> ParseBool(std::string_view text);      // true/false, yes/no, on/off

// Seconds: "90", "1.5", "500ms", "90s", "5m", "2h", or a clock time "1:30", "01:02:03.250".
std::optional<double> ParseSeconds(std::string_view text);

// Bytes: "1048576", or a number with a unit: B, KB/MB/GB/TB (powers of 1000), KiB/MiB/GiB/TiB
// (powers of 1024); units are case-insensitive and may follow a space. Fractions allowed with a
// unit ("1.5GiB"); the result is rounded down. nullopt on overflow.
std::optional<int64_t> ParseByteSize(std::string_view text);

// Shortest text that parses back to exactly `value` ("1", "0.95", "1e-04").
std::string FormatNumber(double value);

// "8 GiB", "1.5 MiB", "512 B": exact when possible, else the byte count.
std::string FormatByteSize(int64_t bytes);

// Optimal-string-alignment distance (insertions, deletions, substitutions, adjacent swaps).
int EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `name` if it is close enough to be a likely typo, else "".
std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates);

// A 1-based line and column in a text.
struct TextPosition {
  int line = 1;
  int column = 1;
  bool operator==(const TextPosition&) const = default;
};

// The position of byte `offset` of `text` (columns count bytes, as yaml-cpp's marks do).
TextPosition PositionOfOffset(std::string_view text, size_t offset);

// Hints for YAML syntax errors, from the text itself (yaml-cpp's messages do not give them).
// The last line (1-based) at or before `up_to_line` whose indentation holds a tab; nullopt if
// none. YAML indents with spaces only, and yaml-cpp says "illegal block entry" and the like.
std::optional<int> LastTabIndentedLine(std::string_view text, int up_to_line);
// The innermost flow collection ('[' or '{') still open at byte `end` of `text`, skipping quoted
// strings and comments: where a "flow not found" error really starts. A closing bracket that does
// not match the innermost open one closes nothing. nullopt if none is open.
struct OpenBracket {
  char bracket = '[';
  TextPosition position;
};
std::optional<OpenBracket> FindUnclosedFlow(std::string_view text, size_t end);

// Enum names as written in job files.
const char* SamplingPolicyKey(pipeline::SamplingPolicy policy);
const char* ResizeModeKey(pipeline::ResizeMode mode);
const char* FrameShapeKey(pipeline::FrameShape shape);
const char* FpsTimelineKey(pipeline::FpsTimeline timeline);

using reel::EnumNames;  // base/enum_names.h

const EnumNames<pipeline::SamplingPolicy>& SamplingPolicyNames();
const EnumNames<pipeline::ResizeMode>& ResizeModeNames();
const EnumNames<pipeline::FrameShape>& FrameShapeNames();
const EnumNames<pipeline::FpsTimeline>& FpsTimelineNames();
const EnumNames<InputKind>& InputKindNames();
const EnumNames<ThinkingMode>& ThinkingModeNames();
const EnumNames<PromptKind>& PromptKindNames();
const EnumNames<FitStrategy>& FitStrategyNames();
const EnumNames<VisionDType>& VisionDTypeNames();
const EnumNames<SpeechPrefer>& SpeechPreferNames();

}  // namespace reel::jobs
