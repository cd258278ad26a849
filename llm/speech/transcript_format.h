// A transcript as a file: SubRip (.srt) and WebVTT (.vtt) as players read them, plain text, or
// JSON with every field (segments, words, confidence, language, backend, model, failures).
//
// Times are written on the player's clock: the media time minus `offset_s` (the container's
// start time, pipeline::AudioTrack::media_start_s; 0 for most files), never below 0, rounded to
// the millisecond, each cue at least 1 ms long. SRT: numbered cues, "HH:MM:SS,mmm --> ...",
// a blank line after each; VTT: "WEBVTT" then "HH:MM:SS.mmm --> ..." cues with &, < and >
// escaped. A cue's text is one line.
#pragma once

#include <string>
#include <vector>

#include "llm/speech/transcribe_file.h"
#include "llm/speech/transcript.h"

namespace reel::llm {

std::string FormatSrt(const std::vector<TranscriptSegment>& segments, double offset_s = 0);
std::string FormatVtt(const std::vector<TranscriptSegment>& segments, double offset_s = 0);
// One segment per line.
std::string FormatText(const std::vector<TranscriptSegment>& segments);
// One JSON object (one line, ending in '\n'): "path" is `display_path`; times as in SRT.
std::string FormatJson(const FileTranscript& transcript, const std::string& display_path,
                       double offset_s = 0);

// "01:02:03,456" (SRT, comma) or "01:02:03.456" (VTT, dot) for `seconds` (>= 0).
std::string CueTime(double seconds, char decimal_separator);

}  // namespace reel::llm
