// Audio in and speech to text, measured in the same run on the same machine.
//
// 1. Decode + resample + voice activity / chunking (ReadSpeechChunks: AudioReader and
//    SpeechChunker, what the speech stage does before any backend) against the ffmpeg command line
//    producing the same 16 kHz mono samples (`ffmpeg -i FILE -vn -ac 1 -ar 16000 -f s16le`),
//    alternating the two; also Reel's decode + resample alone (no chunking). Median wall-clock
//    time, ratio ffmpeg / Reel (above 1: Reel is faster).
// 2. PocketSphinx's real-time factor (processing time / audio time, below 1: faster than real
//    time) on the first minutes of the same file, and the time to load its model; against
//    PocketSphinx's own command line (`pocketsphinx_continuous -infile`, Debian's `pocketsphinx`
//    package; $REEL_POCKETSPHINX_CLI or the PATH) on the same audio as a 16 kHz WAV, with the
//    same model, ratio CLI time / Reel time.
//
// The input: Harvard sentences read by flite's voices with pauses, over light pink noise, looped
// to --minutes (default 30) in an MP4 (AAC 48 kHz stereo, a tiny video stream), generated once
// into --media-dir (default /tmp/reel-speech-bench). Without flite, a synthetic voiced signal.
//
// Usage: speech_bench [--minutes N] [--runs N] [--asr-minutes N] [--media-dir DIR]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "llm/speech/transcribe_file.h"
#include "llm/speech/transcriber.h"
#include "pipeline/audio/audio_reader.h"
#include "pipeline/audio/speech_audio.h"
#include "pipeline/audio/wav.h"

namespace {

namespace fs = std::filesystem;
using reel::bench::Clock;
using reel::bench::Median;
using reel::bench::Seconds;
using reel::bench::ShellQuote;

const char* kSentences[] = {
    "The birch canoe slid on the smooth planks.",  "Glue the sheet to the dark blue background.",
    "It's easy to tell the depth of a well.",      "These days a chicken leg is a rare dish.",
    "Rice is often served in round bowls.",        "The juice of lemons makes fine punch.",
    "The box was thrown beside the parked truck.", "The hogs were fed chopped corn and garbage.",
};

bool Run(const std::string& command) { return std::system(command.c_str()) == 0; }

std::vector<int16_t> ReadRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<int16_t> out(bytes.size() / 2);
  std::memcpy(out.data(), bytes.data(), out.size() * 2);
  return out;
}

// About a minute of speech with pauses, 16 kHz mono, over pink-ish noise.
std::vector<int16_t> OneMinute(const fs::path& dir) {
  std::vector<int16_t> out;
  const bool flite = Run("command -v flite >/dev/null 2>&1");
  uint32_t state = 12345;
  double pink = 0;
  auto noise = [&] {
    state = state * 1664525u + 1013904223u;
    pink = 0.97 * pink + 0.03 * ((state >> 8) / 8388608.0 - 1);
    return static_cast<int16_t>(pink * 2500);
  };
  const char* voices[] = {"slt", "awb", "rms"};
  for (int i = 0; out.size() < 60 * 16000; ++i) {
    std::vector<int16_t> speech;
    if (flite) {
      const fs::path wav = dir / ("s" + std::to_string(i % 8) + ".wav");
      const fs::path raw = dir / ("s" + std::to_string(i % 8) + ".raw");
      if (!fs::exists(raw)) {
        Run("flite -voice " + std::string(voices[i % 3]) + " -t " + ShellQuote(kSentences[i % 8]) +
            " -o " + ShellQuote(wav.string()) + " && ffmpeg -v error -y -i " +
            ShellQuote(wav.string()) + " -ac 1 -ar 16000 -f s16le " + ShellQuote(raw.string()));
      }
      speech = ReadRaw(raw.string());
    }
    if (speech.empty()) {  // voiced syllables
      for (int k = 0; k < 12; ++k) {
        for (int j = 0; j < 3200; ++j) {
          const double t = j / 16000.0;
          speech.push_back(static_cast<int16_t>(8000 * std::sin(M_PI * j / 3200.0) *
                                                std::sin(2 * M_PI * (140 + 10 * k) * t)));
        }
      }
    }
    const int pause = 16000 * (1 + i % 3);
    for (int j = 0; j < pause; ++j) out.push_back(noise());
    for (int16_t s : speech) out.push_back(static_cast<int16_t>(s + noise()));
  }
  return out;
}

