#include "pipeline/audio/speech_chunker.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace reel::pipeline {
namespace {

constexpr double kLowestDb = -100;
constexpr double kLowestFloorDb = -90;
constexpr double kFloorQuantile = 0.2;
constexpr double kFloorBinDb = 0.25;
constexpr int64_t kSmoothFrames = 5;  // the quietest point is the quietest 50 ms
constexpr double kHighPassHz = 200;

int64_t Frames(double seconds) { return static_cast<int64_t>(std::llround(seconds * 100)); }

}  // namespace

SpeechChunker::SpeechChunker(const SpeechChunkerOptions& options, double origin_s)
    : options_(options), origin_s_(origin_s) {
  if (options_.sample_rate < 100) options_.sample_rate = 16000;
  frame_ = std::max(1, options_.sample_rate / 100);
  lookahead_ = Frames(1.5);
  lookback_ = Frames(3);
  hangover_ = std::max<int64_t>(1, Frames(options_.hangover_s));
  max_frames_ = std::max<int64_t>(Frames(1), Frames(options_.max_chunk_s));
  pause_frames_ = std::max<int64_t>(hangover_, Frames(options_.max_pause_s));
  pad_frames_ = std::max<int64_t>(0, Frames(options_.padding_s));
  min_speech_frames_ = std::max<int64_t>(1, Frames(options_.min_speech_s));
  // The high-pass biquads (RBJ's cookbook), Butterworth Q, at kHighPassHz.
  const double w0 =
      2 * M_PI * std::min(kHighPassHz, options_.sample_rate * 0.45) / options_.sample_rate;
  const double alpha = std::sin(w0) / (2 * M_SQRT1_2);
  const double c = std::cos(w0);
  const double a0 = 1 + alpha;
  for (Biquad& b : high_pass_) {
    b.b0 = (1 + c) / 2 / a0;
    b.b1 = -(1 + c) / a0;
    b.b2 = (1 + c) / 2 / a0;
    b.a1 = -2 * c / a0;
    b.a2 = (1 - alpha) / a0;
  }
}

double SpeechChunker::Biquad::Filter(double x) {
  const double y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
  x2 = x1;
  x1 = x;
  y2 = y1;
  y1 = y;
  return y;
}

double SpeechChunker::audio_s() const {
  return static_cast<double>(total_samples_) / options_.sample_rate;
}
double SpeechChunker::speech_s() const { return speech_s_; }

double SpeechChunker::LevelOf(int64_t f) const {
  return levels_[static_cast<size_t>(f - levels_start_)];
}

void SpeechChunker::Push(const int16_t* samples, size_t count, std::vector<SpeechChunk>* out) {
  buffer_.insert(buffer_.end(), samples, samples + count);
  total_samples_ += static_cast<int64_t>(count);
  Analyse(out);
}

void SpeechChunker::Finish(std::vector<SpeechChunk>* out) {
  finishing_ = true;
  Analyse(out);
  const int64_t total_frames = analysed_;
  if (in_region_) {
    in_region_ = false;
    RegionEnded(total_frames, out);
  }
  if (open_) {
    if (regions_.empty()) {
      open_ = false;
    } else {
      Close(std::min(regions_.back().end + pad_frames_, total_frames), false, out);
    }
  }
}

