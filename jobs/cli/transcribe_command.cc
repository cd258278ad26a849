// reel transcribe FILE... [--backend auto|pocketsphinx|openai] [--endpoint URL] [--model NAME]
//                 [--language L] [--format srt|vtt|json|text] [-o PATH] [--start S] [--end S]
//                 [--max-chunk S] [--concurrency N] [--api-key-env NAME] [--verbose]
//
// The one-liner for speech: each file's audio track to timed text, like whisper's command line.
// Offline with PocketSphinx (English) unless a transcription server is named (--endpoint or
// $REEL_SPEECH_URL). Nothing is stored in a database.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/file_util.h"
#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/number_checks.h"
#include "jobs/cli/stop_signal.h"
#include "llm/speech/transcribe_file.h"
#include "llm/speech/transcript_format.h"

namespace reel::cli {
namespace {

namespace fs = std::filesystem;

struct TranscribeFlags {
  std::vector<std::string> files;
  std::string backend = "auto";
  std::optional<std::string> endpoint;
  std::optional<std::string> model;
  std::string language;
  std::optional<std::string> format;
  std::optional<std::string> output;
  double start = 0;
  std::optional<double> end;
  double max_chunk = 30;
  int concurrency = 4;
  std::optional<std::string> api_key_env;
  double time_limit = 3600;
  bool verbose = false;
};

std::optional<std::string> SpeechEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::string Extension(const std::string& format) { return format == "text" ? "txt" : format; }

// The format a path's extension names, if any.
std::optional<std::string> FormatOfPath(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".srt") return "srt";
  if (ext == ".vtt") return "vtt";
  if (ext == ".json" || ext == ".jsonl") return "json";
  if (ext == ".txt") return "text";
  return std::nullopt;
}

std::string Render(const llm::FileTranscript& t, const std::string& format, double offset_s) {
  if (format == "srt") return llm::FormatSrt(t.segments, offset_s);
  if (format == "vtt") return llm::FormatVtt(t.segments, offset_s);
  if (format == "json") return llm::FormatJson(t, DisplayPath(t.path), offset_s);
  return llm::FormatText(t.segments);
}

// Sets `cancel` when SIGINT / SIGTERM arrives, until destroyed.
class CancelOnSignal {
 public:
  explicit CancelOnSignal(std::atomic<bool>* cancel)
      : thread_([this, cancel] {
          while (!done_.load()) {
            if (g_stop_signal.load() != 0) cancel->store(true);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          }
        }) {}
  ~CancelOnSignal() {
    done_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

int Transcribe(const TranscribeFlags& flags) {
  const std::string format =
      flags.format ? *flags.format
                   : (flags.output ? FormatOfPath(*flags.output).value_or("text") : "text");
  const bool several = flags.files.size() > 1;
  if (several && !flags.output && (format == "srt" || format == "vtt")) {
    std::fprintf(stderr,
                 "reel transcribe: %s for several files needs -o DIR (one file each); on the "
                 "terminal use --format text or json\n",
                 format.c_str());
    return kExitUsage;
  }
  if (flags.end && *flags.end <= flags.start) {
    std::fprintf(stderr, "reel transcribe: --end (%g) must be after --start (%g)\n", *flags.end,
                 flags.start);
    return kExitUsage;
  }

  llm::TranscriberOptions options;
  options.endpoint = flags.endpoint ? *flags.endpoint : SpeechEnv("REEL_SPEECH_URL").value_or("");
  options.backend = flags.backend != "auto"    ? flags.backend
                    : options.endpoint.empty() ? "pocketsphinx"
                                               : "openai";
  if (options.backend == "pocketsphinx") {
    options.endpoint.clear();
    options.model = flags.model.value_or("");  // a model folder; $REEL_SPEECH_MODEL is a server's
  } else {
    options.model = flags.model ? *flags.model : SpeechEnv("REEL_SPEECH_MODEL").value_or("");
  }
  options.language = flags.language;
  const std::string key_env = flags.api_key_env
                                  ? *flags.api_key_env
                                  : (SpeechEnv("REEL_SPEECH_API_KEY") ? "REEL_SPEECH_API_KEY" : "");
  Result<llm::ApiKey> key = llm::ApiKey::FromEnvironment(key_env);
  if (!key.ok()) {
    std::fprintf(stderr, "reel transcribe: %s\n", key.status().message().c_str());
    return kExitUsage;
  }
  options.api_key = *key;
  if (flags.verbose) {
    options.on_event = [](const std::string& m) {
      std::fprintf(stderr, "reel transcribe: %s\n", SafeUtf8(m).c_str());
    };
  }
  Result<std::unique_ptr<llm::Transcriber>> transcriber = llm::CreateTranscriber(options);
  if (!transcriber.ok()) {
    std::fprintf(stderr, "reel transcribe: %s\n", transcriber.status().message().c_str());
    return transcriber.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  if (flags.verbose) {
    std::fprintf(stderr, "reel transcribe: %s\n", (*transcriber)->Describe().c_str());
  }

  llm::TranscribeFileOptions file_options;
  file_options.audio.read.language = flags.language;
  file_options.audio.read.start_s = flags.start;
  file_options.audio.read.end_s = flags.end;
  file_options.audio.read.limits.time_limit_s = flags.time_limit;
  file_options.audio.chunks.max_chunk_s = flags.max_chunk;
  file_options.concurrency = (*transcriber)->backend() == "openai" ? flags.concurrency : 1;

  if (several && flags.output) {
    if (Status made = MakeDirectories(*flags.output); !made.ok()) {
      std::fprintf(stderr, "reel transcribe: %s\n", made.message().c_str());
      return kExitFailed;
    }
  }

  StopSignalHandlers handlers;
  g_stop_signal.store(0);
  std::atomic<bool> cancel{false};
  CancelOnSignal watcher(&cancel);
  int exit_code = kExitOk;
  for (const std::string& file : flags.files) {
    const std::string shown = SafeUtf8(DisplayPath(file));
    Result<llm::FileTranscript> t = llm::TranscribeFile(
        file, **transcriber, file_options, &cancel, [&](const llm::ChunkOutcome& o) {
          if (!flags.verbose) return;
          std::fprintf(stderr, "reel transcribe: %s: chunk %d (%.2f-%.2f s): %s\n", shown.c_str(),
                       o.chunk, o.start_s, o.end_s,
                       o.result.ok()
                           ? (std::to_string(o.result->segments.size()) + " segments").c_str()
                           : SafeUtf8(o.result.status().message()).c_str());
        });
    if (!t.ok()) {
      if (t.status().code() == ErrorCode::kCancelled) {
        std::fprintf(stderr, "reel transcribe: stopped\n");
        return 128 + g_stop_signal.load();
      }
      std::fprintf(stderr, "reel transcribe: %s\n", SafeUtf8(t.status().message()).c_str());
      exit_code = kExitFailed;
      continue;
    }
    for (const std::string& note : t->notes) {
      std::fprintf(stderr, "reel transcribe: %s: %s\n", shown.c_str(), SafeUtf8(note).c_str());
    }
    for (const llm::ChunkFailure& f : t->failures) {
      std::fprintf(stderr, "reel transcribe: %s: %.2f-%.2f s not transcribed: %s\n", shown.c_str(),
                   f.start_s, f.end_s, SafeUtf8(f.status.message()).c_str());
    }
    const std::string text = Render(*t, format, t->audio.track.media_start_s);
    if (flags.output) {
      std::string target = *flags.output;
      if (several) {
        target =
            (fs::path(*flags.output) / fs::path(file).stem()).string() + "." + Extension(format);
      }
      if (Status written = WriteFileAtomically(target, text); !written.ok()) {
        std::fprintf(stderr, "reel transcribe: %s\n", written.message().c_str());
        exit_code = kExitFailed;
        continue;
      }
      if (flags.verbose) {
        std::fprintf(stderr, "reel transcribe: %s -> %s (%zu segments)\n", shown.c_str(),
                     SafeUtf8(DisplayPath(target)).c_str(), t->segments.size());
      }
    } else {
      std::cout << text;
      std::cout.flush();
    }
    if (!t->complete() && exit_code == kExitOk) exit_code = kExitPartial;
  }
  return exit_code;
}

}  // namespace

void AddTranscribeCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<TranscribeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "transcribe", "Transcribe the speech in media files to timed text (SRT, VTT, JSON, text)");
  cmd->footer(
      "Backends: pocketsphinx (offline, English only; Debian's pocketsphinx-en-us model) is the "
      "default when no endpoint is set; openai sends each speech chunk to a server with OpenAI's "
      "POST /v1/audio/transcriptions (vLLM or speaches serving Whisper, whisper.cpp's server, a "
      "hosted service) with retries, a rate limit and a circuit, as the model client. The "
      "endpoint comes from --endpoint, else $REEL_SPEECH_URL; the model from --model, else "
      "$REEL_SPEECH_MODEL, else whisper-1; a key from the variable --api-key-env names, else "
      "$REEL_SPEECH_API_KEY. See docs/speech.md.\n"
      "Times are those a player shows (from the start of the file). The audio stream is the one "
      "in --language, else the default one, else the first.\n"
      "Examples:\n"
      "  reel transcribe talk.mp4                      # text on the terminal, offline\n"
      "  reel transcribe talk.mp4 -o talk.srt          # format from the extension\n"
      "  REEL_SPEECH_URL=http://gpu:8000/v1 reel transcribe --model openai/whisper-large-v3 "
      "--language de --format vtt -o subs/ a.mkv b.mkv\n"
      "Exit status: 0 done, 1 some file failed, 2 bad command line, 3 some speech could not be "
      "transcribed (the output says which times).");
  cmd->add_option("FILE", flags->files, "Media files (video or audio)")->required();
  cmd->add_option("--backend", flags->backend,
                  "auto (openai when an endpoint is set, else pocketsphinx), pocketsphinx, openai")
      ->check(CLI::IsMember({"auto", "pocketsphinx", "openai"}))
      ->default_val("auto");
  cmd->add_option("--endpoint", flags->endpoint,
                  "Transcription server's base URL, e.g. http://localhost:8000/v1 (default "
                  "$REEL_SPEECH_URL)");
  cmd->add_option("--model", flags->model,
                  "The server's model name (default $REEL_SPEECH_MODEL, else whisper-1); with "
                  "pocketsphinx, a model folder");
  cmd->add_option("--language", flags->language,
                  "Spoken language (en, de, eng, English...): chooses the audio stream and is sent "
                  "to the server; pocketsphinx takes English only");
  cmd->add_option("--format", flags->format,
                  "srt, vtt, json or text (default: from -o's extension, else text)")
      ->check(CLI::IsMember({"srt", "vtt", "json", "text"}));
  cmd->add_option("-o,--output", flags->output,
                  "Write to this file (several FILEs: into this folder, one file each)");
  cmd->add_option("--start", flags->start, "Transcribe from this time (seconds)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--end", flags->end, "Transcribe up to this time (seconds)")
      ->check(GreaterThan(0));
  cmd->add_option("--max-chunk", flags->max_chunk,
                  "Longest speech chunk sent at once, seconds (at most the backend's window, 30)")
      ->check(CLI::Range(1.0, 30.0))
      ->default_val(30);
  cmd->add_option("--concurrency", flags->concurrency, "Chunks sent to a server at once")
      ->check(CLI::Range(1, 64))
      ->default_val(4);
  cmd->add_option("--api-key-env", flags->api_key_env,
                  "Environment variable holding the server's API key");
  cmd->add_option("--time-limit", flags->time_limit, "Seconds allowed to read one file's audio")
      ->check(GreaterThan(0))
      ->default_val(3600);
  cmd->add_flag("--verbose", flags->verbose, "Say what happens (backend, chunks, retries)");
  cmd->callback([flags, &exit_code] { exit_code = Transcribe(*flags); });
}

}  // namespace reel::cli
