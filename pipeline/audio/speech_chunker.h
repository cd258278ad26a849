// Speech chunks out of a stream of mono samples: voice activity from the signal's energy against
// a running noise floor, with hysteresis, then chunks cut at silences, never overlapping, each
// keeping its start on the media timeline. Memory: the open chunk plus 1.5 s. Not thread-safe.
// The detector and the cuts: pipeline/README.md, "Speech chunker".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace reel::pipeline {

struct SpeechChunkerOptions {
  int sample_rate = 16000;
  double max_chunk_s = 30;  // the backend's window
  double max_pause_s = 2;   // a longer pause ends the chunk
  double padding_s = 0.25;  // kept before and after speech
  double hangover_s = 0.3;  // quiet that ends speech
  double min_speech_s = 0.1;
  double on_db = 9;             // above the noise floor: speech starts
  double off_db = 6;            // at most this above the floor: quiet
  double min_level_dbfs = -55;  // never speech below this (of the filtered signal)
};

struct SpeechChunk {
  int index = 0;       // 0-based, in order
  double start_s = 0;  // media time of the first sample
  int sample_rate = 16000;
  std::vector<int16_t> samples;
  double speech_s = 0;         // detected speech inside the chunk
  bool cut_in_speech = false;  // ended inside speech (no pause within max_chunk_s)

  double duration_s() const { return static_cast<double>(samples.size()) / sample_rate; }
  double end_s() const { return start_s + duration_s(); }
};

class SpeechChunker {
 public:
  // `origin_s`: the media time of the first sample pushed.
  SpeechChunker(const SpeechChunkerOptions& options, double origin_s);

  // Feeds the next samples; chunks completed by them are appended to `out`.
  void Push(const int16_t* samples, size_t count, std::vector<SpeechChunk>* out);
  // Ends the stream: the last chunk, if any, is appended.
  void Finish(std::vector<SpeechChunk>* out);

  double audio_s() const;   // samples pushed, in seconds
  double speech_s() const;  // speech kept in chunks so far

 private:
  struct Region {
    int64_t start;  // frames
    int64_t end;    // exclusive
  };
  void Analyse(std::vector<SpeechChunk>* out);
  void Decide(int64_t f, std::vector<SpeechChunk>* out);
  void RegionStarted(int64_t start, std::vector<SpeechChunk>* out);
  void RegionEnded(int64_t end, std::vector<SpeechChunk>* out);
  void CheckLimits(int64_t f, std::vector<SpeechChunk>* out);
  int64_t QuietestFrame(int64_t from, int64_t to) const;
  void Close(int64_t end, bool cut_in_speech, std::vector<SpeechChunk>* out);
  void Trim(int64_t keep_from_frame);
  double LevelOf(int64_t f) const;
  double QuietLevel(int64_t f) const;
  static int FloorBin(double db);
  double FloorDb() const;

  SpeechChunkerOptions options_;
  double origin_s_;
  int frame_ = 160;  // samples per 10 ms frame
  int64_t lookahead_ = 150;
  int64_t lookback_ = 300;
  int64_t hangover_ = 30;
  int64_t max_frames_ = 3000;
  int64_t pause_frames_ = 200;
  int64_t pad_frames_ = 25;
  int64_t min_speech_frames_ = 10;

  std::vector<int16_t> buffer_;  // samples from buffer_start_
  int64_t buffer_start_ = 0;
  int64_t total_samples_ = 0;
  std::vector<double> levels_;  // dB per frame, from levels_start_
  int64_t levels_start_ = 0;
  int64_t analysed_ = 0;  // frames whose level is known
  int64_t decided_ = 0;   // frames decided
  // The floor's window: (frame, FloorBin(QuietLevel)) in order, and their counts by bin.
  std::deque<std::pair<int64_t, int>> window_;
  std::array<int64_t, 361> histogram_{};  // 0.25 dB bins over [-90, 0] dB
  int64_t window_end_ = 0;                // the next frame to enter the window
  // The level's high-pass filter (speech_chunker.cc): two biquads in a row.
  struct Biquad {
    double b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
    double x1 = 0, x2 = 0, y1 = 0, y2 = 0;
    double Filter(double x);
  };
  Biquad high_pass_[2];
  bool finishing_ = false;

  // Hysteresis.
  bool in_region_ = false;
  int64_t region_start_ = 0;
  bool region_carried_ = false;  // began in the previous chunk (cut inside speech)
  int loud_run_ = 0;
  int64_t quiet_run_ = 0;

  // The open chunk.
  bool open_ = false;
  int64_t chunk_start_ = 0;  // frames
  std::vector<Region> regions_;
  int64_t last_chunk_end_ = 0;
  int next_index_ = 0;
  double speech_s_ = 0;
};

}  // namespace reel::pipeline