// Levels of the frames now complete (at the end, the last partial one too), then decisions for
// those whose look-ahead window is known.
void SpeechChunker::Analyse(std::vector<SpeechChunk>* out) {
  while (true) {
    const int64_t begin = analysed_ * frame_;
    int64_t end = begin + frame_;
    if (end > total_samples_) {
      if (!finishing_ || begin >= total_samples_) break;
      end = total_samples_;
    }
    double sum = 0;
    for (int64_t i = begin; i < end; ++i) {
      const double x = buffer_[static_cast<size_t>(i - buffer_start_)];
      // High-pass at 200 Hz, 4th order (two biquads): rumble, hum and the low end of pink or
      // brown noise, whose 10 ms energy swings by 15-40 dB, stay out of the level.
      const double y = high_pass_[1].Filter(high_pass_[0].Filter(x));
      sum += y * y;
    }
    const double mean = sum / static_cast<double>(end - begin) / (32768.0 * 32768.0);
    const double db = mean > 0 ? std::max(kLowestDb, 10 * std::log10(mean)) : kLowestDb;
    levels_.push_back(db);
    ++analysed_;
  }
  while (decided_ < analysed_ && (finishing_ || decided_ + lookahead_ < analysed_)) {
    // The floor's window of the frame to decide reaches to f + lookahead_, whatever was pushed;
    // a candidate needs its whole 50 ms.
    const int64_t right = std::min(decided_ + lookahead_, analysed_ - kSmoothFrames);
    for (; window_end_ <= right; ++window_end_) {
      const int bin = FloorBin(QuietLevel(window_end_));
      window_.push_back({window_end_, bin});
      ++histogram_[static_cast<size_t>(bin)];
    }
    Decide(decided_++, out);
  }
  // Drop what no chunk can need any more: before the open chunk, or a little before the
  // frames still undecided (a chunk starts at most padding + 2 frames before its speech).
  int64_t keep = decided_ - pad_frames_ - 4;
  if (open_) keep = std::min(keep, chunk_start_);
  Trim(std::max<int64_t>(0, keep));
}

// The level of the 50 ms from frame f on: a candidate for the noise floor, averaged so that one
// odd quiet frame (a codec's last frame) weighs little.
double SpeechChunker::QuietLevel(int64_t f) const {
  double power = 0;
  for (int64_t g = f; g < f + kSmoothFrames; ++g) power += std::pow(10.0, LevelOf(g) / 10);
  return 10 * std::log10(power / kSmoothFrames);
}

int SpeechChunker::FloorBin(double db) {
  const double clamped = std::clamp(db, kLowestFloorDb, 0.0);
  return static_cast<int>((clamped - kLowestFloorDb) / kFloorBinDb);
}

// The floor: the level below which kFloorQuantile of the window's candidates lie. A quantile,
// not the minimum, so that a short gap of digital silence or a dropout inside noise does not pull
// the floor below the noise, while long silences (speech in digital silence) still set it.
double SpeechChunker::FloorDb() const {
  const int64_t count = static_cast<int64_t>(window_.size());
  if (count == 0) return kLowestFloorDb;
  const int64_t wanted =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(kFloorQuantile * count)));
  int64_t seen = 0;
  for (size_t bin = 0; bin < histogram_.size(); ++bin) {
    seen += histogram_[bin];
    if (seen >= wanted) return kLowestFloorDb + (static_cast<double>(bin) + 0.5) * kFloorBinDb;
  }
  return 0;
}

void SpeechChunker::Trim(int64_t keep_from_frame) {
  const int64_t keep_sample = std::min(keep_from_frame * frame_, total_samples_);
  // In steps of five seconds, so erasing from the front stays cheap.
  if (keep_sample - buffer_start_ >= 5 * options_.sample_rate) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + (keep_sample - buffer_start_));
    buffer_start_ = keep_sample;
  }
  const int64_t keep_level = std::min(keep_from_frame, decided_);
  if (keep_level - levels_start_ >= 500) {
    levels_.erase(levels_.begin(), levels_.begin() + (keep_level - levels_start_));
    levels_start_ = keep_level;
  }
}

void SpeechChunker::Decide(int64_t f, std::vector<SpeechChunk>* out) {
  const double level = LevelOf(f);
  while (!window_.empty() && window_.front().first < f - lookback_) {
    --histogram_[static_cast<size_t>(window_.front().second)];
    window_.pop_front();
  }
  const double floor_db = FloorDb();
  const double on = std::max(floor_db + options_.on_db, options_.min_level_dbfs);
  const double off = std::max(floor_db + options_.off_db, options_.min_level_dbfs - 6);

  if (!in_region_) {
    loud_run_ = level > on ? loud_run_ + 1 : 0;
    if (loud_run_ >= 2) {
      in_region_ = true;
      region_carried_ = false;
      quiet_run_ = 0;
      RegionStarted(f - 1, out);
    }
  } else {
    quiet_run_ = level > off ? 0 : quiet_run_ + 1;
    if (quiet_run_ >= hangover_) {
      in_region_ = false;
      loud_run_ = 0;
      RegionEnded(f - hangover_ + 1, out);
    }
  }
  CheckLimits(f, out);
}

