#include "llm/answers/chapters.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/strings.h"
#include "llm/answers/time_references.h"

namespace reel::llm {
namespace {

using nlohmann::json;

constexpr size_t kMaxChapters = 10000;
constexpr int kMaxAnswerDepth = 64;  // nlohmann's parser recurses: deeper input is refused first

// The JSON inside the answer: after a `</mm:think>` (reasoning the server did not split off),
// inside a ``` fence if there is one.
std::string_view AnswerJson(std::string_view answer) {
  constexpr std::string_view kThinkEnd = "</mm:think>";
  if (size_t at = answer.rfind(kThinkEnd); at != std::string_view::npos) {
    answer.remove_prefix(at + kThinkEnd.size());
  }
  answer = reel::Trim(answer);
  if (answer.starts_with("```")) {
    size_t line_end = answer.find('\n');
    if (line_end == std::string_view::npos) return answer;
    answer.remove_prefix(line_end + 1);
    if (size_t close = answer.rfind("```"); close != std::string_view::npos) {
      answer = answer.substr(0, close);
    }
    answer = reel::Trim(answer);
  }
  return answer;
}

// The deepest nesting of arrays and objects, outside strings.
int AnswerNestingDepth(std::string_view text) {
  int depth = 0;
  int max = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max = std::max(max, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max;
}

const char* JsonTypeName(const json& j) {
  if (j.is_object()) return "object";
  if (j.is_array()) return "array";
  if (j.is_string()) return "string";
  if (j.is_number()) return "number";
  if (j.is_boolean()) return "boolean";
  return "null";
}

std::string Quoted(const json& j) {
  std::string text = j.is_string() ? j.get<std::string>() : j.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return "\"" + text + "\"";
}

std::string Nth(size_t index) { return "chapter " + std::to_string(index + 1); }

bool IsShort(std::optional<double> duration_seconds) {
  return duration_seconds && *duration_seconds > 0 && *duration_seconds < kSubSecondBelowSeconds;
}

std::string Range(double start, double end) {
  return FormatChapterTime(start) + "-" + FormatChapterTime(end);
}

// A chapter's time field as seconds, or the reason it is not one.
Result<double> TimeField(const json& chapter, const char* key, size_t index) {
  auto it = chapter.find(key);
  if (it == chapter.end() || it->is_null()) {
    return InvalidArgument(Nth(index) + " has no \"" + key + "\"");
  }
  std::optional<double> seconds;
  if (it->is_number()) {
    double value = it->get<double>();
    if (std::isfinite(value) && value >= 0) seconds = value;
  } else if (it->is_string()) {
    seconds = ParseTimeText(it->get<std::string>());
  }
  if (!seconds) {
    return InvalidArgument(Nth(index) + ": " + key + " " + Quoted(*it) +
                           " is not a time (write MM:SS, or H:MM:SS from an hour on)");
  }
  return *seconds;
}

Result<std::string> TextField(const json& chapter, const char* key, size_t index, bool non_empty) {
  auto it = chapter.find(key);
  if (it == chapter.end() || it->is_null()) {
    return InvalidArgument(Nth(index) + " has no \"" + key + "\"");
  }
  if (!it->is_string()) {
    return InvalidArgument(Nth(index) + ": \"" + key + "\" is a " + JsonTypeName(*it) +
                           ", not a string");
  }
  std::string text = it->get<std::string>();
  if (non_empty && reel::Trim(text).empty()) {
    return InvalidArgument(Nth(index) + " has an empty \"" + key + "\"");
  }
  return text;
}

}  // namespace

std::string FormatChapterTime(double seconds) {
  const double rounded = std::round(std::max(0.0, seconds) * 10) / 10;
  if (rounded == std::floor(rounded)) return FormatClockTime(rounded);
  const double whole = std::floor(rounded);
  const std::string clock = FormatClockTime(whole);
  return clock + "." + std::to_string(static_cast<int>(std::lround((rounded - whole) * 10)));
}

std::string ChaptersJsonSchema(std::optional<double> duration_seconds) {
  // Times: MM:SS, or H:MM:SS; minutes may pass 59 in the MM:SS form. A short item's times take
  // tenths of a second (MM:SS.s): whole seconds cannot divide a 3-second clip.
  const bool tenths = IsShort(duration_seconds);
  const std::string pattern = tenths ? R"json("^[0-9]{1,2}(:[0-5][0-9]){1,2}(\\.[0-9]{1,3})?$")json"
                                     : R"json("^[0-9]{1,2}(:[0-5][0-9]){1,2}$")json";
  const std::string form =
      tenths ? "MM:SS.s (tenths of a second)" : "MM:SS (H:MM:SS from an hour on)";
  return R"json({"type":"object","properties":{"chapters":{"type":"array","minItems":1,"items":{)json"
         R"json("type":"object","properties":{)json"
         R"json("start":{"type":"string","pattern":)json" +
         pattern + R"json(,"description":"where the chapter starts, )json" + form +
         R"json("},)json"
         R"json("end":{"type":"string","pattern":)json" +
         pattern + R"json(,"description":"where the chapter ends, )json" + form +
         R"json("},)json"
         R"json("title":{"type":"string","minLength":1},)json"
         R"json("summary":{"type":"string"}},)json"
         R"json("required":["start","end","title","summary"],"additionalProperties":false}}},)json"
         R"json("required":["chapters"],"additionalProperties":false})json";
}

