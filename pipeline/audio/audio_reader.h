// The audio of a media file as 16 kHz (or any rate) mono 16-bit samples on the media's timeline.
//
//   REEL_ASSIGN_OR_RETURN(auto reader, AudioReader::Open(path, options));
//   std::vector<int16_t> samples;
//   while (true) {
//     REEL_ASSIGN_OR_RETURN(size_t n, reader->Read(&samples));   // appends; 0 at the end
//     if (n == 0) break;
//   }
//   // sample i is at reader->track().origin_s + i / options.sample_rate seconds
//
// FFmpeg decodes the chosen stream (audio_stream.h) and libswresample downmixes and resamples it
// (its defaults, as `ffmpeg -ac 1 -ar 16000` does). Samples are contiguous in time: where the
// stream's timestamps jump ahead by more than 0.1 s the gap is filled with silence, and where they
// go back by more than that the overlap is dropped, so a sample's index gives its media time.
// A file without an audio stream is not an error: track().has_audio is false and Read returns 0.
//
// Damaged input: packets the decoder rejects are counted and skipped; a read error ends the
// stream there (stats().read_error says why); more rejected packets than the limits allow
// (MediaLimits::max_error_rate) fail the file with kCorruptData naming it. The whole read is
// bounded by MediaLimits::time_limit_s (kLimitExceeded). Not thread-safe; one reader per thread.
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