void SpeechChunker::RegionStarted(int64_t start, std::vector<SpeechChunk>* out) {
  region_start_ = start;
  if (open_ && !regions_.empty()) {
    const int64_t last_end = regions_.back().end;
    if (start - last_end > pause_frames_) {
      Close(std::min(last_end + pad_frames_, (last_end + start) / 2), false, out);
    }
  }
  if (!open_) {
    open_ = true;
    chunk_start_ = std::max(
        {start - pad_frames_, last_chunk_end_, (buffer_start_ + frame_ - 1) / frame_, int64_t{0}});
  }
}

void SpeechChunker::RegionEnded(int64_t end, std::vector<SpeechChunk>* out) {
  if (end - region_start_ < min_speech_frames_ && !region_carried_) {
    // A click, not speech. A chunk opened for it alone is dropped.
    if (open_ && regions_.empty()) open_ = false;
    return;
  }
  regions_.push_back({region_start_, end});
}

void SpeechChunker::CheckLimits(int64_t f, std::vector<SpeechChunk>* out) {
  while (open_) {
    if (!in_region_) {
      if (regions_.empty()) return;
      const int64_t last_end = regions_.back().end;
      if (f + 1 - last_end > pause_frames_) {
        Close(last_end + pad_frames_, false, out);
        return;
      }
      if (f + 1 - chunk_start_ >= max_frames_) {
        Close(std::min(last_end + pad_frames_, chunk_start_ + max_frames_), false, out);
      }
      return;
    }
    if (f + 1 - chunk_start_ < max_frames_) return;
    if (!regions_.empty()) {
      // Cut in the pause before the speech going on now.
      const int64_t last_end = regions_.back().end;
      const int64_t end = std::min(last_end + pad_frames_, (last_end + region_start_) / 2);
      Close(end, false, out);
      open_ = true;
      chunk_start_ = std::max(region_start_ - pad_frames_, end);
      continue;  // the rest may itself be too long
    }
    // One stretch of speech as long as the window: cut at its quietest point.
    const int64_t cut = QuietestFrame(chunk_start_ + max_frames_ / 2, f);
    const int64_t carried_from = std::max(region_start_, cut);
    regions_.push_back({region_start_, cut});
    Close(cut, true, out);
    open_ = true;
    chunk_start_ = cut;
    region_start_ = carried_from;
    region_carried_ = true;
    return;
  }
}

// The frame in [from, to] that starts the quietest kSmoothFrames (ties: the latest).
int64_t SpeechChunker::QuietestFrame(int64_t from, int64_t to) const {
  from = std::max(from, levels_start_);
  if (from >= to) return to;
  int64_t best = to;
  double best_power = std::numeric_limits<double>::infinity();
  for (int64_t f = from; f <= to; ++f) {
    double power = 0;
    int64_t n = 0;
    for (int64_t g = f - kSmoothFrames / 2; g <= f + kSmoothFrames / 2; ++g) {
      if (g < levels_start_ || g >= analysed_) continue;
      power += std::pow(10.0, LevelOf(g) / 10);
      ++n;
    }
    power /= static_cast<double>(std::max<int64_t>(n, 1));
    if (power <= best_power) {
      best_power = power;
      best = f;
    }
  }
  return best;
}

void SpeechChunker::Close(int64_t end, bool cut_in_speech, std::vector<SpeechChunk>* out) {
  open_ = false;
  const int64_t first = std::max(chunk_start_ * frame_, buffer_start_);
  const int64_t last = std::min(end * frame_, total_samples_);
  double speech = 0;
  for (const Region& r : regions_) {
    speech += static_cast<double>(std::min(r.end, end) - std::max(r.start, chunk_start_)) / 100;
  }
  regions_.clear();
  last_chunk_end_ = std::max(last_chunk_end_, end);
  if (last <= first) return;
  SpeechChunk chunk;
  chunk.index = next_index_++;
  chunk.sample_rate = options_.sample_rate;
  chunk.start_s = origin_s_ + static_cast<double>(first) / options_.sample_rate;
  chunk.samples.assign(buffer_.begin() + (first - buffer_start_),
                       buffer_.begin() + (last - buffer_start_));
  chunk.speech_s = std::max(0.0, speech);
  chunk.cut_in_speech = cut_in_speech;
  speech_s_ += chunk.speech_s;
  out->push_back(std::move(chunk));
}

}  // namespace reel::pipeline
