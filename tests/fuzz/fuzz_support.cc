#include "tests/fuzz/fuzz_support.h"

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/utf8.h"

namespace reel::fuzz {
namespace {

class Scratch {
 public:
  Scratch() {
    std::string base = "/tmp";
    if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') {
      base = tmp;
    } else if (std::filesystem::is_directory("/dev/shm")) {
      base = "/dev/shm";
    }
    std::string pattern = base + "/reel-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("reel fuzz: mkdtemp");
      std::abort();
    }
    path_ = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

const std::string& ScratchDir() {
  static Scratch scratch;
  return scratch.path();
}

std::string WriteScratchFile(const std::string& name, std::string_view bytes) {
  const std::string path = ScratchDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  Require(out.good(), "could not write the scratch file", path);
  return path;
}

void Require(bool condition, std::string_view what, std::string_view detail) {
  if (condition) return;
  std::fprintf(stderr, "\nreel fuzz: invariant broken: %.*s\n", static_cast<int>(what.size()),
               what.data());
  if (!detail.empty()) {
    const std::string shown = EscapeInvalidUtf8(detail.substr(0, 2000));
    std::fprintf(stderr, "  %s\n", shown.c_str());
  }
  std::abort();
}

void RequireValidJson(std::string_view text, std::string_view what, bool lines) {
  Require(IsValidUtf8(text), what, text);
  auto parse = [&](std::string_view document) {
    Require(nlohmann::json::accept(document), what, document);
  };
  if (!lines) {
    parse(text);
    return;
  }
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) parse(text.substr(pos, end - pos));
    pos = end + 1;
  }
}

QuietStderr::QuietStderr() {
  if (std::getenv("REEL_FUZZ_VERBOSE") != nullptr) return;
  std::fflush(stderr);
  saved_ = dup(STDERR_FILENO);
  const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (saved_ < 0 || null < 0) {
    if (null >= 0) close(null);
    return;
  }
  dup2(null, STDERR_FILENO);
  close(null);
}

QuietStderr::~QuietStderr() {
  if (saved_ < 0) return;
  std::fflush(stderr);
  dup2(saved_, STDERR_FILENO);
  close(saved_);
}

NamedInput SplitName(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t newline = all.find('\n');
  std::string_view name_part;
  NamedInput input;
  input.body = all;
  if (newline != std::string_view::npos && newline <= 64) {
    name_part = all.substr(0, newline);
    input.body = all.substr(newline + 1);
  }
  for (char c : name_part) input.name += (c == '/' || c == '\0') ? '_' : c;
  if (input.name.empty() || input.name == "." || input.name == "..") input.name = "input";
  return input;
}

}  // namespace reel::fuzz
