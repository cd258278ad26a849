// What the fuzz targets share: a private scratch directory, writing an input to a file in it,
// quieting the code under test, and invariant checks that crash (so libFuzzer keeps the input).
//
// A target is `extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)` in
// tests/fuzz/<name>_fuzzer.cc; see tests/fuzz/README.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace reel::fuzz {

// A directory private to this process (under $TMPDIR if set, else /dev/shm if it exists, else
// /tmp), created on first use and removed when the process exits normally.
const std::string& ScratchDir();

// Writes `bytes` to ScratchDir()/name (replacing it) and returns the path.
std::string WriteScratchFile(const std::string& name, std::string_view bytes);

// Aborts with `what` (and `detail`) on stderr when `condition` is false: libFuzzer reports the
// abort as a crash and saves the input.
void Require(bool condition, std::string_view what, std::string_view detail = "");

// Requires `text` to be valid UTF-8 and to parse as JSON (one document, or one per line when
// `lines`).
void RequireValidJson(std::string_view text, std::string_view what, bool lines = false);

// Redirects stderr to /dev/null while alive (the `reel` commands print a line per file), unless
// REEL_FUZZ_VERBOSE is set: scripts/fuzz reruns a crashing input with it to show the report.
class QuietStderr {
 public:
  QuietStderr();
  ~QuietStderr();
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  int saved_ = -1;
};

// Splits a fuzz input into a file name (the bytes before the first '\n', at most 64 bytes, with
// '/' and NUL replaced by '_'; "input" when empty; never "." or "..") and the rest.
struct NamedInput {
  std::string name;
  std::string_view body;
};
NamedInput SplitName(const uint8_t* data, size_t size);

}  // namespace reel::fuzz
