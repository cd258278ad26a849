#include "tests/support/fake_model_server.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "tests/support/subprocess.h"

namespace reel::testing {
namespace {

// Debian's interpreter (installed by scripts/setup) when present: a version-manager shim on
// PATH can add half a second to every start.
std::string Python() {
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

std::vector<std::string> Arguments(const FakeServerOptions& o) {
  std::vector<std::string> args = {
      Python(),          FakeModelServer::ScriptPath(),  "--mode", o.mode, "--model", o.model,
      "--max-model-len", std::to_string(o.max_model_len)};
  if (!o.api_key.empty()) {
    args.push_back("--api-key");
    args.push_back(o.api_key);
  }
  for (const auto& a : o.extra_args) args.push_back(a);
  return args;
}

size_t Collect(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

}  // namespace

std::string FakeModelServer::ScriptPath() {
  return std::string(REEL_SOURCE_DIR) + "/tests/support/fake_openai_server.py";
}

FakeModelServer::FakeModelServer(FakeServerOptions options) : options_(std::move(options)) {
  int fds[2];
  if (pipe(fds) != 0) return;
  const std::vector<std::string> args = Arguments(options_);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  pid_ = pid;
  // Wait (up to 20 s) for "PORT <n>".
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && line.find('\n') == std::string::npos) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buffer[256];
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    line.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (line.rfind("PORT ", 0) == 0) port_ = std::atoi(line.c_str() + 5);
}

FakeModelServer::~FakeModelServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

std::string FakeModelServer::root() const { return "http://127.0.0.1:" + std::to_string(port_); }
std::string FakeModelServer::endpoint() const { return root() + "/v1"; }

std::string FakeModelServer::Call(const std::string& method, const std::string& path,
                                  const std::string& body) {
  std::string out;
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return out;
  const std::string url = root() + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 20L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out);
  if (method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_easy_perform(curl);
  curl_easy_cleanup(curl);
  return out;
}

void FakeModelServer::Script(const std::string& json_list) {
  Call("POST", "/_fake/script", json_list);
}
void FakeModelServer::Reset() { Call("POST", "/_fake/reset", "{}"); }
std::string FakeModelServer::Log() { return Call("GET", "/_fake/log", ""); }

std::vector<nlohmann::json> FakeModelServer::ChatLog() {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : nlohmann::json::parse(Log())) {
    if (e.value("path", "") == "/v1/chat/completions") out.push_back(e);
  }
  return out;
}

int FakeModelServer::TranscriptionUploads() {
  int n = 0;
  for (const nlohmann::json& e : nlohmann::json::parse(Log())) {
    n += e.value("path", "") == "/v1/audio/transcriptions";
  }
  return n;
}

int FakeModelServer::RunBatch(const FakeServerOptions& options, const std::string& input_path,
                              const std::string& output_path) {
  std::string command;
  for (const auto& a : Arguments(options)) command += ShellQuote(a) + " ";
  command +=
      "--batch-input " + ShellQuote(input_path) + " --batch-output " + ShellQuote(output_path);
  return RunCommand(command).exit_code;
}

}  // namespace reel::testing
