// `reel frames` in process (frames.json and report.json): the input's first line is the file's
// name, the rest its bytes. Invariants: no crash or uncaught exception; when the command
// succeeds (exit 0 or 3) both JSON files exist, are valid UTF-8 JSON, and report.json's "path"
// gives the name back; frames.json lists as many frames as report.json says were returned.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const reel::fuzz::NamedInput input = reel::fuzz::SplitName(data, size);
  const std::string path = reel::fuzz::WriteScratchFile(input.name, input.body);
  const std::string out_dir = reel::fuzz::ScratchDir() + "/frames-out";
  std::error_code ec;
  std::filesystem::remove_all(out_dir, ec);

  CLI::App app;
  int exit_code = 0;
  reel::cli::AddFramesCommand(app, exit_code);
  {
    reel::fuzz::QuietStderr quiet;
    std::vector<std::string> args = {"frames",    path, "--time-limit", "5",
                                     "--count",   "2",  "--max-pixels", "3136",
                                     "--threads", "1",  "-o",           out_dir};
    std::reverse(args.begin(), args.end());  // CLI11's parse(vector) reads them back to front
    app.parse(args);
  }
  std::remove(path.c_str());

  if (exit_code == 0 || exit_code == 3) {
    const std::string frames = Slurp(out_dir + "/frames.json");
    const std::string report = Slurp(out_dir + "/report.json");
    reel::fuzz::RequireValidJson(frames, "frames.json");
    reel::fuzz::RequireValidJson(report, "report.json");
    nlohmann::json r = nlohmann::json::parse(report);
    Require(reel::UnescapeInvalidUtf8(r["path"].get<std::string>()) == path,
            "report path unescapes to the file's name", r["path"].get<std::string>());
    Require(nlohmann::json::parse(frames).size() == r["returned"].get<size_t>(),
            "frames.json lists every returned frame", frames);
  } else {
    Require(exit_code == 1, "frames exit code", std::to_string(exit_code));
  }
  return 0;
}
