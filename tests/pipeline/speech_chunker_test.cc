// Voice activity and chunking on synthetic signals whose speech times are known: "syllables"
// (voiced tones with harmonics under a smooth envelope) grouped into sentences, pauses, noise.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "pipeline/audio/speech_chunker.h"

namespace reel::pipeline {
namespace {

constexpr int kRate = 16000;

struct Span {
  double start_s;
  double end_s;
};

class Signal {
 public:
  explicit Signal(double seconds) : samples_(static_cast<size_t>(seconds * kRate), 0.0) {}

  // A sentence of syllables from `at` for `seconds`: 160 ms syllables, 40 ms dips between them
  // (about 25 dB down, as between the sounds of a word); `level_dbfs` is the syllables' peak.
  Span Sentence(double at, double seconds, double level_dbfs = -12, uint32_t seed = 1) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> pitch(110, 260);
    const double amplitude = 32767 * std::pow(10, level_dbfs / 20);
    double t = at;
    while (t + 0.16 <= at + seconds + 1e-9) {
      const double f0 = pitch(rng);
      for (int i = 0; i < static_cast<int>(0.16 * kRate); ++i) {
        const double x = static_cast<double>(i) / kRate;
        const double envelope = std::sin(M_PI * x / 0.16);
        double v = 0;  // harmonics up to about 3 kHz, falling 6 dB an octave, as voiced speech
        for (int h = 1; h * f0 < 3200; ++h) v += std::sin(2 * M_PI * f0 * h * x) / h;
        Add(t + x, amplitude * envelope * v / 2.5);
      }
      for (int i = 0; i < static_cast<int>(0.04 * kRate); ++i) {  // the dip: a quiet hum
        const double x = static_cast<double>(i) / kRate;
        Add(t + 0.16 + x, amplitude * 0.05 * std::sin(2 * M_PI * 150 * x));
      }
      t += 0.2;
    }
    return {at, t};
  }

  enum class Color { kWhite, kPink, kBrown };
  // Noise of `level_dbfs` RMS: white, pink (Paul Kellett's filter) or brown (leaky integral).
  void Noise(double level_dbfs, uint32_t seed = 7, Color color = Color::kWhite) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> n(0, 1);
    std::vector<double> noise(samples_.size());
    double b0 = 0, b1 = 0, b2 = 0, b3 = 0, b4 = 0, b5 = 0, b6 = 0, sum = 0;
    for (double& v : noise) {
      const double w = n(rng);
      if (color == Color::kWhite) {
        v = w;
      } else if (color == Color::kPink) {
        b0 = 0.99886 * b0 + w * 0.0555179;
        b1 = 0.99332 * b1 + w * 0.0750759;
        b2 = 0.96900 * b2 + w * 0.1538520;
        b3 = 0.86650 * b3 + w * 0.3104856;
        b4 = 0.55000 * b4 + w * 0.5329522;
        b5 = -0.7616 * b5 - w * 0.0168980;
        v = b0 + b1 + b2 + b3 + b4 + b5 + b6 + w * 0.5362;
        b6 = w * 0.115926;
      } else {
        b0 = 0.998 * b0 + w;
        v = b0;
      }
      sum += v * v;
    }
    const double scale = 32767 * std::pow(10, level_dbfs / 20) / std::sqrt(sum / noise.size());
    for (size_t i = 0; i < noise.size(); ++i) samples_[i] += noise[i] * scale;
  }

  // Silence (zeros) over [from, to), e.g. a quieter gap inside continuous speech.
  void Quiet(double from, double to, double factor) {
    for (size_t i = static_cast<size_t>(from * kRate);
         i < static_cast<size_t>(to * kRate) && i < samples_.size(); ++i) {
      samples_[i] *= factor;
    }
  }

  std::vector<int16_t> Pcm() const {
    std::vector<int16_t> out(samples_.size());
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<int16_t>(std::clamp(std::lround(samples_[i]), -32768L, 32767L));
    }
    return out;
  }

 private:
  void Add(double t, double v) {
    const auto i = static_cast<size_t>(std::llround(t * kRate));
    if (i < samples_.size()) samples_[i] += v;
  }
  std::vector<double> samples_;
};

std::vector<SpeechChunk> Chunk(const std::vector<int16_t>& pcm, SpeechChunkerOptions options = {},
                               double origin_s = 0, size_t piece = 4096) {
  SpeechChunker chunker(options, origin_s);
  std::vector<SpeechChunk> out;
  for (size_t at = 0; at < pcm.size(); at += piece) {
    chunker.Push(pcm.data() + at, std::min(piece, pcm.size() - at), &out);
  }
  chunker.Finish(&out);
  return out;
}

