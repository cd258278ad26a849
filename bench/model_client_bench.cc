// The model client against the fake OpenAI-compatible server on loopback, with named baselines
// in the same run, as ratios (above 1: Reel is better).
//
//   sequential: N small chat requests one after another over one kept-alive connection:
//               Reel's ModelClient::Chat vs Python's http.client (bench/http_baseline.py: the
//               same body bytes, each answer parsed as JSON) and vs the curl command line, one
//               process per request (`curl -s --data-binary @body URL` in a shell loop).
//   concurrent: the same with 8 requests in flight (8 threads on one ModelClient vs 8 Python
//               threads, each with its own connection).
//   big:        100 requests of a 1M-token shape in flight at once (1,456 frames of --frame-kib
//               KiB each as base64 image parts, streamed from a file), the server reading and
//               discarding the bodies (--sink-bodies): Reel's memory high-water mark against the
//               bytes in flight (a client that built each body as one string would hold them).
//
// Figures: requests per second (wall) and client CPU per request (user + system of the client
// process only: the fake server is another process). Both sides talk to the same server; it is
// Python, so requests per second are bounded by it and the CPU figure is the client's own cost.
//
// Usage: model_client_bench [--requests N] [--curl-requests N] [--runs N]
//                           [--sections sequential,concurrent,big] [--big-requests N]
//                           [--frame-kib K]
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "llm/client/model_client.h"

namespace {

namespace fs = std::filesystem;
using reel::bench::Clock;
using reel::bench::Median;
using reel::bench::Seconds;
using reel::bench::ShellQuote;

struct Settings {
  int requests = 2000;
  int curl_requests = 200;
  int runs = 3;
  int big_requests = 100;
  int big_frames = 1456;  // 1,456 frames x 720 tokens = 1,048,320 tokens
  int frame_kib = 80;     // a 560x1008 JPEG is 60-100 KiB
  std::string sections = "sequential,concurrent,big";
};

double CpuSeconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec / 1e6;
}

long MaxRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// Debian's interpreter when present (a version-manager shim on PATH is slower to start).
std::string Python() {
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

// The fake server as a child process; stopped by the destructor.
class FakeServer {
 public:
  explicit FakeServer(const std::vector<std::string>& extra) {
    int fds[2];
    if (pipe(fds) != 0) return;
    std::vector<std::string> args = {
        Python(), std::string(REEL_SOURCE_DIR) + "/tests/support/fake_openai_server.py", "--mode",
        "vllm", "--no-log"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    std::string line;  // "PORT <n>\n", possibly in several reads
    char buffer[64];
    ssize_t n;
    while (line.find('\n') == std::string::npos && (n = read(fds[0], buffer, sizeof(buffer))) > 0) {
      line.append(buffer, static_cast<size_t>(n));
    }
    close(fds[0]);
    if (line.rfind("PORT ", 0) == 0) port_ = std::atoi(line.c_str() + 5);
  }
  ~FakeServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool ok() const { return port_ > 0; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// A typical small request: a system prompt, ~100 words of question, a short answer.
const char* kMessages =
    R"([{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":)"
    R"([{"type":"text","text":"Subtitles 00:00-01:00: the speaker introduces the harbour, the )"
    R"(boats that leave at dawn, the fish market and the people who work there. She explains )"
    R"(how the catch is sorted, weighed and sold, and why prices change with the season. Then )"
    R"(she walks to the old lighthouse and talks about the storms of the last winter."},)"
    R"({"type":"text","text":"Question: what are the three places the speaker visits, in )"
    R"(order? Answer in one sentence."}]}])";

reel::llm::ChatRequest SmallRequest() {
  reel::llm::ChatRequest r;
  r.messages = std::make_shared<reel::llm::StringBody>(kMessages);
  r.max_completion_tokens = 64;
  r.temperature = 1.0;
  r.top_p = 0.95;
  r.top_k = 40;
  r.thinking_mode = "disabled";
  return r;
}

struct Figure {
  double wall = 0;  // seconds
  double cpu = 0;   // client CPU seconds
  int requests = 0;
  int ok = 0;
  double rps() const { return wall > 0 ? requests / wall : 0; }
  double cpu_us() const { return requests > 0 ? cpu / requests * 1e6 : 0; }
};

Figure RunReel(reel::llm::ModelClient& client, int total, int threads) {
  const reel::llm::ChatRequest req = SmallRequest();
  std::atomic<int> ok{0};
  const double cpu0 = CpuSeconds(RUSAGE_SELF);
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = 0; i < total / threads; ++i) ok += client.Chat(req).ok();
    });
  }
  for (auto& t : pool) t.join();
  Figure f;
  f.wall = Seconds(t0);
  f.cpu = CpuSeconds(RUSAGE_SELF) - cpu0;
  f.requests = total / threads * threads;
  f.ok = ok;
  return f;
}

