// The audio of a media file as mono 16-bit samples on the media's timeline, contiguous in time.
// A file without audio is not an error (has_audio false). Damaged input: rejected packets counted
// and skipped, too many fail the file (kCorruptData); the read is time-bounded (kLimitExceeded).
// Not thread-safe; one reader per thread.
// Usage and the timeline: pipeline/README.md, "Audio reader".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/audio/audio_stream.h"
#include "pipeline/limits.h"

namespace reel::pipeline {

struct AudioReadOptions {
  std::string language;   // the preferred stream's language (any spelling LanguageCode knows)
  int stream_index = -1;  // a stream chosen by the caller (must be audio); -1: ChooseAudioStream
  // The part of the media timeline to read, [start_s, end_s) in seconds. start_s at or before
  // the stream's start reads from its beginning.
  double start_s = 0;
  std::optional<double> end_s;
  int sample_rate = 16000;
  MediaLimits limits;
};

// The stream being read.
struct AudioTrack {
  bool has_audio = false;
  AudioStreamChoice stream;
  std::string codec;  // FFmpeg's codec name, e.g. "aac"
  int source_sample_rate = 0;
  int source_channels = 0;
  double media_start_s = 0;  // the container's start time: players show times from here
  // Media time of the first sample, known after the first Read that returns samples: start_s
  // when a range was asked for, else the first decoded frame's time.
  double origin_s = 0;
};

struct AudioReadStats {
  int64_t packets = 0;           // packets of the stream sent to the decoder
  int64_t decode_errors = 0;     // packets or frames the decoder rejected (skipped)
  int64_t samples = 0;           // samples returned so far
  double silence_filled_s = 0;   // gaps in the stream's timestamps filled with silence
  double overlap_dropped_s = 0;  // audio dropped where timestamps went back
  std::string read_error;        // why reading stopped before the end of the file, if it did
};

class AudioReader {
 public:
  // Errors (each naming `path`): as opening a media file (kNotFound, kCorruptData, ...);
  // kInvalidArgument for a stream_index that is not an audio stream or a sample rate outside
  // [1000, 384000]; kUnsupported when no decoder exists for the stream's codec.
  static Result<std::unique_ptr<AudioReader>> Open(const std::string& path,
                                                   const AudioReadOptions& options);
  ~AudioReader();
  AudioReader(const AudioReader&) = delete;
  AudioReader& operator=(const AudioReader&) = delete;

  const AudioTrack& track() const;
  const AudioReadStats& stats() const;

  // Appends the next samples (at most about ten seconds' worth) to `out` and returns how many;
  // 0 at the end of the stream or of the range. Errors: kCorruptData (too many damaged
  // packets), kLimitExceeded (time limit), kInternal (out of memory).
  Result<size_t> Read(std::vector<int16_t>* out);

  // Time the caller spent with the samples (transcribing them) does not count toward
  // MediaLimits::time_limit_s, which bounds reading.
  void ExcludeTime(double seconds);

  struct Impl;

 private:
  explicit AudioReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace reel::pipeline
