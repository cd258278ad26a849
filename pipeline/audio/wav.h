// WAV (RIFF, 16-bit PCM) files in memory: what a transcription server is sent, and what tests
// read back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel::pipeline {

// A canonical 44-byte-header WAV file of `count` mono 16-bit samples at `sample_rate`.
std::string EncodeWav(const int16_t* samples, size_t count, int sample_rate);

struct WavAudio {
  int sample_rate = 0;
  int channels = 0;
  std::vector<int16_t> samples;  // interleaved
};

// Reads a 16-bit PCM WAV file (chunks in any order, unknown chunks skipped). kCorruptData names
// `name` and says what is wrong (not RIFF/WAVE, no fmt or data chunk, not 16-bit PCM, a chunk
// past the end).
Result<WavAudio> ParseWav(std::string_view bytes, const std::string& name);

}  // namespace reel::pipeline
