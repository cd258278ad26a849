// Runs a command line for tests (ffmpeg to generate media, the reel binary end to end).
#pragma once

#include <string>

namespace reel::testing {

struct CommandResult {
  int exit_code = -1;  // the process's exit status, or 128+signal
  std::string out;     // standard output
  std::string err;     // standard error
};

// Runs `command` through /bin/sh, capturing stdout and stderr. A command still running after
// REEL_TEST_COMMAND_SECONDS (300 s; 540 s under the sanitizers) is taken as hung: the test fails
// with what each of its processes was waiting in (and their stacks, where gdb is installed), and
// they are killed.
CommandResult RunCommand(const std::string& command);

// Runs `command` through /bin/sh with stdin, stdout and stderr on a new pseudo-terminal (isatty
// is true, as in an interactive shell), capturing what it writes there in `out` (stdout and
// stderr together; the terminal turns each "\n" into "\r\n").
CommandResult RunInTerminal(const std::string& command);

// Quotes `s` for /bin/sh.
std::string ShellQuote(const std::string& s);

}  // namespace reel::testing
