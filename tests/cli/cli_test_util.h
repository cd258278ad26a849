// Helpers for the end-to-end tests of `reel`: running the binary, building job directories,
// reading the results database back through `reel query --format json`.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/sqlite_rows.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

extern char** environ;

namespace reel::testing {

inline std::string ReelPath() { return REEL_BINARY; }

// Runs `reel ARGS` (ARGS is shell text) in `dir`.
inline CommandResult Reel(const std::string& args, const std::string& dir = "") {
  std::string command = ShellQuote(ReelPath()) + " " + args;
  if (!dir.empty()) command = "cd " + ShellQuote(dir) + " && " + command;
  return RunCommand(command);
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Rows of `sql` on `db` as JSON objects, as `reel query --format json` gives them, read with
// SQLite in this process (fails the test on error). `reel query` itself is tested in
// tests/cli/query_itest.cc.
inline nlohmann::json QueryJson(const std::string& db, const std::string& sql) {
  std::string error;
  std::optional<nlohmann::json> rows = SqliteRows(db, sql, &error);
  EXPECT_TRUE(rows.has_value()) << sql << "\n" << error;
  return rows.value_or(nlohmann::json::array());
}

inline int64_t QueryInt(const std::string& db, const std::string& sql) {
  nlohmann::json rows = QueryJson(db, sql);
  if (rows.empty()) return -1;
  return rows[0].begin()->get<int64_t>();
}

// For polling a database a run is writing: the first column of the first row, or nullopt (and no
// test failure) while the file or its tables are not there yet.
inline std::optional<int64_t> PollInt(const std::string& db, const std::string& sql) {
  std::string error;
  std::optional<nlohmann::json> rows = SqliteRows(db, sql, &error);
  if (!rows || rows->empty() || !rows->front().begin()->is_number_integer()) return std::nullopt;
  return rows->front().begin()->get<int64_t>();
}

// How many times `what` occurs in `text` (not overlapping), from `from` up to `to`.
inline size_t CountOccurrences(const std::string& text, const std::string& what, size_t from = 0,
                               size_t to = std::string::npos) {
  size_t n = 0;
  for (size_t at = text.find(what, from); at != std::string::npos && at < to;
       at = text.find(what, at + what.size())) {
    ++n;
  }
  return n;
}

// The last JSON line on `err` (the run_finished record of --log-format json).
inline nlohmann::json LastJsonLine(const std::string& err) {
  std::string last;
  size_t pos = 0;
  while (pos < err.size()) {
    size_t end = err.find('\n', pos);
    if (end == std::string::npos) end = err.size();
    if (end > pos && err[pos] == '{') last = err.substr(pos, end - pos);
    pos = end + 1;
  }
  if (last.empty()) return nlohmann::json::object();
  return nlohmann::json::parse(last);
}

// A small H.264 clip (moov at the end), generated once per build tree.
inline std::string SmallClip(int seconds = 3, const std::string& size = "320x180") {
  return GeneratedMedia("run_clip_" + size + "_" + std::to_string(seconds) + ".mp4",
                        "-f lavfi -i testsrc2=size=" + size + ":rate=25:duration=" +
                            std::to_string(seconds) + " -c:v libx264 -pix_fmt yuv420p");
}

// A `reel` process started in the background (fork/exec), killed and reaped on destruction.
class ReelProcess {
 public:
  ReelProcess(const std::vector<std::string>& args, const std::string& stderr_path) {
    std::vector<std::string> argv_storage = {ReelPath()};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~ReelProcess() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }
  ReelProcess(const ReelProcess&) = delete;
  ReelProcess& operator=(const ReelProcess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig) { kill(pid_, sig); }
  // The exit code, or 128 + signal; `usage`, if given, gets the process's resource use (peak
  // memory: ru_maxrss, KiB) when this call reaps it.
  int Wait(rusage* usage = nullptr) {
    if (reaped_) return status_;
    int status = 0;
    while (wait4(pid_, &status, 0, usage) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return status_;
  }
  // Whether the process is still running (reaps it if it has ended).
  bool Running() {
    if (reaped_) return false;
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == 0) return true;
    if (r == pid_) {
      reaped_ = true;
      status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1;
};

// Waits until `predicate` holds or `timeout` passes; returns whether it held.
template <typename Predicate>
bool WaitFor(Predicate predicate, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return predicate();
}

}  // namespace reel::testing
