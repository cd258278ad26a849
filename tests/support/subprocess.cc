#include "tests/support/subprocess.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

namespace reel::testing {

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

static std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

// How long one command may run before it is taken as hung: REEL_TEST_COMMAND_SECONDS, else 300 s
// (540 s under the sanitizers), both below ctest's 600 s per test so that the test itself reports
// it.
double CommandDeadlineSeconds() {
  if (const char* set = std::getenv("REEL_TEST_COMMAND_SECONDS")) {
    char* end = nullptr;
    const double seconds = std::strtod(set, &end);
    if (end != set && seconds > 0) return seconds;
  }
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 540;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return 540;
#endif
#endif
  return 300;
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The process `root` and its descendants, parents first (from /proc).
std::vector<pid_t> ProcessTree(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
    const std::string stat = FirstLine(entry.path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t parent = 0;
    rest >> state >> parent;
    children[parent].push_back(static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> tree{root};
  for (size_t i = 0; i < tree.size(); ++i) {
    for (pid_t child : children[tree[i]]) tree.push_back(child);
  }
  return tree;
}

// What each process of a hung command is doing: its command line, each thread's kernel wait,
// and, where gdb is installed, every thread's stack. The processes are stopped first, so the
// picture is of one moment, deepest processes (the program itself, not its shell) described first.
std::string DescribeHang(pid_t root) {
  std::vector<pid_t> tree = ProcessTree(root);
  for (pid_t pid : tree) ::kill(pid, SIGSTOP);
  std::reverse(tree.begin(), tree.end());
  std::ostringstream out;
  const bool gdb = ::access("/usr/bin/gdb", X_OK) == 0;
  for (pid_t pid : tree) {
    const std::string proc = "/proc/" + std::to_string(pid);
    std::string cmdline;
    {
      std::ifstream in(proc + "/cmdline", std::ios::binary);
      cmdline.assign(std::istreambuf_iterator<char>(in), {});
      for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    }
    out << "--- process " << pid << ": " << cmdline << "\n";
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(proc + "/task", ec)) {
      out << "    thread " << task.path().filename().string() << " ("
          << FirstLine(task.path().string() + "/comm") << "): waits in "
          << FirstLine(task.path().string() + "/wchan") << "\n";
    }
    const std::string comm = FirstLine(proc + "/comm");
    if (gdb && comm != "sh" && comm != "bash") {
      const std::string stacks = "timeout 60 /usr/bin/gdb -p " + std::to_string(pid) +
                                 " -batch -ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)'";
      if (FILE* pipe = ::popen(stacks.c_str(), "r")) {
        char line[1024];
        while (std::fgets(line, sizeof line, pipe) != nullptr) out << "    " << line;
        ::pclose(pipe);
      }
    }
  }
  return out.str();
}

}  // namespace

CommandResult RunCommand(const std::string& command) {
  auto dir = std::filesystem::temp_directory_path();
  std::string stem = (dir / ("reel_cmd_" + std::to_string(::getpid()) + "_" +
                             std::to_string(reinterpret_cast<uintptr_t>(&command))))
                         .string();
  std::string out_path = stem + ".out", err_path = stem + ".err";
  std::string full =
      "(" + command + ") >" + ShellQuote(out_path) + " 2>" + ShellQuote(err_path) + " </dev/null";
  CommandResult result;
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.err = std::string("cannot start /bin/sh: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Waits for the shell until the deadline: on a pidfd, which is readable once it has exited
  // (Linux 5.3), else by looking every few milliseconds.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(CommandDeadlineSeconds());
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  int status = 0;
  std::string hang;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      hang = DescribeHang(pid);
      for (pid_t p : ProcessTree(pid)) ::kill(p, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    if (pidfd >= 0) {
      pollfd ready{pidfd, POLLIN, 0};
      ::poll(&ready, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  result.out = Slurp(out_path);
  result.err = Slurp(err_path);
  if (!hang.empty()) {
    std::ostringstream said_text;
    said_text << "the command ran longer than " << CommandDeadlineSeconds()
              << " s and was killed: " << command << "\n"
              << hang;
    const std::string said = said_text.str();
    ADD_FAILURE() << said;
    result.err += "\n" + said;
  }
  std::error_code ec;
  std::filesystem::remove(out_path, ec);
  std::filesystem::remove(err_path, ec);
  return result;
}

CommandResult RunInTerminal(const std::string& command) {
  CommandResult result;
  int master = -1;
  winsize size = {};
  size.ws_row = 50;
  size.ws_col = 200;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  if (pid < 0) return result;
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  char buffer[4096];
  while (true) {
    const ssize_t n = read(master, buffer, sizeof buffer);
    if (n > 0) {
      result.out.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the terminal's last writer has closed it
    }
  }
  close(master);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

}  // namespace reel::testing
