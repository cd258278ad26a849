// Speech with known words and known times, for the speech tests: sentences read by flite's
// recorded CMU Arctic voices (slt, awb, rms), or real recordings from a Debian package
// (Asterisk's English prompts, read by Allison Smith, with the package's transcripts), placed
// into a generated video at known times over optional background noise. And the word error rate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace reel::testing {

// 16 kHz mono samples of a media file as the ffmpeg command line decodes them
// (`ffmpeg -i FILE -ac 1 -ar 16000 -f s16le -`); empty on failure.
std::vector<int16_t> DecodeWithFfmpeg(const std::string& path, const std::string& extra_args = "");

// Whether the `flite` command is installed (scripts/setup installs it).
bool HaveFlite();

// Whether Debian's pocketsphinx-en-us model is installed.
bool HavePocketSphinxModel();

// `text` read by flite's `voice`, as 16 kHz mono samples (cached in the build tree); empty when
// flite fails.
std::vector<int16_t> FliteSpeech(const std::string& text, const std::string& voice);

// Seconds from the start of `samples` to the first 10 ms above -45 dBFS (where the speech
// begins), or -1 for silence.
double SpeechOnset(const std::vector<int16_t>& samples, int sample_rate = 16000);

struct SpeechPiece {
  std::string text;              // what is said
  std::vector<int16_t> samples;  // 16 kHz mono
  double onset_s = 0;  // where its speech begins in the video (its leading silence goes before)
};

struct PlacedSpeech {
  std::string text;
  double onset_s = 0;  // where the speech begins
  double end_s = 0;    // where the piece's samples end
};

struct SpeechVideo {
  std::string path;  // "" when it could not be made
  double duration_s = 0;
  std::vector<PlacedSpeech> placed;
};

// A video (`name`'s extension: .mp4 gets MPEG-4 video and AAC, .mkv the same in Matroska) of
// `duration_s` with the pieces mixed in at their onsets over pink noise at `noise_dbfs` RMS
// (0: none), the audio 48 kHz stereo (so reading it resamples and downmixes). Cached in the build
// tree by a hash of the recipe. Fails the calling test when ffmpeg fails.
SpeechVideo MakeSpeechVideo(const std::string& name, const std::vector<SpeechPiece>& pieces,
                            double duration_s, double noise_dbfs);

// Words for comparing transcripts: lower case, punctuation dropped (apostrophes inside words
// kept), hyphens as spaces.
std::vector<std::string> NormalizedWords(const std::string& text);

struct WordErrors {
  int errors = 0;  // substitutions + deletions + insertions
  int words = 0;   // reference words
  double rate() const { return words > 0 ? static_cast<double>(errors) / words : 0; }
};

// The edit distance between the normalized words of `reference` and `hypothesis`.
WordErrors CountWordErrors(const std::string& reference, const std::string& hypothesis);

// How a transcript matches speech placed at known times: each piece's hypothesis is the words
// whose middle falls in [onset - 0.3 s, end + 0.3 s]; its first word's start is compared with the
// piece's onset.
struct TimedWord {
  double start_s = 0;
  double end_s = 0;
  std::string text;
};
struct PieceScore {
  std::string reference;
  std::string hypothesis;
  WordErrors errors;
  double onset_s = 0;
  double first_word_s = -1;  // -1: no word recognised there
};
struct TranscriptScore {
  std::vector<PieceScore> pieces;
  WordErrors total;
  int stray_words = 0;        // words outside every piece (in silence or noise)
  std::string Table() const;  // for the test's output: one line per piece
};
TranscriptScore ScoreTranscript(const std::vector<PlacedSpeech>& placed,
                                const std::vector<TimedWord>& words);

// Real recordings: Asterisk's English prompts (Debian: asterisk-core-sounds-en-g722, 16 kHz
// G.722) named in `names`, with their text from the package's transcripts
// (asterisk-core-sounds-en). Fetched once into the build tree; empty when a package cannot be
// had (offline).
struct RealPrompt {
  std::string name;
  std::string text;
  std::vector<int16_t> samples;  // 16 kHz mono
};
std::vector<RealPrompt> AsteriskPrompts(const std::vector<std::string>& names);
// The names of every prompt whose transcript is plain words (4 to 20, no digits, no [sound]
// descriptions, no key names like # or *, no "..." fragments); empty when the package cannot be
// had.
std::vector<std::string> PlainAsteriskPromptNames();

// 0.8 s tone bursts at known times for the fake transcription server (which "transcribes" a
// burst as "tone <Hz>"): 300, 340, 380... Hz at 1.0, 2.8, 7.5, 9.0 and 14.0 s, then every 2 s
// from 19 to 57 s (a run longer than one 30 s window), then at 64, 70 and 71.5 s; 75 s long,
// as Matroska. Each placed piece's text is "tone <Hz>".
SpeechVideo ToneBurstVideo();

// The sound of `video` alone as an audio file `name` (its extension picks the container), encoded
// with the ffmpeg arguments `codec_args` (e.g. "-c:a libmp3lame -q:a 4"); the same speech at the
// same times. Cached in the build tree. Empty path when ffmpeg fails (the test has failed).
SpeechVideo AudioOnly(const SpeechVideo& video, const std::string& name,
                      const std::string& codec_args);

// The Harvard sentences the flite tests read (IEEE 1969, list 1).
const std::vector<std::string>& HarvardSentences();

// Pieces one after the other, the first speech at 1.5 s, with `pauses` in turn between one's
// end and the next's speech; `end_s` gets the last piece's end plus a second.
std::vector<SpeechPiece> LayOut(std::vector<SpeechPiece> pieces, const std::vector<double>& pauses,
                                double* end_s);

// The Harvard sentences read in turn by flite's slt, awb and rms voices, laid out with pauses of
// 2.5, 0.8, 3.5 and 1.2 s (some share a chunk, some start one), over pink noise at `noise_dbfs`
// (0: none), as an MP4 video: the first `sentences` of them (a shorter video for tests of the
// plumbing rather than of recognition). Empty path when flite is missing.
SpeechVideo HarvardVideo(double noise_dbfs, size_t sentences = 10);

}  // namespace reel::testing
