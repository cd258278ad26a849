// The embedded backend: CMU PocketSphinx (Debian 12: libpocketsphinx 5prealpha, the 0.8 API)
// with the US English model of pocketsphinx-en-us (acoustic model, 3-gram language model,
// CMU dictionary). Offline, English only. The one place PocketSphinx is included.
//
// One decoder per transcriber, used by one chunk at a time (a mutex): PocketSphinx's decoder is
// not thread-safe. Each chunk is one utterance (batch cepstral mean normalization over it);
// words come from the best path with their frames (10 ms) and posterior probabilities; they are
// grouped into segments at pauses of half a second, at most 8 s and 80 characters long.
#include <pocketsphinx.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

#include "llm/speech/backends.h"
#include "pipeline/audio/language_code.h"

#ifndef REEL_POCKETSPHINX_MODEL_DIR
#define REEL_POCKETSPHINX_MODEL_DIR "/usr/share/pocketsphinx/model"
#endif

namespace reel::llm::speech_internal {
namespace {

namespace fs = std::filesystem;

constexpr double kSegmentPauseS = 0.5;
constexpr double kSegmentMaxS = 8;
constexpr size_t kSegmentMaxChars = 80;

struct DecoderDeleter {
  void operator()(ps_decoder_t* p) const { ps_free(p); }
};
struct ConfigDeleter {
  void operator()(cmd_ln_t* p) const { cmd_ln_free_r(p); }
};
using UniqueDecoder = std::unique_ptr<ps_decoder_t, DecoderDeleter>;
using UniqueConfig = std::unique_ptr<cmd_ln_t, ConfigDeleter>;

std::string ModelDir(const TranscriberOptions& options) {
  if (!options.model.empty()) return options.model;
  if (const char* env = std::getenv("REEL_POCKETSPHINX_MODEL"); env != nullptr && *env != '\0') {
    return env;
  }
  return std::string(REEL_POCKETSPHINX_MODEL_DIR) + "/en-us";
}

// "<s>", "</s>", "<sil>", "[NOISE]", "+BREATH+": not words.
bool IsFiller(const std::string& word) {
  return word.empty() || word[0] == '<' || word[0] == '[' || word[0] == '+';
}

// "read(2)" (an alternative pronunciation) -> "read".
std::string BaseWord(std::string word) {
  const size_t paren = word.find('(');
  if (paren != std::string::npos && paren > 0 && word.back() == ')') word.resize(paren);
  return word;
}

class PocketSphinxTranscriber final : public Transcriber {
 public:
  PocketSphinxTranscriber(UniqueDecoder decoder, std::string dir)
      : decoder_(std::move(decoder)), dir_(std::move(dir)) {
    model_ = fs::path(dir_).filename().string();
    if (model_.empty()) model_ = "en-us";
    frame_rate_ = cmd_ln_int32_r(ps_get_config(decoder_.get()), "-frate");
    if (frame_rate_ <= 0) frame_rate_ = 100;
  }

  const std::string& backend() const override { return backend_; }
  const std::string& model() const override { return model_; }
  double window_s() const override { return 30; }
  std::string Describe() const override {
    return "PocketSphinx (offline, English only), model " + model_ + " at " + dir_;
  }

  Result<ChunkTranscript> Transcribe(const pipeline::SpeechChunk& chunk,
                                     const std::atomic<bool>* cancel) override {
    if (chunk.sample_rate != 16000) {
      return InvalidArgument("PocketSphinx's model takes 16000 Hz audio, not " +
                             std::to_string(chunk.sample_rate) + " Hz");
    }
    if (cancel != nullptr && cancel->load()) return Cancelled("cancelled");
    ChunkTranscript out;
    if (chunk.samples.empty()) return out;
    std::vector<TranscriptWord> words;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ps_decoder_t* ps = decoder_.get();
      if (ps_start_utt(ps) < 0) return Internal("PocketSphinx could not start an utterance");
      const int processed =
          ps_process_raw(ps, chunk.samples.data(), chunk.samples.size(), FALSE, TRUE);
      if (ps_end_utt(ps) < 0 || processed < 0) {
        return Internal("PocketSphinx failed on the chunk at " + std::to_string(chunk.start_s) +
                        " s");
      }
      int32 score = 0;
      if (ps_get_hyp(ps, &score) == nullptr) return out;  // nothing recognised
      logmath_t* lmath = ps_get_logmath(ps);
      for (ps_seg_t* seg = ps_seg_iter(ps); seg != nullptr; seg = ps_seg_next(seg)) {
        const char* text = ps_seg_word(seg);
        std::string word = text != nullptr ? text : "";
        if (IsFiller(word)) continue;
        int start_frame = 0, end_frame = 0;
        ps_seg_frames(seg, &start_frame, &end_frame);
        int32 acoustic = 0, language = 0, backoff = 0;
        const int32 posterior = ps_seg_prob(seg, &acoustic, &language, &backoff);
        TranscriptWord w;
        w.text = BaseWord(std::move(word));
        w.start_s = chunk.start_s + static_cast<double>(start_frame) / frame_rate_;
        w.end_s = chunk.start_s + static_cast<double>(end_frame + 1) / frame_rate_;
        w.start_s = std::min(w.start_s, chunk.end_s());
        w.end_s = std::clamp(w.end_s, w.start_s, chunk.end_s());
        w.confidence = std::clamp(logmath_exp(lmath, posterior), 0.0, 1.0);
        words.push_back(std::move(w));
      }
    }
    out.segments = Group(std::move(words));
    return out;
  }