// Every chunk holds exactly the input's samples at its offset, chunks are in order, do not
// overlap and fit the window.
void ExpectWellFormed(const std::vector<SpeechChunk>& chunks, const std::vector<int16_t>& pcm,
                      double window_s = 30, double origin_s = 0) {
  double previous_end = -1;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const SpeechChunk& c = chunks[i];
    EXPECT_EQ(c.index, static_cast<int>(i));
    EXPECT_GE(c.start_s, previous_end - 1e-9) << "chunk " << i << " overlaps the one before";
    EXPECT_LE(c.duration_s(), window_s + 1e-9) << "chunk " << i;
    EXPECT_GT(c.samples.size(), 0u);
    const auto first = static_cast<size_t>(std::llround((c.start_s - origin_s) * kRate));
    ASSERT_LE(first + c.samples.size(), pcm.size());
    EXPECT_TRUE(std::equal(c.samples.begin(), c.samples.end(), pcm.begin() + first))
        << "chunk " << i << " does not hold the input's samples at its offset";
    previous_end = c.end_s();
  }
}

// The chunk that holds the whole span, or -1; and no other chunk touches it.
int ChunkHolding(const std::vector<SpeechChunk>& chunks, Span s, double origin_s = 0) {
  int holder = -1;
  for (const SpeechChunk& c : chunks) {
    const bool holds = c.start_s <= origin_s + s.start_s && c.end_s() >= origin_s + s.end_s;
    const bool touches = c.start_s < origin_s + s.end_s && c.end_s() > origin_s + s.start_s;
    if (holds) holder = c.index;
    if (touches && !holds) return -2;  // cut through the sentence
  }
  return holder;
}

TEST(SpeechChunkerTest, EverySentenceIsInExactlyOneChunkWithPadding) {
  Signal signal(40);
  std::vector<Span> spans = {signal.Sentence(1.0, 2.4, -12, 1), signal.Sentence(4.1, 1.6, -18, 2),
                             signal.Sentence(9.0, 3.0, -10, 3), signal.Sentence(16.5, 0.8, -20, 4),
                             signal.Sentence(30.0, 4.0, -14, 5)};
  const std::vector<int16_t> pcm = signal.Pcm();
  const std::vector<SpeechChunk> chunks = Chunk(pcm);
  ExpectWellFormed(chunks, pcm);
  for (const Span& s : spans) {
    const int holder = ChunkHolding(chunks, s);
    EXPECT_GE(holder, 0) << "sentence at " << s.start_s << " s";
    if (holder < 0) continue;
    const SpeechChunk& c = chunks[static_cast<size_t>(holder)];
    EXPECT_LE(c.start_s, s.start_s - 0.2) << "no padding before " << s.start_s;
    EXPECT_GE(c.end_s(), s.end_s + 0.1) << "no padding after " << s.end_s;
  }
  // Pauses of 0.7 s join sentences; pauses over 2 s end the chunk: {1, 4.1}, {9}, {16.5}, {30}.
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(ChunkHolding(chunks, spans[0]), ChunkHolding(chunks, spans[1]));
  // Speech counted: the sentences' length, within the hysteresis.
  double speech = 0;
  for (const SpeechChunk& c : chunks) speech += c.speech_s;
  EXPECT_NEAR(speech, 2.4 + 1.6 + 3.0 + 0.8 + 4.0, 1.0);
  // No chunk covers the long silences.
  for (const SpeechChunk& c : chunks) EXPECT_FALSE(c.start_s < 23 && c.end_s() > 20);
}

TEST(SpeechChunkerTest, LongSpeechIsCutInItsPausesWithinTheWindow) {
  Signal signal(75);
  std::vector<Span> spans;
  double t = 0.5;
  for (int i = 0; i < 20; ++i) {
    spans.push_back(signal.Sentence(t, 2.6, -14, static_cast<uint32_t>(10 + i)));
    t = spans.back().end_s + 0.7;  // a pause between sentences, shorter than max_pause_s
  }
  const std::vector<int16_t> pcm = signal.Pcm();
  for (double window : {30.0, 12.0}) {
    SpeechChunkerOptions options;
    options.max_chunk_s = window;
    const std::vector<SpeechChunk> chunks = Chunk(pcm, options);
    ExpectWellFormed(chunks, pcm, window);
    EXPECT_GE(chunks.size(), static_cast<size_t>(std::ceil(spans.back().end_s / window)));
    for (const Span& s : spans) EXPECT_GE(ChunkHolding(chunks, s), 0) << s.start_s;
    for (const SpeechChunk& c : chunks) EXPECT_FALSE(c.cut_in_speech);
  }
}

TEST(SpeechChunkerTest, SpeechWithoutPauseIsCutAtItsQuietestPoint) {
  Signal signal(50);
  signal.Sentence(1.0, 45.0, -12, 42);
  // One gap quieter than every dip between syllables: where a word ends.
  signal.Quiet(23.30, 23.45, 0.02);
  const std::vector<int16_t> pcm = signal.Pcm();
  const std::vector<SpeechChunk> chunks = Chunk(pcm);
  ExpectWellFormed(chunks, pcm);
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_TRUE(chunks[0].cut_in_speech);
  EXPECT_NEAR(chunks[0].end_s(), 23.375, 0.08) << "cut away from the quietest point";
  EXPECT_DOUBLE_EQ(chunks[1].start_s, chunks[0].end_s()) << "speech lost between chunks";
  // All 45 s of speech are in the chunks, none twice.
  double covered = 0;
  for (const SpeechChunk& c : chunks) covered += c.duration_s();
  EXPECT_GE(covered, 45.0);
  EXPECT_LE(chunks.back().end_s(), 46.4);
}

