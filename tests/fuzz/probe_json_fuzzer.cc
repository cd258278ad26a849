// `reel probe --json` in process: the input's first line (up to 64 bytes) is the file's name,
// the rest its bytes, so names and tags that are not UTF-8 both reach the JSON writer.
// Invariants: no crash or uncaught exception; every output line is valid UTF-8 JSON; "path"
// gives the file's name back through UnescapeInvalidUtf8.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const reel::fuzz::NamedInput input = reel::fuzz::SplitName(data, size);
  const std::string path = reel::fuzz::WriteScratchFile(input.name, input.body);

  CLI::App app;
  int exit_code = 0;
  reel::cli::AddProbeCommand(app, exit_code);
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  {
    reel::fuzz::QuietStderr quiet;
    std::vector<std::string> args = {"probe", "--json", "--time-limit", "5", path};
    std::reverse(args.begin(), args.end());  // CLI11's parse(vector) reads them back to front
    app.parse(args);
  }
  std::cout.rdbuf(old);
  std::remove(path.c_str());

  const std::string out = captured.str();
  reel::fuzz::RequireValidJson(out, "probe --json output", /*lines=*/true);
  // A truncated file is described (exit 3, partial); a file that cannot be probed prints nothing.
  Require(exit_code == reel::cli::kExitOk || exit_code == reel::cli::kExitPartial || out.empty(),
          "a failed probe prints no JSON", out);
  if (!out.empty()) {
    nlohmann::json j = nlohmann::json::parse(out);
    Require(reel::UnescapeInvalidUtf8(j["path"].get<std::string>()) == path,
            "path unescapes to the file's name", j["path"].get<std::string>());
  }
  return 0;
}