 private:
  std::vector<TranscriptSegment> Group(std::vector<TranscriptWord> words) const {
    std::vector<TranscriptSegment> segments;
    for (TranscriptWord& w : words) {
      bool start_new = segments.empty();
      if (!start_new) {
        const TranscriptSegment& s = segments.back();
        start_new = w.start_s - s.end_s >= kSegmentPauseS || w.end_s - s.start_s > kSegmentMaxS ||
                    s.text.size() + 1 + w.text.size() > kSegmentMaxChars;
      }
      if (start_new) {
        TranscriptSegment s;
        s.start_s = w.start_s;
        s.language = "en";
        s.backend = backend_;
        s.model = model_;
        segments.push_back(std::move(s));
      }
      TranscriptSegment& s = segments.back();
      if (!s.text.empty()) s.text += ' ';
      s.text += w.text;
      s.end_s = w.end_s;
      s.words.push_back(std::move(w));
    }
    for (TranscriptSegment& s : segments) {
      double sum = 0;
      for (const TranscriptWord& w : s.words) sum += w.confidence.value_or(0);
      s.confidence = sum / static_cast<double>(s.words.size());
    }
    return segments;
  }

  UniqueDecoder decoder_;
  std::string dir_;
  std::string backend_ = "pocketsphinx";
  std::string model_;
  int frame_rate_ = 100;
  std::mutex mutex_;
};

}  // namespace

Result<std::unique_ptr<Transcriber>> CreatePocketSphinxTranscriber(
    const TranscriberOptions& options) {
  if (!options.language.empty() && pipeline::LanguageCode(options.language) != "en") {
    return InvalidArgument("PocketSphinx transcribes English only, not '" + options.language +
                           "': set a transcription server (an endpoint serving Whisper; "
                           "docs/speech.md) for other languages");
  }
  const std::string dir = ModelDir(options);
  const std::string hmm = (fs::path(dir) / "en-us").string();
  const std::string lm = (fs::path(dir) / "en-us.lm.bin").string();
  const std::string dict = (fs::path(dir) / "cmudict-en-us.dict").string();
  std::error_code ec;
  if (!fs::exists(fs::path(hmm) / "mdef", ec) || !fs::exists(lm, ec) || !fs::exists(dict, ec)) {
    return NotFound("PocketSphinx model not found in " + dir +
                    " (install Debian's pocketsphinx-en-us, or set REEL_POCKETSPHINX_MODEL to a "
                    "folder with en-us/, en-us.lm.bin and cmudict-en-us.dict)");
  }
  UniqueConfig config(cmd_ln_init(nullptr, ps_args(), TRUE, "-hmm", hmm.c_str(), "-lm", lm.c_str(),
                                  "-dict", dict.c_str(), "-logfn", "/dev/null",
                                  // Keep every frame: with its own silence removal, a word's
                                  // frames no longer count from the chunk's start.
                                  "-remove_silence", "no", nullptr));
  if (!config) return Internal("PocketSphinx rejected its configuration");
  UniqueDecoder decoder(ps_init(config.get()));
  if (!decoder) return Internal("PocketSphinx could not load its model from " + dir);
  return std::unique_ptr<Transcriber>(new PocketSphinxTranscriber(std::move(decoder), dir));
}

}  // namespace reel::llm::speech_internal
