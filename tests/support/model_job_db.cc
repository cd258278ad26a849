#include "tests/support/model_job_db.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/support/fake_model_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kLongClipArgs =
    "-f lavfi -i testsrc2=size=320x180:rate=10:duration=80 -c:v libx264 -pix_fmt yuv420p";
constexpr const char* kShortClipArgs =
    "-f lavfi -i testsrc2=size=320x180:rate=25:duration=12 -c:v libx264 -pix_fmt yuv420p";

constexpr const char* kJob =
    "name: reportjob\n"
    "inputs:\n"
    "  - media/*.mp4\n"
    "  - media/*.md\n"
    "sampling: {policy: fps, fps: 0.4}\n"
    "storage: {database: out.db}\n"
    "model:\n"
    "  endpoint: ${EP:-}\n"
    "  max_output_tokens: 256\n"
    "  concurrency: 2\n"
    "  stream: true\n"
    "  price: {input_per_million: 2.0, cached_input_per_million: 0.5, output_per_million: 8.0}\n"
    "prompts:\n"
    "  - id: describe\n"
    "    question: Describe what happens, with times.\n"
    "  - kind: chapters\n"
    "  - id: scenes\n"
    "    kind: chapters\n"
    "    question: Split this video into scenes, as chapters with MM:SS times.\n";

// Side-car subtitles: the first cue of each names its clip ("Alpha clip", ...), which is how the
// server script tells the items apart (texts with a space never occur in base64 frames).
constexpr const char* kSubtitlesA =
    "1\n00:00:00,500 --> 00:00:02,000\nAlpha clip: the bars & \"stripes\" scroll\n\n"
    "2\n00:00:07,000 --> 00:00:09,000\nThe counter passes seven\n";
constexpr const char* kSubtitlesB = "1\n00:00:01,000 --> 00:00:03,000\nBravo clip: bars\n";
constexpr const char* kSubtitlesC = "1\n00:00:01,000 --> 00:00:03,000\nCharlie clip: bars\n";
constexpr const char* kNotes = "# Notes\n\nThe clips are a test pattern.\n";

// Markers of the questions (the built-in chapters question says "into chapters"; the follow-up
// after a failed check "could not be used as chapters").
constexpr const char* kDescribe = "Describe what happens";
constexpr const char* kChapters = "into chapters";
constexpr const char* kScenes = "into scenes";
constexpr const char* kAskedAgain = "could not be used as chapters";

json Content(std::vector<std::string> match, const std::string& content, int times = 1) {
  return {{"kind", "content"}, {"match", match}, {"content", content}, {"times", times}};
}

json Script() {
  json script = json::array();
  json a_describe = Content({"Alpha clip", kDescribe}, kDescribeA);
  a_describe["seconds"] = 0.3;
  script.push_back(a_describe);
  script.push_back(Content({"Alpha clip", kChapters}, kChaptersA));
  script.push_back(Content({"Alpha clip", kScenes}, kScenesACutShort));
  script.push_back(Content({"Alpha clip", kScenes, kAskedAgain}, kScenesA));
  script.push_back(Content({"Bravo clip", kDescribe}, kDescribeB));
  script.push_back(Content({"Bravo clip", kChapters}, kChaptersBOverlapping, 2));
  script.push_back(Content({"Bravo clip", kScenes}, kScenesB));
  script.push_back({{"kind", "status"},
                    {"status", 503},
                    {"headers", {{"retry-after", "0.1"}}},
                    {"match", {"Charlie clip", kDescribe}}});
  script.push_back(Content({"Charlie clip", kChapters}, kChaptersCOutOfRange, 2));
  script.push_back(Content({"Charlie clip", kScenes}, kScenesCNotJson, 2));
  script.push_back(Content({"test pattern", kDescribe}, kDescribeNotes));
  return script;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// What the database depends on: the recipe, the binary, the fake server.
std::string Key(const std::string& reel_binary) {
  std::string material = std::string(kLongClipArgs) + kShortClipArgs + kJob + kSubtitlesA +
                         kSubtitlesB + kSubtitlesC + kNotes + Script().dump();
  for (const std::string& file : {reel_binary, FakeModelServer::ScriptPath()}) {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) {
      material += "|" + file + ":" + std::to_string(st.st_size) + ":" +
                  std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    }
  }
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016zx", std::hash<std::string>()(material));
  return hash;
}

// Holds an exclusive flock on `path` while alive.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

ModelJobDb Load(const fs::path& dir) {
  ModelJobDb r;
  r.dir = dir.string();
  r.db = (dir / "out.db").string();
  r.run_exit_code = std::atoi(ReadFile(dir / "run.exit").c_str());
  r.run_err = ReadFile(dir / "run.err");
  r.server_log = ReadFile(dir / "server_log.json");
  return r;
}

std::string Build(const fs::path& dir, const std::string& reel_binary) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir / "media", ec);
  if (ec) return "cannot create " + dir.string() + ": " + ec.message();
  const std::string long_clip = GeneratedMedia("model_job_80s.mp4", kLongClipArgs);
  const std::string short_clip = GeneratedMedia("model_job_12s.mp4", kShortClipArgs);
  if (long_clip.empty() || short_clip.empty()) return "ffmpeg could not generate the clips";
  fs::copy_file(long_clip, dir / "media/a.mp4", ec);
  if (!ec) fs::copy_file(short_clip, dir / "media/b.mp4", ec);
  if (!ec) fs::copy_file(short_clip, dir / "media/c.mp4", ec);
  if (ec) return "cannot copy the clips: " + ec.message();
  WriteFile(dir / "media/a.srt", kSubtitlesA);
  WriteFile(dir / "media/b.srt", kSubtitlesB);
  WriteFile(dir / "media/c.srt", kSubtitlesC);
  WriteFile(dir / "media/notes.md", kNotes);
  WriteFile(dir / "job.yaml", kJob);

  FakeModelServer server;
  if (!server.started()) return "the fake model server did not start";
  server.Script(Script().dump());
  CommandResult run =
      RunCommand("cd " + ShellQuote(dir.string()) + " && EP=" + ShellQuote(server.endpoint()) +
                 " " + ShellQuote(reel_binary) + " run job.yaml");
  WriteFile(dir / "run.err", run.err);
  WriteFile(dir / "run.exit", std::to_string(run.exit_code));
  WriteFile(dir / "server_log.json", server.Log());
  WriteFile(dir / "complete", "");
  return "";
}

}  // namespace

const ModelJobDb& SharedModelJobDb(const std::string& reel_binary) {
  static const ModelJobDb shared = [&] {
    const fs::path base = fs::path(REEL_BINARY_DIR) / "test-fixtures";
    std::error_code ec;
    fs::create_directories(base, ec);
    const fs::path dir = base / ("model-job-" + Key(reel_binary));
    FileLock lock((base / ".lock").string());
    if (!fs::exists(dir / "complete")) {
      // Folders made for an earlier binary or recipe go.
      for (const auto& entry : fs::directory_iterator(base, ec)) {
        if (entry.path().filename().string().starts_with("model-job-")) {
          fs::remove_all(entry.path(), ec);
        }
      }
      if (std::string error = Build(dir, reel_binary); !error.empty()) {
        ModelJobDb failed;
        failed.error = error;
        return failed;
      }
    }
    return Load(dir);
  }();
  return shared;
}

}  // namespace reel::testing
