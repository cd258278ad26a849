// Limits that keep bad input from hanging Reel or using unbounded memory. All are settings.
#pragma once

#include <cstdint>

namespace reel::pipeline {

struct MediaLimits {
  double time_limit_s = 600;       // wall-clock limit for one file (probe, index and decode)
  int64_t max_pixels = 1LL << 26;  // largest accepted frame area (about 8192 x 8192)
  int max_side = 16384;            // largest accepted frame side
  // Decoding fails the file once more than this fraction of the packets it sent to the decoder
  // were rejected as damaged (and at least `min_errors_for_rate` were).
  double max_error_rate = 0.5;
  int min_errors_for_rate = 8;
  // Decoding threads for one file; 0 = one per core. Chosen frames in independent runs (each
  // from its own keyframe) go to that many single-threaded decoders (at most 8), each decoding
  // whole runs; otherwise one decoder uses that many frame threads.
  int decoder_threads = 0;
};

}  // namespace reel::pipeline
