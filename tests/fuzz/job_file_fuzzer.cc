// Job files: the YAML parser and every validation rule. Invariants: no crash; a rejected file is
// kInvalidArgument whose message is valid UTF-8 once made safe and names the file; an accepted
// file renders (RenderResolvedJob) to YAML that parses back and renders the same again.
// ${VAR} lookups see a fixed environment, and nothing touches the file system.
#include <optional>

#include "base/utf8.h"
#include "jobs/spec/job_spec.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  reel::jobs::ParseOptions options;
  options.lookup_env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "FPS") return "2";
    if (name == "EMPTY") return "";
    if (name == "DIR") return "media";
    return std::nullopt;
  };
  auto job = reel::jobs::ParseJobText(text, "fuzz.yaml", "/fuzz", options);
  if (!job.ok()) {
    Require(job.status().code() == reel::ErrorCode::kInvalidArgument, "job error kind",
            job.status().ToString());
    Require(job.status().message().starts_with("fuzz.yaml"), "job errors name the file",
            job.status().message());
    return 0;
  }
  const std::string rendered = reel::jobs::RenderResolvedJob(*job);
  auto again = reel::jobs::ParseJobText(rendered, "rendered.yaml", "/fuzz", options);
  Require(again.ok(), "a rendered job parses back",
          again.ok() ? rendered : again.status().message() + "\n---\n" + rendered);
  const std::string rerendered = reel::jobs::RenderResolvedJob(*again);
  // The first line names the source file; the rest must agree.
  auto body = [](const std::string& s) { return s.substr(s.find('\n')); };
  Require(body(rendered) == body(rerendered), "rendering is stable",
          rendered + "\n---\n" + rerendered);
  Require(reel::jobs::FrameSettingsKey(*job) == reel::jobs::FrameSettingsKey(*again),
          "frame settings survive rendering");
  return 0;
}