// Python's http.client: the script times its own loop.
Figure RunPython(const std::string& url, const std::string& body_path, int total, int threads) {
  const std::string out = reel::bench::OutputOf(
      Python() + " " + ShellQuote(std::string(REEL_SOURCE_DIR) + "/bench/http_baseline.py") + " " +
      ShellQuote(url) + " " + ShellQuote(body_path) + " " + std::to_string(total) + " " +
      std::to_string(threads));
  Figure f;
  std::istringstream in(out);
  in >> f.requests >> f.ok >> f.wall >> f.cpu;
  return f;
}

// The curl command line, one process per request, in one shell loop (its CPU: the children's).
Figure RunCurl(const std::string& url, const std::string& body_path, int total) {
  const std::string command = "i=0; while [ $i -lt " + std::to_string(total) +
                              " ]; do curl -s -H 'Content-Type: application/json' --data-binary @" +
                              ShellQuote(body_path) + " " + ShellQuote(url) +
                              " > /dev/null || exit 1; i=$((i+1)); done";
  const double cpu0 = CpuSeconds(RUSAGE_CHILDREN);
  const auto t0 = Clock::now();
  const int status = std::system(command.c_str());
  Figure f;
  f.wall = Seconds(t0);
  f.cpu = CpuSeconds(RUSAGE_CHILDREN) - cpu0;
  f.requests = total;
  f.ok = status == 0 ? total : 0;
  return f;
}

void Print(const char* name, const Figure& f) {
  std::printf("  %-34s %6d req  %8.0f req/s  %8.1f us CPU/req  (%d ok)\n", name, f.requests,
              f.rps(), f.cpu_us(), f.ok);
}

void Ratio(const char* what, const std::vector<Figure>& reel, const std::vector<Figure>& base) {
  std::vector<double> rps, cpu;
  for (size_t i = 0; i < reel.size() && i < base.size(); ++i) {
    rps.push_back(reel[i].rps() / base[i].rps());
    cpu.push_back(base[i].cpu_us() / reel[i].cpu_us());
  }
  std::printf("  ratio vs %-24s req/s %.2fx   CPU per request %.2fx   (median of %zu)\n", what,
              Median(rps), Median(cpu), rps.size());
}

bool Has(const Settings& s, const std::string& section) {
  return ("," + s.sections + ",").find("," + section + ",") != std::string::npos;
}

int Small(const Settings& s, const fs::path& tmp) {
  FakeServer server({});
  if (!server.ok()) {
    std::fprintf(stderr, "cannot start the fake server (python3)\n");
    return 1;
  }
  // The exact body Reel sends, for the baselines.
  auto body = reel::llm::BuildChatBody(reel::llm::VllmDialect(), "MiniMax-M3", SmallRequest());
  const std::string body_path = (tmp / "body.json").string();
  std::ofstream(body_path, std::ios::binary) << *reel::llm::ReadAll(**body);
  const std::string url = server.endpoint() + "/chat/completions";

  reel::llm::ModelClientOptions o;
  o.endpoint = server.endpoint();
  o.dialect = "vllm";
  auto client = std::move(reel::llm::ModelClient::Create(o)).value();
  RunReel(*client, 50, 1);  // warm up the connection and the server

  if (Has(s, "sequential")) {
    std::printf("\nsequential (one request at a time, %d requests, body %zu bytes)\n", s.requests,
                static_cast<size_t>(std::filesystem::file_size(body_path)));
    std::vector<Figure> reel, python, curl;
    for (int run = 0; run < s.runs; ++run) {
      reel.push_back(RunReel(*client, s.requests, 1));
      python.push_back(RunPython(url, body_path, s.requests, 1));
      curl.push_back(RunCurl(url, body_path, s.curl_requests));
      Print("Reel ModelClient::Chat", reel.back());
      Print("Python http.client (keep-alive)", python.back());
      Print("curl CLI (a process per request)", curl.back());
    }
    Ratio("Python http.client", reel, python);
    Ratio("curl CLI", reel, curl);
  }
  if (Has(s, "concurrent")) {
    std::printf("\nconcurrent (8 in flight, %d requests)\n", s.requests);
    std::vector<Figure> reel, python;
    for (int run = 0; run < s.runs; ++run) {
      reel.push_back(RunReel(*client, s.requests, 8));
      python.push_back(RunPython(url, body_path, s.requests, 8));
      Print("Reel, 8 threads, one client", reel.back());
      Print("Python http.client, 8 threads", python.back());
    }
    Ratio("Python http.client", reel, python);
  }
  return 0;
}

