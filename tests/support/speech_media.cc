#include "tests/support/speech_media.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace fs = std::filesystem;

namespace reel::testing {
namespace {

std::string Hash(const std::string& text) {
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016zx", std::hash<std::string>()(text));
  return hash;
}

fs::path MediaDir() {
  fs::path dir = fs::path(REEL_BINARY_DIR) / "test-media";
  std::error_code ec;
  fs::create_directories(dir, ec);
  return dir;
}

void Put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// A 16-bit mono WAV, written by hand (the product's encoder is what some tests check).
bool WriteWav(const fs::path& path, const std::vector<int16_t>& samples, int rate) {
  std::string out = "RIFF";
  Put32(out, static_cast<uint32_t>(36 + samples.size() * 2));
  out += "WAVEfmt ";
  Put32(out, 16);
  out += std::string("\x01\x00\x01\x00", 4);
  Put32(out, static_cast<uint32_t>(rate));
  Put32(out, static_cast<uint32_t>(rate * 2));
  out += std::string("\x02\x00\x10\x00", 4);
  out += "data";
  Put32(out, static_cast<uint32_t>(samples.size() * 2));
  out.append(reinterpret_cast<const char*>(samples.data()), samples.size() * 2);
  fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!f) return false;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  return !ec;
}

}  // namespace

