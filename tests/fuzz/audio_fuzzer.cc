// Audio in: a damaged audio stream (any container FFmpeg opens) read as speech chunks, as the
// speech stage reads it (AudioReader: decode, downmix, resample to 16 kHz; SpeechChunker: voice
// activity and cuts), with limits tight enough that no input can hang or exhaust memory; and
// the same bytes as a WAV file and as a transcription server's answer.
// Invariants: no crash or sanitizer report; chunks come in order, do not overlap, fit the
// window, hold samples, and have finite times from the stream's origin on; counts and times in
// the report are finite and not negative; notes and parsed text are valid UTF-8.
#include <cmath>
#include <string>

#include "base/utf8.h"
#include "llm/speech/transcription_response.h"
#include "pipeline/audio/speech_audio.h"
#include "pipeline/audio/wav.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string path = reel::fuzz::WriteScratchFile("audio", bytes);

  reel::pipeline::SpeechAudioOptions options;
  options.read.limits.time_limit_s = 5;
  options.read.limits.decoder_threads = 1;
  options.chunks.max_chunk_s = 8;  // small windows: more cuts on short inputs
  // Half the inputs read a range, so the seek and trim paths run too.
  if (size > 0 && (data[size - 1] & 1)) {
    options.read.start_s = (data[size - 1] >> 1) / 16.0;
    options.read.end_s = options.read.start_s + 3;
  }
  double previous_end = -1e300;
  int chunks = 0;
  auto result = reel::pipeline::ReadSpeechChunks(
      path, options, [&](reel::pipeline::SpeechChunk chunk) -> reel::Status {
        Require(chunk.index == chunks, "chunks in order");
        Require(!chunk.samples.empty(), "a chunk holds samples");
        Require(std::isfinite(chunk.start_s), "finite chunk start");
        Require(chunk.start_s >= previous_end - 1e-9, "chunks do not overlap");
        Require(chunk.duration_s() <= options.chunks.max_chunk_s + 1e-9, "chunk within window",
                std::to_string(chunk.duration_s()));
        Require(chunk.speech_s >= 0 && chunk.speech_s <= chunk.duration_s() + 0.02,
                "speech within the chunk");
        previous_end = chunk.end_s();
        ++chunks;
        return reel::Status::Ok();
      });
  if (result.ok()) {
    Require(result->chunks == chunks, "chunk count");
    Require(std::isfinite(result->audio_s) && result->audio_s >= 0, "audio length");
    Require(std::isfinite(result->speech_s) && result->speech_s <= result->audio_s + 0.02,
            "speech within the audio");
    Require(result->stats.decode_errors >= 0 && result->stats.silence_filled_s >= 0 &&
                result->stats.overlap_dropped_s >= 0,
            "stats");
    for (const std::string& note : result->notes) Require(reel::IsValidUtf8(note), "note text");
    if (options.read.end_s) {
      Require(result->audio_s <= *options.read.end_s - options.read.start_s + 1e-6,
              "no audio past the range");
    }
    if (chunks > 0) {
      Require(result->track.has_audio, "chunks only from audio");
      Require(std::isfinite(result->track.origin_s), "finite origin");
    }
  }

  auto wav = reel::pipeline::ParseWav(bytes, "fuzz.wav");
  if (wav.ok()) {
    Require(wav->channels > 0 && wav->sample_rate > 0, "wav shape");
    Require(wav->samples.size() % static_cast<size_t>(wav->channels) == 0, "whole frames");
  }

  auto answer = reel::llm::ParseTranscriptionResponse(bytes, 30);
  if (answer.ok()) {
    double previous = -1;
    for (const auto& s : answer->segments) {
      Require(reel::IsValidUtf8(s.text), "segment text");
      Require(s.start_s >= 0 && s.end_s >= s.start_s && s.end_s <= 30, "segment times in chunk");
      Require(s.start_s >= previous, "segments sorted");
      previous = s.start_s;
      for (const auto& w : s.words) {
        Require(reel::IsValidUtf8(w.text), "word text");
        Require(w.start_s >= 0 && w.end_s >= w.start_s && w.end_s <= 30, "word times in chunk");
      }
    }
  }
  return 0;
}
