#include "tests/support/test_media.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <vector>

#include "tests/support/subprocess.h"

namespace fs = std::filesystem;

namespace reel::testing {

std::string GeneratedMedia(const std::string& name, const std::string& ffmpeg_args) {
  fs::path dir = fs::path(REEL_BINARY_DIR) / "test-media";
  std::error_code ec;
  fs::create_directories(dir, ec);
  // The arguments' hash is part of the cached name, so changing a recipe regenerates the clip.
  fs::path stem = fs::path(name).stem(), ext = fs::path(name).extension();
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016zx", std::hash<std::string>()(ffmpeg_args));
  fs::path path = dir / (stem.string() + "-" + hash + ext.string());
  if (fs::exists(path)) return path.string();
  fs::path tmp = dir / (".tmp." + std::to_string(::getpid()) + "." + path.filename().string());
  auto result = RunCommand("ffmpeg -y -hide_banner -loglevel error " + ffmpeg_args + " " +
                           ShellQuote(tmp.string()));
  if (result.exit_code != 0) {
    ADD_FAILURE() << "ffmpeg failed to generate " << name << ": " << result.err;
    fs::remove(tmp, ec);
    return "";
  }
  fs::rename(tmp, path, ec);
  if (ec) ADD_FAILURE() << "cannot rename " << tmp << ": " << ec.message();
  return path.string();
}

namespace {

// The scratch folders this process made, removed when it exits with every test passed (a failed
// or crashed test keeps its files to look at; so does REEL_KEEP_SCRATCH=1). Without this, every
// test run left its files behind: 2 GB after a few dozen runs.
struct ScratchRegistry {
  std::mutex mutex;
  std::vector<fs::path> dirs;
  pid_t owner = ::getpid();
};

ScratchRegistry& Scratch() {
  static ScratchRegistry* registry = new ScratchRegistry;  // outlives the atexit handler
  return *registry;
}

void RemoveScratchIfPassed() {
  ScratchRegistry& registry = Scratch();
  if (::getpid() != registry.owner) return;  // a forked child exiting
  const char* keep = std::getenv("REEL_KEEP_SCRATCH");
  if (keep != nullptr && *keep != '\0' && std::string(keep) != "0") return;
  if (!::testing::UnitTest::GetInstance()->Passed()) return;
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const fs::path& dir : registry.dirs) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
}

}  // namespace

std::string ScratchDir(const std::string& test_name) {
  // One folder per test process: ctest runs each test case as its own process, in parallel, so
  // two cases of one suite must never share (and wipe) each other's folder.
  fs::path dir =
      fs::path(REEL_BINARY_DIR) / "test-scratch" / (test_name + "." + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  static const bool registered = [] {
    std::atexit(RemoveScratchIfPassed);
    return true;
  }();
  (void)registered;
  ScratchRegistry& registry = Scratch();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (std::find(registry.dirs.begin(), registry.dirs.end(), dir) == registry.dirs.end()) {
    registry.dirs.push_back(dir);
  }
  return dir.string();
}

std::string RealMedia(const std::string& name) {
  fs::path dir = fs::path(REEL_BINARY_DIR) / "real-media";
  if (!fs::exists(dir / name)) {
    // flock keeps parallel test processes from fetching at once.
    RunCommand("mkdir -p " + ShellQuote(dir.string()) + " && flock " +
               ShellQuote((dir / ".lock").string()) + " bash " +
               ShellQuote(std::string(REEL_SOURCE_DIR) + "/scripts/fetch-real-media") + " " +
               ShellQuote(dir.string()));
  }
  return fs::exists(dir / name) ? (dir / name).string() : "";
}

std::string DebianPackageFile(const std::string& package, const std::string& path_in_package,
                              const std::string& name) {
  return DebianPackageFiles(package, {{path_in_package, name}}).front();
}

std::vector<std::string> DebianPackageFiles(
    const std::string& package, const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path dir = fs::path(REEL_BINARY_DIR) / "debian-media";
  std::string pairs;
  for (const auto& [path_in_package, name] : files) {
    const fs::path dest = dir / name;
    if (fs::exists(dest)) continue;
    std::error_code ec;
    fs::create_directories(dest.parent_path(), ec);
    pairs += " " + ShellQuote(path_in_package) + " " + ShellQuote(dest.string());
  }
  if (!pairs.empty()) {
    RunCommand("bash " + ShellQuote(std::string(REEL_SOURCE_DIR) + "/scripts/fetch-deb-file") +
               " " + ShellQuote(package) + pairs);
  }
  std::vector<std::string> paths;
  for (const auto& [path_in_package, name] : files) {
    const fs::path dest = dir / name;
    paths.push_back(fs::exists(dest) ? dest.string() : "");
  }
  return paths;
}

std::string SharedMediaDir() {
  fs::path dir = fs::path(REEL_SOURCE_DIR).parent_path() / "shared" / "media";
  if (fs::is_directory(dir)) return dir.string();
  return "";
}

// The pattern: a 4x4 grid of blocks, row-major index b. Block 0 is always white and block 3
// always black (they fix the orientation); the other 14 blocks carry bits 0..13 of the frame
// number, white for 1.
std::string CounterClipArgs(int frames, int width, int height, const std::string& fps) {
  std::string b = "(4*floor(4*Y/H)+floor(4*X/W))";
  std::string k = "(" + b + "-1-gte(" + b + ",4))";
  std::string lum =
      "if(eq(" + b + ",0),235,if(eq(" + b + ",3),16,16+219*mod(floor(N/pow(2," + k + ")),2)))";
  // Painted at 8x8 (geq is slow per pixel), then scaled up without filtering. setsar=1: square
  // pixels (the scale filter would otherwise keep the 8x8 picture's square shape with a sample
  // aspect ratio, and the clip would be shown, and sampled, square).
  return "-f lavfi -i color=c=black:s=8x8:r=" + fps + " -frames:v " + std::to_string(frames) +
         " -vf \"geq=lum='" + lum + "':cb=128:cr=128,scale=" + std::to_string(width) + "x" +
         std::to_string(height) + ":flags=neighbor,setsar=1\"";
}

int DecodeCounter(const unsigned char* rgb, int width, int height, int stride) {
  auto block = [&](int b) {
    int r = b / 4, c = b % 4;
    int x = (2 * c + 1) * width / 8, y = (2 * r + 1) * height / 8;
    const unsigned char* p = rgb + static_cast<size_t>(y) * stride + 3 * x;
    int luma = (p[0] + p[1] + p[2]) / 3;
    return luma >= 128;
  };
  if (!block(0) || block(3)) return -1;
  int value = 0;
  for (int b = 0; b < 16; ++b) {
    if (b == 0 || b == 3) continue;
    int k = b - 1 - (b >= 4 ? 1 : 0);
    if (block(b)) value |= 1 << k;
  }
  return value;
}

}  // namespace reel::testing