int Big(const Settings& s, const fs::path& tmp) {
  FakeServer server({"--sink-bodies"});
  if (!server.ok()) return 1;
  const std::string frame = (tmp / "frame.jpg").string();
  {
    std::mt19937 rng(1);
    std::string bytes(static_cast<size_t>(s.frame_kib) * 1024, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::ofstream(frame, std::ios::binary) << bytes;
  }
  std::vector<reel::llm::ChatRequest> requests;
  int64_t body_bytes = 0;
  for (int i = 0; i < s.big_requests; ++i) {
    auto m = std::make_shared<reel::llm::ComposedBody>();
    m->AddText(R"([{"role":"user","content":[)");
    for (int f = 0; f < s.big_frames; ++f) {
      m->AddText(R"({"type":"text","text":"]<]t seconds[>["},)"
                 R"({"type":"image_url","image_url":{"url":"data:image/jpeg;base64,)");
      if (!m->AddBase64OfFile(frame).ok()) return 1;
      m->AddText(R"("}},)");
    }
    m->AddText(R"({"type":"text","text":"Question )" + std::to_string(i) + R"("}]}])");
    reel::llm::ChatRequest r;
    r.messages = m;
    r.max_completion_tokens = 64;
    body_bytes = m->Size();
    requests.push_back(std::move(r));
  }
  reel::llm::ModelClientOptions o;
  o.endpoint = server.endpoint();
  o.dialect = "vllm";
  o.max_connections = s.big_requests;
  auto client = std::move(reel::llm::ModelClient::Create(o)).value();
  const long rss_before = MaxRssMiB();
  const double cpu0 = CpuSeconds(RUSAGE_SELF);
  const auto t0 = Clock::now();
  std::atomic<int> ok{0};
  std::atomic<int64_t> sent{0};
  std::vector<std::thread> pool;
  for (auto& r : requests) {
    pool.emplace_back([&] {
      reel::llm::ChatResult result = client->Chat(r);
      ok += result.ok();
      sent += result.request_bytes;
    });
  }
  for (auto& t : pool) t.join();
  const double wall = Seconds(t0), cpu = CpuSeconds(RUSAGE_SELF) - cpu0;
  const long rss_after = MaxRssMiB();
  const double in_flight_mib = static_cast<double>(body_bytes) * s.big_requests / (1 << 20);
  std::printf("\nbig (%d requests at once, %d frames of %d KiB each: %.0f MiB per body)\n",
              s.big_requests, s.big_frames, s.frame_kib, body_bytes / 1048576.0);
  std::printf("  %d ok, %.2f GiB sent in %.1f s (%.0f MiB/s), client CPU %.1f s\n", ok.load(),
              sent.load() / 1073741824.0, wall, sent.load() / 1048576.0 / wall, cpu);
  std::printf("  peak RSS %ld MiB (%ld MiB before the requests); bodies in flight %.0f MiB\n",
              rss_after, rss_before, in_flight_mib);
  std::printf("  ratio vs bodies built in memory     %.0fx less memory\n",
              in_flight_mib / std::max<long>(1, rss_after));
  return ok == s.big_requests ? 0 : 1;
}

bool ParseArgs(int argc, char** argv, Settings& s) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--help" || a == "-h") {
      std::printf(
          "model_client_bench [--requests N] [--curl-requests N] [--runs N]\n"
          "                   [--sections sequential,concurrent,big] [--big-requests N]\n"
          "                   [--big-frames N] [--frame-kib K]\n");
      std::exit(0);
    } else if (a == "--requests" && next) {
      s.requests = std::atoi(argv[++i]);
    } else if (a == "--curl-requests" && next) {
      s.curl_requests = std::atoi(argv[++i]);
    } else if (a == "--runs" && next) {
      s.runs = std::atoi(argv[++i]);
    } else if (a == "--sections" && next) {
      s.sections = argv[++i];
    } else if (a == "--big-requests" && next) {
      s.big_requests = std::atoi(argv[++i]);
    } else if (a == "--big-frames" && next) {
      s.big_frames = std::atoi(argv[++i]);
    } else if (a == "--frame-kib" && next) {
      s.frame_kib = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "unknown option %s (see --help)\n", a.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  if (!ParseArgs(argc, argv, s)) return 2;
  const fs::path tmp =
      fs::temp_directory_path() / ("reel_client_bench_" + std::to_string(getpid()));
  fs::create_directories(tmp);
  std::printf(
      "model_client_bench: %s, %u cores; fake server: tests/support/fake_openai_server.py\n",
      reel::bench::CpuModel().c_str(), std::thread::hardware_concurrency());
  int rc = 0;
  if (Has(s, "sequential") || Has(s, "concurrent")) rc |= Small(s, tmp);
  if (Has(s, "big")) rc |= Big(s, tmp);
  fs::remove_all(tmp);
  return rc;
}