std::vector<int16_t> DecodeWithFfmpeg(const std::string& path, const std::string& extra_args) {
  const fs::path raw = MediaDir() / (".decode." + std::to_string(::getpid()) + "." +
                                     Hash(path + extra_args) + ".raw");
  CommandResult r =
      RunCommand("ffmpeg -y -hide_banner -loglevel error -i " + ShellQuote(path) + " " +
                 extra_args + " -ac 1 -ar 16000 -f s16le " + ShellQuote(raw.string()));
  std::vector<int16_t> samples;
  if (r.exit_code == 0) {
    std::ifstream f(raw, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    samples.resize(bytes.size() / 2);
    if (!samples.empty()) std::memcpy(samples.data(), bytes.data(), samples.size() * 2);
  }
  std::error_code ec;
  fs::remove(raw, ec);
  return samples;
}

bool HaveFlite() { return RunCommand("command -v flite").exit_code == 0; }

bool HavePocketSphinxModel() {
  return std::filesystem::exists("/usr/share/pocketsphinx/model/en-us/en-us/mdef");
}

std::vector<int16_t> FliteSpeech(const std::string& text, const std::string& voice) {
  const fs::path wav = MediaDir() / ("flite-" + voice + "-" + Hash(text) + ".wav");
  if (!fs::exists(wav)) {
    const fs::path tmp = wav.string() + ".tmp." + std::to_string(::getpid()) + ".wav";
    CommandResult r = RunCommand("flite -voice " + ShellQuote(voice) + " -t " + ShellQuote(text) +
                                 " -o " + ShellQuote(tmp.string()));
    std::error_code ec;
    if (r.exit_code != 0) {
      fs::remove(tmp, ec);
      return {};
    }
    fs::rename(tmp, wav, ec);
  }
  return DecodeWithFfmpeg(wav.string());
}

double SpeechOnset(const std::vector<int16_t>& samples, int rate) {
  const size_t frame = static_cast<size_t>(rate / 100);
  const double threshold = 32768.0 * std::pow(10.0, -45.0 / 20);
  for (size_t at = 0; at + frame <= samples.size(); at += frame) {
    double sum = 0;
    for (size_t i = at; i < at + frame; ++i) sum += double(samples[i]) * samples[i];
    if (std::sqrt(sum / static_cast<double>(frame)) > threshold) {
      return static_cast<double>(at) / rate;
    }
  }
  return -1;
}

SpeechVideo MakeSpeechVideo(const std::string& name, const std::vector<SpeechPiece>& pieces,
                            double duration_s, double noise_dbfs) {
  SpeechVideo out;
  out.duration_s = duration_s;
  constexpr int kRate = 16000;
  std::string recipe = name + "|" + std::to_string(duration_s) + "|" + std::to_string(noise_dbfs);
  std::vector<float> mix(static_cast<size_t>(duration_s * kRate), 0.0f);
  if (noise_dbfs < 0) {
    // Pink noise (Paul Kellett's filter over a fixed white sequence), scaled to the level.
    uint64_t state = 0x9e3779b97f4a7c15ull;
    double b0 = 0, b1 = 0, b2 = 0, b3 = 0, b4 = 0, b5 = 0, b6 = 0, sum = 0;
    std::vector<double> noise(mix.size());
    for (double& n : noise) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const double white = static_cast<double>(state >> 11) / 9007199254740992.0 * 2 - 1;
      b0 = 0.99886 * b0 + white * 0.0555179;
      b1 = 0.99332 * b1 + white * 0.0750759;
      b2 = 0.96900 * b2 + white * 0.1538520;
      b3 = 0.86650 * b3 + white * 0.3104856;
      b4 = 0.55000 * b4 + white * 0.5329522;
      b5 = -0.7616 * b5 - white * 0.0168980;
      n = b0 + b1 + b2 + b3 + b4 + b5 + b6 + white * 0.5362;
      b6 = white * 0.115926;
      sum += n * n;
    }
    const double rms = std::sqrt(sum / std::max<size_t>(1, noise.size()));
    const double scale = 32768.0 * std::pow(10.0, noise_dbfs / 20) / std::max(rms, 1e-9);
    for (size_t i = 0; i < mix.size(); ++i) mix[i] = static_cast<float>(noise[i] * scale);
  }
  for (const SpeechPiece& p : pieces) {
    const double lead = std::max(0.0, SpeechOnset(p.samples, kRate));
    const int64_t first = std::llround((p.onset_s - lead) * kRate);
    for (size_t i = 0; i < p.samples.size(); ++i) {
      const int64_t at = first + static_cast<int64_t>(i);
      if (at >= 0 && at < static_cast<int64_t>(mix.size())) mix[at] += p.samples[i];
    }
    out.placed.push_back(
        {p.text, p.onset_s,
         static_cast<double>(first + static_cast<int64_t>(p.samples.size())) / kRate});
    recipe +=
        "|" + p.text + "@" + std::to_string(p.onset_s) + "#" +
        Hash(std::string(reinterpret_cast<const char*>(p.samples.data()), p.samples.size() * 2));
  }
  std::vector<int16_t> samples(mix.size());
  for (size_t i = 0; i < mix.size(); ++i) {
    samples[i] = static_cast<int16_t>(std::clamp(std::lround(mix[i]), -32768L, 32767L));
  }
  const fs::path wav = MediaDir() / ("speech-" + Hash(recipe) + ".wav");
  if (!fs::exists(wav) && !WriteWav(wav, samples, kRate)) {
    ADD_FAILURE() << "cannot write " << wav;
    return out;
  }
  char video[160];
  std::snprintf(video, sizeof(video), "color=c=gray:s=160x120:r=5:d=%.3f", duration_s);
  out.path =
      GeneratedMedia(name, "-f lavfi -i " + std::string(video) + " -i " + ShellQuote(wav.string()) +
                               " -c:v mpeg4 -q:v 5 -c:a aac -b:a 128k -ar 48000 -ac 2 "
                               "-shortest");
  return out;
}

std::vector<std::string> NormalizedWords(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    while (!word.empty() && word.back() == '\'') word.pop_back();
    while (!word.empty() && word.front() == '\'') word.erase(word.begin());
    if (!word.empty()) words.push_back(word);
    word.clear();
  };
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || (c == '\'' && !word.empty())) {
      word += static_cast<char>(std::tolower(u));
    } else {
      flush();
    }
  }
  flush();
  return words;
}

