#include "tests/support/tokenizer_reference.h"

#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "tests/support/subprocess.h"
#include "tests/support/test_environment.h"

extern char** environ;

namespace fs = std::filesystem;

namespace reel::testing {
namespace {

fs::path ReferenceRoot() { return fs::path(REEL_BINARY_DIR) / "tokenizer-reference"; }

uint64_t Fnv(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::string Hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

uint64_t HashDocs(uint64_t h, const Docs& docs) {
  for (const std::string& d : docs) {
    uint64_t n = d.size();
    h = Fnv(h, &n, sizeof n);
    h = Fnv(h, d.data(), d.size());
  }
  return h;
}

// Runs the reference on files in the cache folder; the output is written once under `key`.
std::optional<std::string> Cached(const std::string& key, const std::string& input_bytes,
                                  const std::vector<std::string>& args_before_input,
                                  const std::string& flag_after_output, std::string* error) {
  fs::path cache = ReferenceRoot() / "cache";
  std::error_code ec;
  fs::create_directories(cache, ec);
  fs::path out = cache / (key + ".out");
  if (fs::exists(out)) return ReadFile(out.string());
  std::string tag = std::to_string(::getpid()) + "." + key;
  fs::path in = cache / (tag + ".in");
  fs::path tmp = cache / (tag + ".tmp");
  {
    std::ofstream f(in, std::ios::binary);
    f.write(input_bytes.data(), static_cast<std::streamsize>(input_bytes.size()));
  }
  std::vector<std::string> args = args_before_input;
  args.push_back(in.string());
  args.push_back(tmp.string());
  if (!flag_after_output.empty()) args.push_back(flag_after_output);
  bool ok = RunReference(args, error);
  fs::remove(in, ec);
  if (!ok) {
    fs::remove(tmp, ec);
    return std::nullopt;
  }
  fs::rename(tmp, out, ec);
  return ReadFile(out.string());
}

// `node encode.js serve`, started at this process's first question and kept for the next ones:
// a tokenizer file is loaded once per test process (Gemma's takes the library about 2 s), not
// once per question. Closed with the process (node ends when its input does).
class ReferenceServer {
 public:
  bool Ask(const std::vector<std::string>& args, std::string* error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (from_ == nullptr && !Start(error)) return false;
    const std::string request = nlohmann::json(args).dump() + "\n";
    std::string answer;
    if (::send(to_, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char line[4096];
      while (std::fgets(line, sizeof line, from_) != nullptr) {
        answer += line;
        if (answer.back() == '\n') break;
      }
    }
    if (answer == "ok\n") return true;
    if (error) {
      *error = answer.empty() ? "reference failed: node ended (see its messages above)"
                              : "reference failed: " + answer;
    }
    if (answer.empty()) Stop();
    return false;
  }
  ~ReferenceServer() { Stop(); }

 private:
  bool Start(std::string* error) {
    const std::string dir = TokenizerReferenceDir();
    if (dir.empty()) {
      if (error) *error = "the reference (node + npm tokenizers) is not available";
      return false;
    }
    // A socket pair rather than pipes: a write to a node that has died fails (MSG_NOSIGNAL)
    // instead of killing this process with SIGPIPE.
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
      if (error) *error = "reference failed: socketpair";
      return false;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, ends[1], 0);
    posix_spawn_file_actions_adddup2(&actions, ends[1], 1);
    std::vector<std::string> env_storage = {"NODE_PATH=" + dir + "/node_modules"};
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "NODE_PATH=", 10) != 0) env_storage.push_back(*e);
    }
    std::vector<char*> envp;
    for (std::string& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string script = std::string(REEL_SOURCE_DIR) + "/tests/llm/reference/encode.js";
    std::string node = "node", serve = "serve";
    char* argv[] = {node.data(), script.data(), serve.data(), nullptr};
    const int rc = posix_spawnp(&pid_, "node", &actions, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(ends[1]);
    if (rc != 0) {
      ::close(ends[0]);
      pid_ = -1;
      if (error) *error = "reference failed: node cannot be started";
      return false;
    }
    to_ = ends[0];
    from_ = ::fdopen(ends[0], "r");  // reads; requests are sent on the same socket
    return from_ != nullptr;
  }
  void Stop() {
    if (from_ != nullptr) std::fclose(from_);  // closes the socket: node's input ends
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
    to_ = -1;
    from_ = nullptr;
    pid_ = -1;
  }

  std::mutex mutex_;
  pid_t pid_ = -1;
  int to_ = -1;
  FILE* from_ = nullptr;
};

std::string DocsBytes(const Docs& docs) {
  std::string out;
  for (const std::string& d : docs) {
    auto n = static_cast<uint32_t>(d.size());
    out.append(reinterpret_cast<const char*>(&n), 4);
    out.append(d);
  }
  return out;
}

std::string IdListsBytes(const IdLists& lists) {
  std::string out;
  for (const auto& l : lists) {
    auto n = static_cast<uint32_t>(l.size());
    out.append(reinterpret_cast<const char*>(&n), 4);
    out.append(reinterpret_cast<const char*>(l.data()), l.size() * 4);
  }
  return out;
}

Docs ParseDocs(const std::string& b) {
  Docs docs;
  size_t off = 0;
  while (off + 4 <= b.size()) {
    uint32_t n;
    std::memcpy(&n, b.data() + off, 4);
    off += 4;
    docs.push_back(b.substr(off, n));
    off += n;
  }
  return docs;
}

IdLists ParseIdLists(const std::string& b) {
  IdLists lists;
  size_t off = 0;
  while (off + 4 <= b.size()) {
    uint32_t n;
    std::memcpy(&n, b.data() + off, 4);
    off += 4;
    std::vector<uint32_t> l(n);
    if (n > 0) std::memcpy(l.data(), b.data() + off, 4ull * n);  // (an empty list's data() is null)
    off += 4ull * n;
    lists.push_back(std::move(l));
  }
  return lists;
}

}  // namespace

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string TokenizerReferenceDir() {
  static const std::string dir = [] {
    fs::path root = ReferenceRoot();
    // npm runs with the user's HOME: its registry settings (~/.npmrc) and cache live there.
    const std::string home = UserHome();
    auto r =
        RunCommand((home.empty() ? "" : "HOME=" + ShellQuote(home) + " ") + "bash " +
                   ShellQuote(std::string(REEL_SOURCE_DIR) + "/scripts/fetch-tokenizer-reference") +
                   " " + ShellQuote(root.string()));
    if (r.exit_code != 0) return std::string();
    return root.string();
  }();
  return dir;
}

std::string ReferenceTokenizerFile(const std::string& name) {
  std::string dir = TokenizerReferenceDir();
  if (dir.empty()) return "";
  fs::path p = fs::path(dir) / "files" / (name + ".json");
  return fs::exists(p) ? p.string() : "";
}

std::vector<std::string> ReferenceTokenizerNames() {
  return {"gpt2", "llama3", "qwen3", "deepseek_v3", "gemma3", "gpt4o", "gptoss", "mistral_nemo"};
}

std::string TokenizerCorpusDir() {
  static const std::string dir = [] {
    fs::path d = fs::path(REEL_BINARY_DIR) / "tokenizer-corpus";
    if (fs::exists(d / "real.docs") && fs::exists(d / "synthetic.docs")) return d.string();
    std::error_code ec;
    fs::create_directories(d, ec);
    RunCommand("flock " + ShellQuote((d / ".lock").string()) + " python3 " +
               ShellQuote(std::string(REEL_SOURCE_DIR) + "/tests/llm/make_corpus.py") + " " +
               ShellQuote(d.string()));
    return fs::exists(d / "synthetic.docs") ? d.string() : std::string();
  }();
  return dir;
}

Docs ReadDocs(const std::string& path) { return ParseDocs(ReadFile(path)); }

void WriteDocs(const std::string& path, const Docs& docs) {
  std::ofstream f(path, std::ios::binary);
  std::string b = DocsBytes(docs);
  f.write(b.data(), static_cast<std::streamsize>(b.size()));
}

IdLists ReadIdLists(const std::string& path) { return ParseIdLists(ReadFile(path)); }

void WriteIdLists(const std::string& path, const IdLists& lists) {
  std::ofstream f(path, std::ios::binary);
  std::string b = IdListsBytes(lists);
  f.write(b.data(), static_cast<std::streamsize>(b.size()));
}

bool RunReference(const std::vector<std::string>& args, std::string* error) {
  static ReferenceServer server;
  return server.Ask(args, error);
}

std::optional<IdLists> ReferenceIds(const std::string& tokenizer_file, const Docs& docs,
                                    bool add_special_tokens, std::string* error) {
  std::string tok = ReadFile(tokenizer_file);
  uint64_t h = Fnv(0xcbf29ce484222325ull, tok.data(), tok.size());
  h = HashDocs(h, docs);
  std::string key = "ids-" + Hex(h) + (add_special_tokens ? "-special" : "");
  auto out = Cached(key, DocsBytes(docs), {"ids", tokenizer_file},
                    add_special_tokens ? "--add-special-tokens" : "", error);
  if (!out) return std::nullopt;
  return ParseIdLists(*out);
}

std::optional<Docs> ReferenceDecode(const std::string& tokenizer_file, const IdLists& ids,
                                    bool skip_special_tokens, std::string* error) {
  std::string tok = ReadFile(tokenizer_file);
  std::string input = IdListsBytes(ids);
  uint64_t h = Fnv(0xcbf29ce484222325ull, tok.data(), tok.size());
  h = Fnv(h, input.data(), input.size());
  std::string key = "decode-" + Hex(h) + (skip_special_tokens ? "-skip" : "");
  auto out = Cached(key, input, {"decode", tokenizer_file},
                    skip_special_tokens ? "--skip-special-tokens" : "", error);
  if (!out) return std::nullopt;
  return ParseDocs(*out);
}

std::optional<std::vector<Docs>> ReferencePreTokenize(const std::string& pre_tokenizer_json,
                                                      const Docs& docs, std::string* error) {
  uint64_t h = Fnv(0xcbf29ce484222325ull, pre_tokenizer_json.data(), pre_tokenizer_json.size());
  h = HashDocs(h, docs);
  auto out =
      Cached("pre-" + Hex(h), DocsBytes(docs), {"pretokenize", pre_tokenizer_json}, "", error);
  if (!out) return std::nullopt;
  std::vector<Docs> result;
  const std::string& b = *out;
  size_t off = 0;
  while (off + 4 <= b.size()) {
    uint32_t count;
    std::memcpy(&count, b.data() + off, 4);
    off += 4;
    Docs pieces;
    for (uint32_t k = 0; k < count; ++k) {
      uint32_t n;
      std::memcpy(&n, b.data() + off, 4);
      off += 4;
      pieces.push_back(b.substr(off, n));
      off += n;
    }
    result.push_back(std::move(pieces));
  }
  return result;
}

std::optional<Docs> ReferenceNormalize(const std::string& kind, const Docs& docs,
                                       std::string* error) {
  uint64_t h = Fnv(0xcbf29ce484222325ull, kind.data(), kind.size());
  h = HashDocs(h, docs);
  auto out = Cached("norm-" + Hex(h), DocsBytes(docs), {"normalize", kind}, "", error);
  if (!out) return std::nullopt;
  return ParseDocs(*out);
}

std::string TokenizerScratchDir() {
  fs::path d = fs::path(REEL_BINARY_DIR) / "tokenizer-scratch";
  std::error_code ec;
  fs::create_directories(d, ec);
  return d.string();
}

}  // namespace reel::testing
