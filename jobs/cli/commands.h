// The `reel` subcommands. Each Add*Command registers one subcommand on the app; its callback sets
// the process exit code through `exit_code`. The one place CLI11 is included.
#pragma once

#include <CLI/CLI.hpp>

namespace reel::cli {

// Exit codes shared by every command (documented in the README).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;    // the command failed, or some inputs did
inline constexpr int kExitUsage = 2;     // bad command line or invalid job file
inline constexpr int kExitPartial = 3;   // a result was produced but is incomplete

void AddProbeCommand(CLI::App& app, int& exit_code);
void AddFramesCommand(CLI::App& app, int& exit_code);

}  // namespace reel::cli