std::string MakeInput(const fs::path& dir, int minutes) {
  fs::create_directories(dir);
  const fs::path video = dir / ("speech_" + std::to_string(minutes) + "min.mp4");
  if (fs::exists(video)) return video.string();
  const std::vector<int16_t> minute = OneMinute(dir);
  const fs::path wav = dir / "minute.wav";
  std::ofstream(wav, std::ios::binary)
      << reel::pipeline::EncodeWav(minute.data(), minute.size(), 16000);
  const fs::path tmp = dir / "tmp.mp4";
  if (!Run("ffmpeg -v error -y -f lavfi -i color=c=gray:s=64x48:r=2 -stream_loop -1 -i " +
           ShellQuote(wav.string()) + " -t " + std::to_string(minutes * 60) +
           " -c:v mpeg4 -c:a aac -b:a 96k -ar 48000 -ac 2 " + ShellQuote(tmp.string()))) {
    std::fprintf(stderr, "speech_bench: ffmpeg could not make the input\n");
    std::exit(1);
  }
  fs::rename(tmp, video);
  return video.string();
}

}  // namespace

int main(int argc, char** argv) {
  int minutes = 30, runs = 3;
  double asr_minutes = 3;
  std::string media_dir = "/tmp/reel-speech-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--minutes") minutes = std::atoi(argv[i + 1]);
    if (flag == "--runs") runs = std::atoi(argv[i + 1]);
    if (flag == "--asr-minutes") asr_minutes = std::atof(argv[i + 1]);
    if (flag == "--media-dir") media_dir = argv[i + 1];
  }
  const std::string input = MakeInput(media_dir, minutes);
  std::printf("speech_bench: %s (%d min, AAC 48 kHz stereo), CPU: %s, %d runs each\n",
              input.c_str(), minutes, reel::bench::CpuModel().c_str(), runs);

  std::vector<double> reel_times, decode_times, ffmpeg_times;
  reel::pipeline::SpeechAudio last;
  int64_t decoded_samples = 0;
  for (int r = 0; r < runs; ++r) {
    Clock::time_point t0 = Clock::now();
    const int rc = std::system(
        ("ffmpeg -v error -i " + ShellQuote(input) + " -vn -ac 1 -ar 16000 -f s16le - > /dev/null")
            .c_str());
    ffmpeg_times.push_back(Seconds(t0));
    if (rc != 0) std::fprintf(stderr, "speech_bench: ffmpeg failed\n");

    t0 = Clock::now();
    auto audio = reel::pipeline::ReadSpeechChunks(
        input, {}, [](reel::pipeline::SpeechChunk) { return reel::Status::Ok(); });
    reel_times.push_back(Seconds(t0));
    if (!audio.ok()) {
      std::fprintf(stderr, "speech_bench: %s\n", audio.status().message().c_str());
      return 1;
    }
    last = *audio;

    t0 = Clock::now();
    auto reader = reel::pipeline::AudioReader::Open(input, {});
    std::vector<int16_t> samples;
    decoded_samples = 0;
    while (reader.ok()) {
      samples.clear();
      auto n = (*reader)->Read(&samples);
      if (!n.ok() || *n == 0) break;
      decoded_samples += static_cast<int64_t>(*n);
    }
    decode_times.push_back(Seconds(t0));
  }
  const double ffmpeg = Median(ffmpeg_times), reel = Median(reel_times),
               decode = Median(decode_times);
  std::printf(
      "\n| measure | Reel | ffmpeg -ac 1 -ar 16000 -f s16le | ratio |\n|---|---|---|---|\n");
  std::printf(
      "| decode + resample + VAD/chunks, %d min | %.2f s (%.0fx real time) | %.2f s | %.2f |\n",
      minutes, reel, minutes * 60 / reel, ffmpeg, ffmpeg / reel);
  std::printf("| decode + resample only | %.2f s | %.2f s | %.2f |\n", decode, ffmpeg,
              ffmpeg / decode);
  std::printf("\nchunks: %d, speech %.0f s of %.0f s audio (%lld samples decoded)\n", last.chunks,
              last.speech_s, last.audio_s, static_cast<long long>(decoded_samples));

  // PocketSphinx's real-time factor.
  reel::llm::TranscriberOptions options;
  options.backend = "pocketsphinx";
  Clock::time_point t0 = Clock::now();
  auto transcriber = reel::llm::CreateTranscriber(options);
  const double load = Seconds(t0);
  if (!transcriber.ok()) {
    std::printf("\nPocketSphinx: %s\n", transcriber.status().message().c_str());
    return 0;
  }
  reel::llm::TranscribeFileOptions file_options;
  file_options.audio.read.end_s = asr_minutes * 60;
  t0 = Clock::now();
  auto t = reel::llm::TranscribeFile(input, **transcriber, file_options);
  const double asr = Seconds(t0);
  if (!t.ok()) {
    std::printf("PocketSphinx: %s\n", t.status().message().c_str());
    return 1;
  }
  size_t words = 0;
  for (const auto& s : t->segments) words += s.words.size();
  std::printf(
      "\nPocketSphinx (model en-us, loaded in %.2f s): %.0f s of audio (%.0f s speech) "
      "in %.2f s: real-time factor %.3f (%.3f of speech time), %zu words\n",
      load, t->audio.audio_s, t->audio.speech_s, asr, asr / t->audio.audio_s,
      asr / std::max(1.0, t->audio.speech_s), words);

  // The baseline: PocketSphinx's own command line on the same audio.
  std::string cli;
  if (const char* env = std::getenv("REEL_POCKETSPHINX_CLI"); env != nullptr && *env != '\0') {
    cli = env;
  } else {
    cli = reel::bench::OutputOf("command -v pocketsphinx_continuous");
    while (!cli.empty() && (cli.back() == '\n' || cli.back() == ' ')) cli.pop_back();
  }
  if (cli.empty()) {
    std::printf(
        "PocketSphinx's command line: not found (apt-get install pocketsphinx, or set "
        "REEL_POCKETSPHINX_CLI): no baseline\n");
    return 0;
  }
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", asr_minutes * 60);
  const std::string wav = media_dir + "/asr-" + seconds + "s.wav";
  if (!fs::exists(wav) && !Run("ffmpeg -v error -y -i " + ShellQuote(input) + " -t " + seconds +
                               " -vn -ac 1 -ar 16000 -c:a pcm_s16le " + ShellQuote(wav))) {
    std::printf("ffmpeg could not write %s\n", wav.c_str());
    return 1;
  }
  const std::string model = "/usr/share/pocketsphinx/model/en-us";
  t0 = Clock::now();
  const std::string hyp = reel::bench::OutputOf(
      ShellQuote(cli) + " -infile " + ShellQuote(wav) + " -hmm " + ShellQuote(model + "/en-us") +
      " -lm " + ShellQuote(model + "/en-us.lm.bin") + " -dict " +
      ShellQuote(model + "/cmudict-en-us.dict") + " -logfn /dev/null");
  const double baseline = Seconds(t0);
  size_t cli_words = 0;
  bool in_word = false;
  for (char c : hyp) {
    const bool space = c == ' ' || c == '\n';
    if (!space && !in_word) ++cli_words;
    in_word = !space;
  }
  std::printf(
      "PocketSphinx's command line (%s, the same audio as WAV, model loading included): %.2f s, "
      "%zu words: ratio %.2f (above 1: Reel is faster)\n",
      cli.c_str(), baseline, cli_words, baseline / (asr + load));
  return 0;
}
