#include "llm/speech/transcript_format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace reel::llm {
namespace {

int64_t Millis(double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0) return 0;
  return static_cast<int64_t>(std::llround(seconds * 1000));
}

std::string OneLine(const std::string& text) {
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r') ? ' ' : c;
  return out;
}

std::string VttEscaped(const std::string& text) {
  std::string out;
  for (char c : OneLine(text)) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string CueTimeMs(int64_t ms, char separator) {
  char text[48];
  std::snprintf(text, sizeof(text), "%02lld:%02lld:%02lld%c%03lld",
                static_cast<long long>(ms / 3600000), static_cast<long long>(ms / 60000 % 60),
                static_cast<long long>(ms / 1000 % 60), separator,
                static_cast<long long>(ms % 1000));
  return text;
}

// Start and end of a cue in ms on the player's clock.
std::pair<int64_t, int64_t> CueSpan(const TranscriptSegment& s, double offset_s) {
  const int64_t start = Millis(s.start_s - offset_s);
  const int64_t end = std::max(start + 1, Millis(s.end_s - offset_s));
  return {start, end};
}

double Rounded(double seconds) { return static_cast<double>(Millis(seconds)) / 1000; }

}  // namespace

std::string CueTime(double seconds, char decimal_separator) {
  return CueTimeMs(Millis(seconds), decimal_separator);
}

std::string FormatSrt(const std::vector<TranscriptSegment>& segments, double offset_s) {
  std::string out;
  int n = 0;
  for (const TranscriptSegment& s : segments) {
    const std::string text = OneLine(s.text);
    if (text.empty()) continue;
    const auto [start, end] = CueSpan(s, offset_s);
    out += std::to_string(++n) + "\n" + CueTimeMs(start, ',') + " --> " + CueTimeMs(end, ',') +
           "\n" + text + "\n\n";
  }
  return out;
}

std::string FormatVtt(const std::vector<TranscriptSegment>& segments, double offset_s) {
  std::string out = "WEBVTT\n\n";
  for (const TranscriptSegment& s : segments) {
    const std::string text = VttEscaped(s.text);
    if (text.empty()) continue;
    const auto [start, end] = CueSpan(s, offset_s);
    out += CueTimeMs(start, '.') + " --> " + CueTimeMs(end, '.') + "\n" + text + "\n\n";
  }
  return out;
}

std::string FormatText(const std::vector<TranscriptSegment>& segments) {
  std::string out;
  for (const TranscriptSegment& s : segments) {
    const std::string text = OneLine(s.text);
    if (!text.empty()) out += text + "\n";
  }
  return out;
}

std::string FormatJson(const FileTranscript& t, const std::string& display_path, double offset_s) {
  using nlohmann::json;
  auto time = [&](double media_s) { return Rounded(std::max(0.0, media_s - offset_s)); };
  json segments = json::array();
  for (const TranscriptSegment& s : t.segments) {
    json words = json::array();
    for (const TranscriptWord& w : s.words) {
      json word = {{"start", time(w.start_s)}, {"end", time(w.end_s)}, {"text", w.text}};
      if (w.confidence) word["confidence"] = std::round(*w.confidence * 1000) / 1000;
      words.push_back(std::move(word));
    }
    json segment = {{"start", time(s.start_s)}, {"end", time(s.end_s)}, {"text", s.text}};
    if (s.confidence) segment["confidence"] = std::round(*s.confidence * 1000) / 1000;
    if (!s.language.empty()) segment["language"] = s.language;
    segment["words"] = std::move(words);
    segments.push_back(std::move(segment));
  }
  json failures = json::array();
  for (const ChunkFailure& f : t.failures) {
    failures.push_back({{"chunk", f.chunk},
                        {"start", time(f.start_s)},
                        {"end", time(f.end_s)},
                        {"error", f.status.message()}});
  }
  const pipeline::AudioTrack& track = t.audio.track;
  json out = {{"path", display_path},
              {"backend", t.backend},
              {"model", t.model},
              {"media_start_s", offset_s},
              {"audio_stream", track.has_audio ? json(track.stream.index) : json(nullptr)},
              {"audio_s", Rounded(t.audio.audio_s)},
              {"speech_s", Rounded(t.audio.speech_s)},
              {"chunks", t.chunks},
              {"complete", t.complete()},
              {"segments", std::move(segments)},
              {"failures", std::move(failures)},
              {"notes", t.notes}};
  if (track.has_audio && !track.stream.language.empty()) {
    out["audio_stream_language"] = track.stream.language;
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace reel::llm