WordErrors CountWordErrors(const std::string& reference, const std::string& hypothesis) {
  const std::vector<std::string> r = NormalizedWords(reference);
  const std::vector<std::string> h = NormalizedWords(hypothesis);
  std::vector<int> previous(h.size() + 1), current(h.size() + 1);
  for (size_t j = 0; j <= h.size(); ++j) previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= r.size(); ++i) {
    current[0] = static_cast<int>(i);
    for (size_t j = 1; j <= h.size(); ++j) {
      current[j] = std::min(
          {previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r[i - 1] == h[j - 1] ? 0 : 1)});
    }
    std::swap(previous, current);
  }
  return {previous[h.size()], static_cast<int>(r.size())};
}

TranscriptScore ScoreTranscript(const std::vector<PlacedSpeech>& placed,
                                const std::vector<TimedWord>& words) {
  TranscriptScore score;
  std::vector<bool> used(words.size(), false);
  for (const PlacedSpeech& p : placed) {
    PieceScore piece;
    piece.reference = p.text;
    piece.onset_s = p.onset_s;
    for (size_t i = 0; i < words.size(); ++i) {
      const double mid = (words[i].start_s + words[i].end_s) / 2;
      if (mid < p.onset_s - 0.3 || mid > p.end_s + 0.3) continue;
      used[i] = true;
      if (piece.first_word_s < 0) piece.first_word_s = words[i].start_s;
      piece.hypothesis += (piece.hypothesis.empty() ? "" : " ") + words[i].text;
    }
    piece.errors = CountWordErrors(piece.reference, piece.hypothesis);
    score.total.errors += piece.errors.errors;
    score.total.words += piece.errors.words;
    score.pieces.push_back(std::move(piece));
  }
  for (bool u : used) score.stray_words += u ? 0 : 1;
  return score;
}

std::string TranscriptScore::Table() const {
  std::ostringstream out;
  char line[96];
  for (const PieceScore& p : pieces) {
    std::snprintf(line, sizeof(line), "%7.2f s  first word %+6.2f s  %2d/%2d errors  ", p.onset_s,
                  p.first_word_s < 0 ? 99.0 : p.first_word_s - p.onset_s, p.errors.errors,
                  p.errors.words);
    out << line << "\"" << p.reference << "\" -> \"" << p.hypothesis << "\"\n";
  }
  std::snprintf(line, sizeof(line), "word error rate %.1f%% (%d/%d), %d words outside the speech\n",
                100 * total.rate(), total.errors, total.words, stray_words);
  out << line;
  return out.str();
}

namespace {

// The package's transcripts: prompt name -> text.
std::map<std::string, std::string> AsteriskTranscripts() {
  const std::string transcripts = DebianPackageFile(
      "asterisk-core-sounds-en", "usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz",
      "asterisk/core-sounds-en.txt");
  std::map<std::string, std::string> text_of;
  if (transcripts.empty()) return text_of;
  std::ifstream f(transcripts);
  std::string line;
  while (std::getline(f, line)) {
    const size_t colon = line.find(": ");
    if (line.empty() || line[0] == ';' || colon == std::string::npos) continue;
    text_of[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return text_of;
}

}  // namespace

std::vector<std::string> PlainAsteriskPromptNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : AsteriskTranscripts()) {
    if (text.find_first_of("0123456789[]#*") != std::string::npos) continue;
    if (text.find("...") != std::string::npos) continue;
    const size_t words = NormalizedWords(text).size();
    if (words >= 4 && words <= 20) names.push_back(name);
  }
  return names;
}

std::vector<RealPrompt> AsteriskPrompts(const std::vector<std::string>& names) {
  const std::map<std::string, std::string> text_of = AsteriskTranscripts();
  if (text_of.empty()) return {};
  std::vector<std::pair<std::string, std::string>> files;  // (path in the package, name)
  for (const std::string& name : names) {
    std::string flat = name;
    for (char& c : flat) c = c == '/' ? '_' : c;
    files.push_back({"usr/share/asterisk/sounds/en_US_f_Allison/" + name + ".g722",
                     "asterisk/" + flat + ".g722"});
  }
  const std::vector<std::string> audio_files =
      DebianPackageFiles("asterisk-core-sounds-en-g722", files);
  std::vector<RealPrompt> prompts;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    auto it = text_of.find(name);
    if (it == text_of.end()) {
      ADD_FAILURE() << "no transcript for Asterisk prompt " << name;
      continue;
    }
    const std::string& audio = audio_files[i];
    if (audio.empty()) return {};
    RealPrompt p{name, it->second, DecodeWithFfmpeg(audio)};
    if (p.samples.empty()) {
      ADD_FAILURE() << "ffmpeg cannot decode " << audio;
      continue;
    }
    prompts.push_back(std::move(p));
  }
  return prompts;
}