std::string ChaptersQuestion(std::optional<double> duration_seconds) {
  std::string length;
  if (IsShort(duration_seconds)) {
    // A short clip: its chapters are seconds long, so the times need tenths of a second.
    return "Divide this video into chapters: consecutive parts that each show one scene, topic "
           "or activity. Every frame you were shown comes after its time in seconds from the "
           "start of the video; use those times. The video is " +
           FormatChapterTime(*duration_seconds) +
           " long, so give times to a tenth of a second. For each chapter give its start and "
           "end as MM:SS.s (minutes, seconds and tenths, e.g. 00:01.5), a short title, and a "
           "summary of one or two sentences. Chapters must be in order, must not overlap, and "
           "must lie within the video. Answer with JSON only, in this form: {\"chapters\": "
           "[{\"start\": \"00:00.0\", \"end\": \"00:01.5\", \"title\": \"...\", "
           "\"summary\": \"...\"}]}";
  }
  if (duration_seconds && *duration_seconds > 0) {
    length = " The video is " + FormatClockTime(*duration_seconds) + " long.";
  }
  return "Divide this video into chapters: consecutive parts that each show one scene, topic or "
         "activity. Every frame you were shown comes after its time in seconds from the start of "
         "the video; use those times." +
         length +
         " For each chapter give its start and end as MM:SS (H:MM:SS from one hour on), a short "
         "title, and a summary of one or two sentences. Chapters must be in order, must not "
         "overlap, and must lie within the video. Answer with JSON only, in this form: "
         "{\"chapters\": [{\"start\": \"00:00\", \"end\": \"00:42\", \"title\": \"...\", "
         "\"summary\": \"...\"}]}";
}

std::string ChaptersRetryQuestion(std::string_view reason) {
  return "Your answer could not be used as chapters: " + std::string(reason) +
         ". Answer again with JSON only, in the same form ({\"chapters\": [{\"start\": \"MM:SS\", "
         "\"end\": \"MM:SS\", \"title\": \"...\", \"summary\": \"...\"}]}), and fix that.";
}

