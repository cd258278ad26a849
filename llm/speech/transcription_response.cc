#include "llm/speech/transcription_response.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "llm/client/json_depth.h"
#include "llm/client/utf8_text.h"
#include "pipeline/audio/language_code.h"

namespace reel::llm {
namespace {

using nlohmann::json;

std::optional<double> Number(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string Text(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  std::string text = SanitizedUtf8(it->get<std::string>());
  for (char& c : text) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  const size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  const size_t last = text.find_last_not_of(' ');
  return text.substr(first, last - first + 1);
}

const json& Member(const json& object, const char* key) {
  static const json kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

double Clamp(double t, double chunk_s) { return std::clamp(t, 0.0, std::max(0.0, chunk_s)); }

std::vector<TranscriptWord> Words(const json& list, double chunk_s) {
  std::vector<TranscriptWord> words;
  if (!list.is_array()) return words;
  for (const json& w : list) {
    if (!w.is_object()) continue;
    TranscriptWord word;
    word.text = Text(w, "word");
    if (word.text.empty()) word.text = Text(w, "text");
    const auto start = Number(w, "start");
    const auto end = Number(w, "end");
    if (word.text.empty() || !start || !end) continue;
    word.start_s = Clamp(*start, chunk_s);
    word.end_s = std::max(word.start_s, Clamp(*end, chunk_s));
    if (auto p = Number(w, "probability"); p && *p >= 0 && *p <= 1) word.confidence = *p;
    words.push_back(std::move(word));
  }
  return words;
}

}  // namespace

Result<ParsedTranscription> ParseTranscriptionResponse(std::string_view body, double chunk_s) {
  if (JsonNestingDepth(body) > kMaxJsonDepth) {
    return CorruptData("transcription answer nests deeper than " + std::to_string(kMaxJsonDepth) +
                       " levels");
  }
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return CorruptData("transcription answer is not JSON");
  if (!doc.is_object()) return CorruptData("transcription answer is not a JSON object");
  ParsedTranscription out;
  out.language = pipeline::LanguageCode(Text(doc, "language"));
  auto segments = doc.find("segments");
  if (segments == doc.end() || !segments->is_array()) {
    auto text = doc.find("text");
    if (text == doc.end() || !text->is_string()) {
      return CorruptData("transcription answer has neither segments nor text");
    }
    out.timed = false;
    TranscriptSegment s;
    s.text = Text(doc, "text");
    s.end_s = std::max(0.0, chunk_s);
    s.words = Words(Member(doc, "words"), chunk_s);
    out.has_words = !s.words.empty();
    if (!s.text.empty()) out.segments.push_back(std::move(s));
    return out;
  }
  for (const json& seg : *segments) {
    if (!seg.is_object()) continue;
    TranscriptSegment s;
    s.text = Text(seg, "text");
    const auto start = Number(seg, "start");
    const auto end = Number(seg, "end");
    if (s.text.empty() || !start || !end) continue;
    s.start_s = Clamp(*start, chunk_s);
    s.end_s = std::max(s.start_s, Clamp(*end, chunk_s));
    if (auto lp = Number(seg, "avg_logprob"); lp && *lp <= 0) {
      double confidence = std::exp(*lp);
      if (auto ns = Number(seg, "no_speech_prob"); ns && *ns >= 0 && *ns <= 1) {
        confidence *= 1 - *ns;
      }
      s.confidence = confidence;
    }
    s.words = Words(Member(seg, "words"), chunk_s);
    out.segments.push_back(std::move(s));
  }
  std::stable_sort(
      out.segments.begin(), out.segments.end(),
      [](const TranscriptSegment& a, const TranscriptSegment& b) { return a.start_s < b.start_s; });
  // Top-level words (OpenAI's shape) go to the segment holding their middle, else the nearest.
  std::vector<TranscriptWord> loose = Words(Member(doc, "words"), chunk_s);
  if (!loose.empty() && !out.segments.empty()) {
    for (TranscriptWord& w : loose) {
      const double mid = (w.start_s + w.end_s) / 2;
      size_t best = 0;
      double best_distance = 1e300;
      for (size_t i = 0; i < out.segments.size(); ++i) {
        const TranscriptSegment& s = out.segments[i];
        const double d = mid < s.start_s ? s.start_s - mid : mid > s.end_s ? mid - s.end_s : 0;
        if (d < best_distance) {
          best_distance = d;
          best = i;
        }
      }
      out.segments[best].words.push_back(std::move(w));
    }
  }
  for (TranscriptSegment& s : out.segments) {
    std::stable_sort(
        s.words.begin(), s.words.end(),
        [](const TranscriptWord& a, const TranscriptWord& b) { return a.start_s < b.start_s; });
    if (!s.words.empty()) out.has_words = true;
  }
  return out;
}

}  // namespace reel::llm
