// reel validate JOB.yaml [--no-inputs]
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "jobs/cli/commands.h"
#include "jobs/spec/job_spec.h"

namespace reel::cli {
namespace {

struct ValidateFlags {
  std::string job_file;
  bool no_inputs = false;
  bool quiet = false;
};

int Validate(const ValidateFlags& flags) {
  Result<jobs::JobSpec> job = jobs::LoadJobFile(flags.job_file);
  if (!job.ok()) {
    std::fprintf(stderr, "%s\n", job.status().message().c_str());
    return kExitUsage;
  }
  for (const std::string& warning : job->warnings) {
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  if (!flags.no_inputs) {
    std::vector<std::string> warnings;
    Result<std::vector<jobs::InputFile>> inputs = jobs::ExpandInputs(*job, &warnings);
    for (const std::string& warning : warnings) {
      std::fprintf(stderr, "warning: %s\n", warning.c_str());
    }
    if (!inputs.ok()) {
      std::fprintf(stderr, "%s\n", inputs.status().message().c_str());
      return kExitUsage;
    }
    std::fprintf(stderr, "%s: valid; %zu input files\n", flags.job_file.c_str(), inputs->size());
    const auto audio = std::count_if(inputs->begin(), inputs->end(), [](const jobs::InputFile& f) {
      return f.kind == jobs::InputKind::kAudio;
    });
    if (audio > 0) {
      const jobs::SpeechSpec& s = job->speech;
      const std::string backend = jobs::SpeechBackendOf(s);
      if (backend == "openai" && !s.endpoint) {
        std::fprintf(stderr,
                     "%s: %lld audio files need a transcription: 'speech.backend' is openai but "
                     "'speech.endpoint' is not set (set it, or use backend pocketsphinx)\n",
                     flags.job_file.c_str(), static_cast<long long>(audio));
        return kExitUsage;
      }
      std::string how = backend == "openai" ? "the server at " + *s.endpoint
                                            : std::string("PocketSphinx (offline, English)");
      if (!s.language.empty()) how += ", language " + s.language;
      if (!s.enabled) {
        how +=
            " (the speech section's settings although speech.enabled is false: that governs "
            "videos; an audio file's transcript is all it has)";
      }
      std::fprintf(stderr, "%lld audio files: their speech is transcribed with %s\n",
                   static_cast<long long>(audio), how.c_str());
    }
  } else {
    std::fprintf(stderr, "%s: valid\n", flags.job_file.c_str());
  }
  if (!flags.quiet) std::cout << jobs::RenderResolvedJob(*job) << std::flush;
  return kExitOk;
}

}  // namespace

void AddValidateCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ValidateFlags>();
  CLI::App* cmd =
      app.add_subcommand("validate", "Check a job file and print it with every default filled in");
  cmd->footer(
      "Problems are printed as file:line:column: message, all at once.\n"
      "Exit status: 0 valid, 2 invalid (or an input file that does not exist).");
  cmd->add_option("JOB", flags->job_file, "Job file (YAML)")->required();
  cmd->add_flag("--no-inputs", flags->no_inputs, "Do not list the input files");
  cmd->add_flag("-q,--quiet", flags->quiet, "Do not print the resolved job");
  cmd->callback([flags, &exit_code] { exit_code = Validate(*flags); });
}

}  // namespace reel::cli
