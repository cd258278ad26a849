// reel init [DIR] [--force] [--output FILE]: a commented starter job file for the media in DIR.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "jobs/cli/commands.h"
#include "jobs/spec/job_spec.h"

namespace reel::cli {
namespace {

namespace fs = std::filesystem;

struct InitFlags {
  std::string dir = ".";
  std::optional<std::string> output;
  bool force = false;
};

// `text` as a YAML double-quoted scalar.
std::string YamlQuoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The folder's name as a job name: letters, digits, '-', '_' and '.' kept, the rest '-'.
std::string JobNameFor(const fs::path& dir) {
  std::string name = fs::absolute(dir).lexically_normal().filename().string();
  if (name.empty()) name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  std::string out;
  for (char c : name) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    out += keep ? c : '-';
  }
  if (out.empty() || out.front() == '.') out = "media" + out;
  return out.substr(0, 64);
}

const char* Plural(int64_t n, const char* one, const char* many) { return n == 1 ? one : many; }

// The starter job's text: an input entry per folder and extension, a summary prompt for every
// item, chapters when there are videos, and the settings people change first, commented.
std::string StarterJob(const std::string& name, const std::vector<jobs::InputFile>& files,
                       const fs::path& base) {
  std::map<jobs::InputKind, int64_t> counts;
  std::set<std::string> entries;  // sorted
  for (const jobs::InputFile& f : files) {
    ++counts[f.kind];
    const fs::path relative = fs::path(f.path).lexically_relative(base);
    const std::string folder = relative.parent_path().generic_string();
    const std::string ext = relative.extension().string();
    const bool plain = folder.find_first_of("*?[") == std::string::npos &&
                       relative.filename().string().find_first_of("*?[") == std::string::npos;
    if (plain && !ext.empty()) {
      entries.insert((folder.empty() ? "" : folder + "/") + "*" + ext);
    } else {
      entries.insert(relative.generic_string());  // a name a glob cannot write: as it is
    }
  }
  const int64_t videos = counts[jobs::InputKind::kVideo];
  const int64_t images = counts[jobs::InputKind::kImage];
  const int64_t documents = counts[jobs::InputKind::kDocument];
  const int64_t subtitles = counts[jobs::InputKind::kSubtitle];
  const int64_t audio = counts[jobs::InputKind::kAudio];
  std::string found;
  auto add = [&](int64_t n, const char* one, const char* many) {
    if (n == 0) return;
    found += (found.empty() ? "" : ", ") + std::to_string(n) + " " + Plural(n, one, many);
  };
  add(videos, "video", "videos");
  add(images, "image", "images");
  add(documents, "document", "documents");
  add(subtitles, "subtitle file", "subtitle files");
  add(audio, "audio file", "audio files");

  std::string t;
  t += "# A Reel job, written by `reel init` for the media in this folder (" + found + ").\n";
  t += "# Check it with `reel validate job.yaml`; run it with `reel run job.yaml` (again at any\n";
  t += "# time: finished items are skipped). Every setting: docs/job-file.md.\n\n";
  t += "# The job's name; its database is NAME.db beside this file (storage.database).\n";
  t += "name: " + YamlQuoted(name) + "\n\n";
  t += "# What to read, relative to this file: files, folders (read recursively) or globs (*, ?,\n";
  t += "# ** for any folders). A video's side-car subtitles (clip.srt, clip.en.vtt beside\n";
  t += "# clip.mp4) are read with it.\n";
  t += "inputs:\n";
  for (const std::string& entry : entries) t += "  - " + YamlQuoted(entry) + "\n";
  t += "\n";
  if (videos > 0) {
    t += "# How frames are taken from each video: by default 1 per second by the model's rule,\n";
    t += "# sized for the model (docs/job-file.md#sampling). E.g. 2 per second, at most 600:\n";
    t += "# sampling:\n";
    t += "#   fps: 2\n";
    t += "#   max_frames: 600\n\n";
    t +=
        "# The speech in each video as timed text, beside the frames (the model hears no audio):\n";
    t += "# offline with PocketSphinx (English), or a Whisper server with an endpoint\n";
    t += "# (docs/speech.md).\n";
    t += "# speech:\n";
    t += "#   enabled: true\n";
    t += "#   endpoint: http://localhost:8001/v1\n";
    t += "#   model: openai/whisper-large-v3\n\n";
  }
  if (audio > 0) {
    t +=
        "# The audio files (podcasts, recordings) are transcribed and asked about as timed text:\n";
    t += "# with the speech section's settings even while speech.enabled is false (that governs\n";
    t += "# videos): offline with PocketSphinx (English) unless speech.endpoint names a Whisper\n";
    t += "# server (docs/speech.md).\n\n";
  }
  t += "# The model server (any OpenAI-compatible one: vLLM, SGLang). Without an endpoint the\n";
  t += "# questions wait in the database: `reel export` writes them as a batch file, or set\n";
  t += "# REEL_MODEL_URL (or the endpoint below) and run again.\n";
  t += "# model:\n";
  t += "#   endpoint: http://localhost:8000/v1\n";
  t += "#   name: MiniMaxAI/MiniMax-M3\n\n";
  t += "# The questions asked about every item; answers: `reel results`, `reel report`.\n";
  t += "prompts:\n";
  t += "  - id: summary\n";
  t += "    question: Summarize what this is about in three sentences.\n";
  if (videos > 0) {
    t += "  # Each video divided into chapters (start, end, title, summary), checked.\n";
    t += "  - kind: chapters\n";
  }
  return t;
}

int RunInit(const InitFlags& flags) {
  std::error_code ec;
  if (!fs::is_directory(flags.dir, ec)) {
    std::fprintf(stderr, "reel init: %s: not a folder\n", flags.dir.c_str());
    return kExitUsage;
  }
  const fs::path output = flags.output ? fs::path(*flags.output) : fs::path(flags.dir) / "job.yaml";
  if (fs::exists(output, ec) && !flags.force) {
    std::fprintf(stderr,
                 "reel init: %s already exists; nothing was written (--force replaces it)\n",
                 output.string().c_str());
    return kExitUsage;
  }
  // The media as `reel run` would find it: the folder as the one input, side-cars left out.
  jobs::JobSpec probe;
  probe.source = "reel init";
  probe.base_dir = fs::absolute(flags.dir).lexically_normal().string();
  jobs::InputSpec folder;
  folder.path = ".";
  probe.inputs.push_back(folder);
  Result<std::vector<jobs::InputFile>> files = jobs::ExpandInputs(probe);
  if (!files.ok()) {
    std::fprintf(stderr, "reel init: %s\n", files.status().message().c_str());
    return kExitFailed;
  }
  if (files->empty()) {
    std::fprintf(stderr,
                 "reel init: %s: no videos, images, documents or subtitle files found (by their "
                 "extensions); nothing was written\n",
                 flags.dir.c_str());
    return kExitFailed;
  }
  // The inputs are written relative to the job file's folder.
  const fs::path job_dir = fs::absolute(output).lexically_normal().parent_path();
  const std::string text = StarterJob(JobNameFor(flags.dir), *files, job_dir);
  // What is written must be a job file that validates: checked before it is written.
  Result<jobs::JobSpec> parsed = jobs::ParseJobText(text, output.string(), job_dir.string());
  if (!parsed.ok()) {
    std::fprintf(stderr, "reel init: internal error, the starter job does not validate:\n%s\n",
                 parsed.status().message().c_str());
    return kExitFailed;
  }
  {
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::fprintf(stderr, "reel init: %s: cannot write\n", output.string().c_str());
      return kExitFailed;
    }
  }
  std::fprintf(stderr,
               "reel init: wrote %s for %zu input files; check it with `reel validate %s`, run "
               "it with `reel run %s`\n",
               output.string().c_str(), files->size(), output.string().c_str(),
               output.string().c_str());
  return kExitOk;
}

}  // namespace

void AddInitCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<InitFlags>();
  CLI::App* cmd = app.add_subcommand(
      "init", "Write a commented starter job file (job.yaml) for the media found in a folder");
  cmd->footer(
      "Finds the videos, images, documents and subtitle files below DIR (as `reel run` would:\n"
      "by extension, hidden files left out, side-car subtitles read with their video) and\n"
      "writes DIR/job.yaml: an input entry per folder and extension, a summary question for\n"
      "every item, chapters for videos, and the model and sampling settings commented. It\n"
      "validates (`reel validate`) and runs (`reel run`) as written. An existing file is\n"
      "never replaced without --force.\n"
      "Exit status: 0 written, 1 no media found or not writable, 2 the file exists (without\n"
      "--force) or DIR is not a folder.");
  cmd->add_option("DIR", flags->dir, "The media folder (default: the current one)");
  cmd->add_option("-o,--output", flags->output, "The job file to write (default: DIR/job.yaml)");
  cmd->add_flag("-f,--force", flags->force, "Replace the job file if it exists");
  cmd->callback([flags, &exit_code] { exit_code = RunInit(*flags); });
}

}  // namespace reel::cli
