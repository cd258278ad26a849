// A media file's speech as chunks for a transcription backend (AudioReader feeding SpeechChunker),
// handed over in order, so memory stays at one chunk. A file without audio or speech is not an
// error: no chunk, and a note says so. Usage: pipeline/README.md, "Speech audio".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/audio/audio_reader.h"
#include "pipeline/audio/speech_chunker.h"

namespace reel::pipeline {

struct SpeechAudioOptions {
  AudioReadOptions read;  // stream, range, sample rate (the chunker uses the same rate)
  SpeechChunkerOptions chunks;
};

struct SpeechAudio {
  AudioTrack track;
  AudioReadStats stats;
  double audio_s = 0;   // audio read (the range's length when the stream covers it)
  double speech_s = 0;  // speech detected, in chunks
  int chunks = 0;
  std::vector<std::string> notes;  // for people: no audio, no speech, gaps, a damaged tail
};

// Reads `path` and calls `on_chunk` with each chunk in order. A non-OK status from `on_chunk`
// stops reading and is returned. The time `on_chunk` takes does not count toward the read's
// time limit. Errors: as AudioReader::Open and Read.
Result<SpeechAudio> ReadSpeechChunks(const std::string& path, const SpeechAudioOptions& options,
                                     const std::function<Status(SpeechChunk)>& on_chunk);

}  // namespace reel::pipeline