const std::vector<std::string>& HarvardSentences() {
  static const std::vector<std::string> sentences = {
      "The birch canoe slid on the smooth planks.",  "Glue the sheet to the dark blue background.",
      "It's easy to tell the depth of a well.",      "These days a chicken leg is a rare dish.",
      "Rice is often served in round bowls.",        "The juice of lemons makes fine punch.",
      "The box was thrown beside the parked truck.", "The hogs were fed chopped corn and garbage.",
      "Four hours of steady work faced us.",         "A large size in stockings is hard to sell.",
  };
  return sentences;
}

std::vector<SpeechPiece> LayOut(std::vector<SpeechPiece> pieces, const std::vector<double>& pauses,
                                double* end_s) {
  double t = 1.5;
  for (size_t i = 0; i < pieces.size(); ++i) {
    pieces[i].onset_s = t;
    const double lead = std::max(0.0, SpeechOnset(pieces[i].samples));
    t += static_cast<double>(pieces[i].samples.size()) / 16000 - lead + pauses[i % pauses.size()];
  }
  *end_s = t + 1;
  return pieces;
}

SpeechVideo HarvardVideo(double noise_dbfs, size_t sentences) {
  if (!HaveFlite()) return {};
  const char* voices[] = {"slt", "awb", "rms"};
  std::vector<SpeechPiece> pieces;
  sentences = std::min(sentences, HarvardSentences().size());
  for (size_t i = 0; i < sentences; ++i) {
    const std::string& text = HarvardSentences()[i];
    pieces.push_back({text, FliteSpeech(text, voices[i % 3]), 0});
    if (pieces.back().samples.empty()) {
      ADD_FAILURE() << "flite failed to read \"" << text << "\"";
      return {};
    }
  }
  double end = 0;
  pieces = LayOut(std::move(pieces), {2.5, 0.8, 3.5, 1.2}, &end);
  std::string name = noise_dbfs < 0 ? "harvard_noise" : "harvard_clean";
  if (sentences < HarvardSentences().size()) name += "_" + std::to_string(sentences);
  return MakeSpeechVideo(name + ".mp4", pieces, end, noise_dbfs);
}

SpeechVideo AudioOnly(const SpeechVideo& video, const std::string& name,
                      const std::string& codec_args) {
  SpeechVideo out = video;
  out.path = video.path.empty()
                 ? std::string()
                 : GeneratedMedia(name, "-i " + ShellQuote(video.path) + " -vn " + codec_args);
  return out;
}

SpeechVideo ToneBurstVideo() {
  std::vector<double> times = {1.0, 2.8, 7.5, 9.0, 14.0};
  for (double at = 19.0; at < 59.0; at += 2.0) times.push_back(at);
  for (double at : {64.0, 70.0, 71.5}) times.push_back(at);
  std::vector<SpeechPiece> pieces;
  int hz = 300;
  for (double at : times) {
    std::vector<int16_t> tone(static_cast<size_t>(0.8 * 16000));
    for (size_t i = 0; i < tone.size(); ++i) {
      const double t = static_cast<double>(i) / 16000;
      const double fade = std::min({1.0, t / 0.01, (0.8 - t) / 0.01});
      tone[i] = static_cast<int16_t>(9000 * fade * std::sin(2 * M_PI * hz * t));
    }
    pieces.push_back({"tone " + std::to_string(hz), std::move(tone), at});
    hz += 40;
  }
  return MakeSpeechVideo("tone_bursts.mkv", pieces, 75, 0);
}

}  // namespace reel::testing
