// The embedded backend on speech whose words and times are known: sentences read by flite's
// recorded voices, placed in a generated video over light noise, and real recordings from a
// Debian package (Asterisk's English prompts). Word error rate and the time of each sentence's
// first word. Skips when flite or the PocketSphinx model is not installed (scripts/setup
// installs both).
#include <gtest/gtest.h>

#include <cstdio>

#include "llm/speech/transcribe_file.h"
#include "llm/speech/transcriber.h"
#include "tests/support/speech_media.h"

namespace reel::llm {
namespace {

using reel::testing::AsteriskPrompts;
using reel::testing::HaveFlite;
using reel::testing::MakeSpeechVideo;
using reel::testing::ScoreTranscript;
using reel::testing::SpeechPiece;
using reel::testing::SpeechVideo;
using reel::testing::TimedWord;
using reel::testing::TranscriptScore;

// One transcriber for the process: loading the model takes seconds.
Transcriber* PocketSphinx() {
  static std::unique_ptr<Transcriber> transcriber = [] {
    TranscriberOptions options;
    options.backend = "pocketsphinx";
    Result<std::unique_ptr<Transcriber>> t = CreateTranscriber(options);
    return t.ok() ? std::move(t).value() : nullptr;
  }();
  return transcriber.get();
}

std::vector<TimedWord> Words(const FileTranscript& t) {
  std::vector<TimedWord> words;
  for (const TranscriptSegment& s : t.segments) {
    for (const TranscriptWord& w : s.words) words.push_back({w.start_s, w.end_s, w.text});
  }
  return words;
}

void ExpectTimesAndWords(const TranscriptScore& score, double max_wer) {
  for (const auto& p : score.pieces) {
    EXPECT_GE(p.first_word_s, 0) << "nothing recognised for \"" << p.reference << "\"";
    if (p.first_word_s >= 0) {
      EXPECT_NEAR(p.first_word_s, p.onset_s, 0.5) << "\"" << p.reference << "\"";
    }
  }
  EXPECT_LE(score.total.rate(), max_wer) << score.Table();
}

// PocketSphinx's own word error rate on the sentences: each as flite wrote it, alone, as one
// chunk (no video, no AAC, no resampling, no chunking). What the pipeline adds is measured
// against it.
reel::testing::WordErrors DirectErrors() {
  const char* voices[] = {"slt", "awb", "rms"};
  reel::testing::WordErrors total;
  std::string table;
  for (size_t i = 0; i < reel::testing::HarvardSentences().size(); ++i) {
    const std::string& text = reel::testing::HarvardSentences()[i];
    pipeline::SpeechChunk chunk;
    chunk.samples = reel::testing::FliteSpeech(text, voices[i % 3]);
    Result<ChunkTranscript> t = PocketSphinx()->Transcribe(chunk, nullptr);
    EXPECT_TRUE(t.ok()) << t.status().message();
    std::string hypothesis;
    if (t.ok()) {
      for (const TranscriptSegment& s : t->segments) hypothesis += s.text + " ";
    }
    const reel::testing::WordErrors e = reel::testing::CountWordErrors(text, hypothesis);
    total.errors += e.errors;
    total.words += e.words;
    table += "  \"" + text + "\" -> \"" + hypothesis + "\"\n";
  }
  std::printf("flite sentences alone:\n%sword error rate %.1f%% (%d/%d)\n", table.c_str(),
              100 * total.rate(), total.errors, total.words);
  return total;
}

TEST(PocketSphinxTest, SentencesReadByRecordedVoicesInAVideo) {
  if (!HaveFlite()) GTEST_SKIP() << "flite is not installed";
  if (PocketSphinx() == nullptr) GTEST_SKIP() << "the PocketSphinx model is not installed";
  const double direct = DirectErrors().rate();
  // Measured (docs/speech.md): alone 28.7%; in the video 28.7% clean, 37.5% over the noise.
  EXPECT_LE(direct, 0.35);
  for (double noise : {0.0, -50.0}) {
    const SpeechVideo video = reel::testing::HarvardVideo(noise);
    ASSERT_FALSE(video.path.empty());
    Result<FileTranscript> t = TranscribeFile(video.path, *PocketSphinx(), {});
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_TRUE(t->complete());
    EXPECT_EQ(t->backend, "pocketsphinx");
    EXPECT_EQ(t->model, "en-us");
    const TranscriptScore score = ScoreTranscript(video.placed, Words(*t));
    std::printf("flite in a video, %s:\n%s", noise < 0 ? "pink noise at -50 dBFS" : "no noise",
                score.Table().c_str());
    // The pipeline (AAC, resampling, chunks) adds at most a few errors to PocketSphinx's own.
    ExpectTimesAndWords(score, direct + (noise < 0 ? 0.15 : 0.06));
    EXPECT_EQ(score.stray_words, 0);
    for (const TranscriptSegment& s : t->segments) {
      EXPECT_EQ(s.language, "en");
      ASSERT_TRUE(s.confidence.has_value());
      EXPECT_GT(*s.confidence, 0);
      EXPECT_LE(*s.confidence, 1);
      EXPECT_FALSE(s.words.empty());
      EXPECT_GE(s.start_s, 0);
      EXPECT_LE(s.end_s, video.duration_s);
    }
  }
}

// Allison Smith's recorded prompts: clean studio speech, 16 kHz G.722.
const std::vector<std::string> kPrompts = {
    "agent-alreadyon",
    "agent-newlocation",
    "all-circuits-busy-now",
    "cannot-complete-as-dialed",
    "check-number-dial-again",
    "conf-extended",
    "conf-invalid",
    "conf-leaderhasleft",
    "conf-noempty",
    "conf-now-recording",
    "conf-onlyperson",
    "conf-placeintoconf",
    "confbridge-lock-no-join",
    "confbridge-pin-bad",
    "demo-echodone",
    "dir-nomatch",
    "feature-not-avail-line",
    "number-not-answering",
    "pls-hold-while-try",
    "privacy-prompt",
};

TEST(PocketSphinxTest, RealRecordingsFromADebianPackage) {
  if (PocketSphinx() == nullptr) GTEST_SKIP() << "the PocketSphinx model is not installed";
  std::vector<reel::testing::RealPrompt> prompts = AsteriskPrompts(kPrompts);
  if (prompts.empty()) GTEST_SKIP() << "asterisk-core-sounds-en(-g722) cannot be had";
  ASSERT_EQ(prompts.size(), kPrompts.size());
  std::vector<SpeechPiece> pieces;
  for (auto& p : prompts) pieces.push_back({p.text, std::move(p.samples), 0});
  double end = 0;
  pieces = reel::testing::LayOut(std::move(pieces), {2.2, 1.0, 3.0}, &end);
  const SpeechVideo video = MakeSpeechVideo("asterisk_prompts.mp4", pieces, end, 0);
  ASSERT_FALSE(video.path.empty());
  Result<FileTranscript> t = TranscribeFile(video.path, *PocketSphinx(), {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const TranscriptScore score = ScoreTranscript(video.placed, Words(*t));
  std::printf("Asterisk prompts (real recordings):\n%s", score.Table().c_str());
  // Measured (docs/speech.md): about 20%: PocketSphinx is weak on real speech.
  ExpectTimesAndWords(score, 0.35);
}

// Every prompt of the package with a plain transcript (about 150), for the figure in
// docs/speech.md. Slow: run with ctest -L slow.
TEST(PocketSphinxSlowTest, EveryPlainAsteriskPrompt) {
  if (PocketSphinx() == nullptr) GTEST_SKIP() << "the PocketSphinx model is not installed";
  const std::vector<std::string> names = reel::testing::PlainAsteriskPromptNames();
  if (names.empty()) GTEST_SKIP() << "asterisk-core-sounds-en cannot be had";
  std::vector<reel::testing::RealPrompt> prompts = AsteriskPrompts(names);
  if (prompts.empty()) GTEST_SKIP() << "asterisk-core-sounds-en-g722 cannot be had";
  std::vector<SpeechPiece> pieces;
  for (auto& p : prompts) pieces.push_back({p.text, std::move(p.samples), 0});
  double end = 0;
  pieces = reel::testing::LayOut(std::move(pieces), {2.2, 1.0, 3.0}, &end);
  const SpeechVideo video = MakeSpeechVideo("asterisk_all.mkv", pieces, end, 0);
  ASSERT_FALSE(video.path.empty());
  Result<FileTranscript> t = TranscribeFile(video.path, *PocketSphinx(), {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const TranscriptScore score = ScoreTranscript(video.placed, Words(*t));
  std::printf("all %zu plain Asterisk prompts:\n%s", prompts.size(), score.Table().c_str());
  ExpectTimesAndWords(score, 0.35);
}

}  // namespace
}  // namespace reel::llm
