// Office files through LibreOffice: `soffice --headless --convert-to pdf` into a private
// temporary folder (its own user profile, so it never meets a running LibreOffice), then the PDF
// reader on the result, so the pages are the laid-out pages with their pictures. Without soffice
// on PATH, or when the conversion fails, the XML text reader runs and the report says why there
// are no pictures.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "base/utf8.h"
#include "pipeline/documents/internal/format_reader.h"

extern char** environ;

namespace reel::pipeline::documents {
namespace {

std::string FindOnPath(const std::string& command) {
  if (command.find('/') != std::string::npos) {
    return ::access(command.c_str(), X_OK) == 0 ? command : "";
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(start, end - start) + "/" + command;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "reel-office.XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs argv with a deadline; returns the exit status, or an error past the deadline.
Result<int> RunWithDeadline(const std::vector<std::string>& args, double seconds) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return IoError("cannot start " + args[0] + ": " + std::strerror(rc));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return LimitExceeded("soffice took longer than " + std::to_string(static_cast<int>(seconds)) +
                           " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class OfficeRenderer : public FormatReader {
 public:
  explicit OfficeRenderer(std::unique_ptr<FormatReader> text_reader)
      : text_reader_(std::move(text_reader)) {}

  Status Read(const std::string& path, PageOutput& out) override {
    DocumentReport& report = out.report();
    const std::string soffice = FindOnPath(out.options().soffice);
    if (soffice.empty()) {
      report.notes.push_back("text only: office_render needs LibreOffice (" +
                             out.options().soffice +
                             " is not on PATH; apt-get install libreoffice-core-nogui "
                             "libreoffice-writer-nogui libreoffice-impress-nogui)");
      return text_reader_->Read(path, out);
    }
    TempDir dir;
    if (dir.path().empty()) return IoError(out.name() + ": cannot make a temporary folder");
    const std::filesystem::path input = std::filesystem::absolute(path);
    Result<int> rc =
        RunWithDeadline({soffice, "--headless", "--norestore", "--nologo",
                         "-env:UserInstallation=file://" + dir.path() + "/profile", "--convert-to",
                         "pdf", "--outdir", dir.path() + "/out", input.string()},
                        out.options().limits.time_limit_s);
    const std::string pdf = dir.path() + "/out/" + input.stem().string() + ".pdf";
    if (!rc.ok() || *rc != 0 || !std::filesystem::exists(pdf)) {
      report.notes.push_back(
          "text only: LibreOffice could not convert the file (" +
          (rc.ok() ? "exit status " + std::to_string(*rc) : rc.status().message()) + ")");
      return text_reader_->Read(path, out);
    }
    report.notes.push_back("pages laid out by LibreOffice");
    return MakePdfReader()->Read(pdf, out);
  }

 private:
  std::unique_ptr<FormatReader> text_reader_;
};

}  // namespace

std::unique_ptr<FormatReader> MakeOfficeRenderer(std::unique_ptr<FormatReader> text_reader) {
  return std::make_unique<OfficeRenderer>(std::move(text_reader));
}

}  // namespace reel::pipeline::documents
