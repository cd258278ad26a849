// Runs a command line for tests (ffmpeg to generate media, the reel binary end to end).
#pragma once

#include <string>

namespace reel::testing {

struct CommandResult {
  int exit_code = -1;  // the process's exit status, or 128+signal
  std::string out;     // standard output
  std::string err;     // standard error
};

// Runs `command` through /bin/sh, capturing stdout and stderr.
CommandResult RunCommand(const std::string& command);

// Quotes `s` for /bin/sh.
std::string ShellQuote(const std::string& s);

}  // namespace reel::testing
