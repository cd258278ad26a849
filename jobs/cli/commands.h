// The `reel` subcommands. Each Add*Command registers one subcommand on the app; its callback sets
// the process exit code through `exit_code`. The one place CLI11 is included.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "base/status.h"
#include "jobs/spec/job_spec.h"

namespace reel::cli {

// Exit codes shared by every command (documented in the README).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;     // the command failed, or some inputs did
inline constexpr int kExitUsage = 2;      // bad command line or invalid job file
inline constexpr int kExitPartial = 3;    // a result was produced but is incomplete
inline constexpr int kExitLocked = 4;     // reel run: another run holds the database's lock
inline constexpr int kExitSigint = 130;   // reel run: interrupted by SIGINT (128 + 2)
inline constexpr int kExitSigterm = 143;  // reel run: interrupted by SIGTERM (128 + 15)

// Applies `reel run|plan --fallback-encoding ENC` to `job` (nothing when unset). Errors:
// kInvalidArgument for an encoding iconv does not know.
Status SetFallbackEncoding(const std::optional<std::string>& encoding, jobs::JobSpec& job);

void AddProbeCommand(CLI::App& app, int& exit_code);
void AddFramesCommand(CLI::App& app, int& exit_code);
void AddValidateCommand(CLI::App& app, int& exit_code);
void AddPlanCommand(CLI::App& app, int& exit_code);
void AddRunCommand(CLI::App& app, int& exit_code);
void AddQueryCommand(CLI::App& app, int& exit_code);
void AddStatusCommand(CLI::App& app, int& exit_code);
void AddResultsCommand(CLI::App& app, int& exit_code);
void AddShowCommand(CLI::App& app, int& exit_code);
void AddSearchCommand(CLI::App& app, int& exit_code);
void AddMergeCommand(CLI::App& app, int& exit_code);
void AddTokenizeCommand(CLI::App& app, int& exit_code);
void AddExportCommand(CLI::App& app, int& exit_code);
void AddImportCommand(CLI::App& app, int& exit_code);
void AddAskCommand(CLI::App& app, int& exit_code);
void AddContextCommand(CLI::App& app, int& exit_code);
void AddEncodeCommand(CLI::App& app, int& exit_code);
void AddMakeTestWeightsCommand(CLI::App& app, int& exit_code);
void AddSimilarCommand(CLI::App& app, int& exit_code);
void AddReportCommand(CLI::App& app, int& exit_code);
void AddTextCommand(CLI::App& app, int& exit_code);
void AddPagesCommand(CLI::App& app, int& exit_code);
void AddTranscribeCommand(CLI::App& app, int& exit_code);
void AddInitCommand(CLI::App& app, int& exit_code);
void AddPruneCommand(CLI::App& app, int& exit_code);

}  // namespace reel::cli