Result<std::vector<Chapter>> ValidateChapters(std::string_view answer,
                                              const ChapterTimeline& timeline) {
  const std::vector<double>& frames = timeline.frame_times;
  if (frames.empty() && !(timeline.duration_seconds && *timeline.duration_seconds > 0)) {
    return InvalidArgument("the item has no timeline (no sampled frames and no duration)");
  }
  std::string_view text = AnswerJson(answer);
  if (text.empty()) return InvalidArgument("the answer is empty");
  if (AnswerNestingDepth(text) > kMaxAnswerDepth) {
    return InvalidArgument("the answer nests JSON deeper than " + std::to_string(kMaxAnswerDepth));
  }
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    return InvalidArgument("the answer is not JSON (syntax error at byte " +
                           std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {
    // out_of_range: a number too large for a double ("1e999").
    return InvalidArgument("the answer is not usable JSON (a number is out of range)");
  }
  const json* list = &root;
  if (root.is_object()) {
    auto it = root.find("chapters");
    if (it == root.end()) {
      return InvalidArgument("the answer has no \"chapters\" (expected {\"chapters\": [...]})");
    }
    list = &*it;
  }
  if (!list->is_array()) {
    return InvalidArgument(std::string("expected {\"chapters\": [...]}, got a JSON ") +
                           JsonTypeName(*list));
  }
  if (list->empty()) return InvalidArgument("the answer has no chapters");
  if (list->size() > kMaxChapters) {
    return InvalidArgument("too many chapters (" + std::to_string(list->size()) + ", at most " +
                           std::to_string(kMaxChapters) + ")");
  }
  // The end of the item, for messages and clamping.
  const double limit = (timeline.duration_seconds && *timeline.duration_seconds > 0)
                           ? *timeline.duration_seconds
                           : frames.back();
  std::vector<Chapter> chapters;
  chapters.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    if (!item.is_object()) {
      return InvalidArgument(Nth(i) + " is a " + JsonTypeName(item) + ", not an object");
    }
    Chapter c;
    REEL_ASSIGN_OR_RETURN(c.start_seconds, TimeField(item, "start", i));
    REEL_ASSIGN_OR_RETURN(c.end_seconds, TimeField(item, "end", i));
    REEL_ASSIGN_OR_RETURN(c.title, TextField(item, "title", i, /*non_empty=*/true));
    REEL_ASSIGN_OR_RETURN(c.summary, TextField(item, "summary", i, /*non_empty=*/false));
    if (!IsInsideItem(c.start_seconds, timeline.duration_seconds, frames)) {
      return InvalidArgument(Nth(i) + " starts at " + FormatChapterTime(c.start_seconds) +
                             ", after the end of the video (" + FormatChapterTime(limit) + ")");
    }
    if (!IsInsideItem(c.end_seconds, timeline.duration_seconds, frames)) {
      return InvalidArgument(Nth(i) + " ends at " + FormatChapterTime(c.end_seconds) +
                             ", after the end of the video (" + FormatChapterTime(limit) + ")");
    }
    if (c.end_seconds <= c.start_seconds) {
      if (c.end_seconds == c.start_seconds) {
        return InvalidArgument(Nth(i) + " is empty: it starts and ends at " +
                               FormatChapterTime(c.start_seconds));
      }
      return InvalidArgument(Nth(i) + " ends (" + FormatChapterTime(c.end_seconds) +
                             ") before it starts (" + FormatChapterTime(c.start_seconds) + ")");
    }
    c.end_seconds = std::min(c.end_seconds, limit);
    c.start_seconds = std::min(c.start_seconds, c.end_seconds);
    if (!chapters.empty()) {
      const Chapter& prev = chapters.back();
      if (c.start_seconds < prev.start_seconds) {
        return InvalidArgument(
            Nth(i) + " starts (" + FormatChapterTime(c.start_seconds) + ") before " + Nth(i - 1) +
            " (" + FormatChapterTime(prev.start_seconds) + "): chapters must be in order");
      }
      if (c.start_seconds < prev.end_seconds) {
        return InvalidArgument(Nth(i) + " (" + Range(c.start_seconds, c.end_seconds) +
                               ") overlaps " + Nth(i - 1) + " (" +
                               Range(prev.start_seconds, prev.end_seconds) + ")");
      }
    }
    c.start_frame = NearestFrame(c.start_seconds, timeline.duration_seconds, frames);
    c.end_frame = NearestFrame(c.end_seconds, timeline.duration_seconds, frames);
    if (c.start_frame) c.frame_start_seconds = frames[*c.start_frame];
    if (c.end_frame) c.frame_end_seconds = frames[*c.end_frame];
    chapters.push_back(std::move(c));
  }
  return chapters;
}

std::string ChaptersToJson(const std::vector<Chapter>& chapters) {
  json out = json::array();
  for (const Chapter& c : chapters) {
    json j = json::object();
    j["start"] = FormatChapterTime(c.start_seconds);
    j["end"] = FormatChapterTime(c.end_seconds);
    j["start_seconds"] = c.start_seconds;
    j["end_seconds"] = c.end_seconds;
    if (c.start_frame) j["start_frame"] = *c.start_frame;
    if (c.end_frame) j["end_frame"] = *c.end_frame;
    j["title"] = c.title;
    j["summary"] = c.summary;
    out.push_back(std::move(j));
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace reel::llm