TEST(SpeechChunkerTest, SilenceSteadyNoiseAndClicksGiveNoChunk) {
  EXPECT_TRUE(Chunk(Signal(20).Pcm()).empty());
  for (auto color : {Signal::Color::kWhite, Signal::Color::kPink, Signal::Color::kBrown}) {
    for (double level : {-60.0, -45.0, -35.0, -25.0}) {
      Signal noise(20);
      noise.Noise(level, 7, color);
      EXPECT_TRUE(Chunk(noise.Pcm()).empty())
          << "noise (" << static_cast<int>(color) << ") at " << level << " dBFS";
    }
  }
  // Noise with a gap of digital silence (as a timestamp gap is filled) and a codec's quiet last
  // frames: neither is the noise floor, so the noise around them stays noise.
  Signal gappy(20);
  gappy.Noise(-40, 8, Signal::Color::kPink);
  gappy.Quiet(9.0, 9.6, 0);
  gappy.Quiet(19.975, 20.0, 0.003);
  EXPECT_TRUE(Chunk(gappy.Pcm()).empty()) << "noise taken for speech around a gap";

  std::vector<int16_t> clicks(20 * kRate, 0);
  for (int k = 1; k < 10; ++k) {
    for (int i = 0; i < 480; ++i) clicks[static_cast<size_t>(k * 2 * kRate + i)] = 20000;
  }
  EXPECT_TRUE(Chunk(clicks).empty());
}

TEST(SpeechChunkerTest, SpeechOverNoiseQuietSpeechAndSpeechAtTheEdges) {
  std::vector<int16_t> pcm;
  std::vector<SpeechChunk> chunks;
  for (auto color : {Signal::Color::kWhite, Signal::Color::kPink, Signal::Color::kBrown}) {
    Signal noisy(20);
    noisy.Noise(-46, 9, color);
    const Span a = noisy.Sentence(3, 2.0, -18, 3);
    const Span b = noisy.Sentence(12, 2.0, -24, 4);  // about 15 dB over the noise
    pcm = noisy.Pcm();
    chunks = Chunk(pcm);
    ExpectWellFormed(chunks, pcm);
    ASSERT_EQ(chunks.size(), 2u) << static_cast<int>(color);
    EXPECT_GE(ChunkHolding(chunks, a), 0) << static_cast<int>(color);
    EXPECT_GE(ChunkHolding(chunks, b), 0) << static_cast<int>(color);
    EXPECT_LT(chunks[0].duration_s(), 3.0) << "noise taken for speech";
  }

  Signal quiet(10);
  const Span q = quiet.Sentence(4, 1.5, -42, 5);
  pcm = quiet.Pcm();
  chunks = Chunk(pcm);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_GE(ChunkHolding(chunks, q), 0);

  Signal edges(8);
  const Span first = edges.Sentence(0, 1.4, -12, 6);
  const Span last = edges.Sentence(6.6, 1.4, -12, 7);
  pcm = edges.Pcm();
  chunks = Chunk(pcm, {}, 100.0);
  ExpectWellFormed(chunks, pcm, 30, 100.0);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_DOUBLE_EQ(chunks[0].start_s, 100.0);
  EXPECT_LE(chunks[0].start_s, 100 + first.start_s);
  EXPECT_NEAR(chunks[1].end_s(), 108.0, 1e-9) << "speech at the very end is kept";
  EXPECT_GE(ChunkHolding(chunks, last, 100.0), 0);
}

TEST(SpeechChunkerTest, TheSameChunksWhateverThePiecesFed) {
  Signal signal(60);
  signal.Noise(-50);
  double t = 0.3;
  for (int i = 0; i < 12; ++i) {
    t = signal.Sentence(t, 1.0 + (i % 4) * 1.1, -15, static_cast<uint32_t>(i)).end_s + 0.4 +
        (i % 3) * 1.3;
  }
  const std::vector<int16_t> pcm = signal.Pcm();
  const std::vector<SpeechChunk> whole = Chunk(pcm, {}, 0, pcm.size());
  ASSERT_GE(whole.size(), 3u);
  for (size_t piece : {size_t{1}, size_t{160}, size_t{7777}}) {
    const std::vector<SpeechChunk> pieces = Chunk(pcm, {}, 0, piece);
    ASSERT_EQ(pieces.size(), whole.size()) << piece;
    for (size_t i = 0; i < whole.size(); ++i) {
      EXPECT_DOUBLE_EQ(pieces[i].start_s, whole[i].start_s) << piece;
      EXPECT_EQ(pieces[i].samples, whole[i].samples) << piece;
    }
  }
}

}  // namespace
}  // namespace reel::pipeline
