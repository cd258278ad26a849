// Building and writing a full 1M-token request for a one-hour video whose frames are already
// sampled: 3,600 frame rows (1 fps) in a results database, their model-size JPEGs on disk.
//
//   Reel:      BuildItemContext (the rows read back, the context built and counted exactly with a
//              real tokenizer.json, fitted by lower_resolution to the largest frame size that
//              fits, 1,800 pairs), then
//              BuildMessages + BuildChatBody (the vLLM body the model client sends) streamed to
//              a file through a BodyReader (1 MiB reads).
//   Baselines, same frames, same run:
//     base64    `cat frames/*.jpg | base64 -w0 > out` (coreutils): only the unavoidable work of
//               a body, the JPEG bytes base64-encoded into a file;
//     python    a typical client: Python builds the same messages (json.dumps of a dict with
//               base64.b64encode of every frame) and writes them.
//   Ratio = baseline time / Reel time (above 1: Reel is faster). Median of --runs.
// The JPEGs are FFmpeg's testsrc2 pattern at that size, encoded as the frame cache encodes them
// (libjpeg-turbo, quality 90; written once, not timed); the tokenizer is
// Qwen 3's tokenizer.json (scripts/fetch-tokenizer-reference into the build tree) with the ChatML
// template (its media tokens are Qwen's), else M3's template and the estimate. Also prints what a
// frame cache of the hour costs on disk at both frame sizes.
//
// Usage: context_bench [--frames N] [--runs N] [--dir DIR]
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "jobs/context/item_context.h"
#include "llm/client/chat_request.h"
#include "llm/client/dialect.h"
#include "llm/context/request_body.h"
#include "pipeline/image_codec.h"
#include "storage/store.h"

namespace {

namespace fs = std::filesystem;
using reel::bench::Clock;
using reel::bench::Median;
using reel::bench::Seconds;
using reel::bench::ShellQuote;

int64_t DirBytes(const std::string& dir) {
  int64_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) n += static_cast<int64_t>(e.file_size());
  }
  return n;
}

bool Run(const std::string& command) { return std::system(command.c_str()) == 0; }

}  // namespace

int main(int argc, char** argv) {
  int frames = 3600;
  int runs = 3;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc) {
      frames = std::max(2, std::atoi(argv[++i]));
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: context_bench [--frames N] [--runs N] [--dir DIR]\n");
      return 2;
    }
  }
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = std::string(tmp ? tmp : "/tmp") + "/reel-context-bench";
  }
  fs::create_directories(dir);
  std::printf("context_bench: %d frames (1 fps), %s, %d runs\n", frames,
              reel::bench::CpuModel().c_str(), runs);

  // The database: one item, `frames` rows at 1008x560 of a 1920x1080 video.
  const std::string db = dir + "/hour.db";
  fs::remove(db);
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
  auto store = reel::storage::Store::Open(db);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().message().c_str());
    return 1;
  }
  int64_t job_id = store->UpsertJob({0, "hour", "spec", ""}).value();
  reel::storage::ItemRecord item;
  item.job_id = job_id;
  item.path = dir + "/hour.mp4";
  item.content_hash = std::string(64, 'a');
  item.settings_hash = std::string(64, 'b');
  int64_t item_id = store->UpsertItem(item).value();
  reel::storage::ItemOutputs out;
  for (int i = 0; i < frames; ++i) {
    reel::storage::FrameRecord f;
    f.sample_index = i;
    f.time_seconds = i;
    f.width = 1008;
    f.height = 560;
    f.phash = (i % 2 == 0) ? 0xFFull : 0xFF00000000000000ull;
    out.frames.push_back(f);
  }
  out.media_json = nlohmann::json{{"duration_seconds", double(frames)},
                                  {"video", {{"width", 1920}, {"height", 1080}}}}
                       .dump();
  if (!store->MarkItemDone(item_id, out).ok()) return 1;

  std::string tokenizer = std::string(REEL_BINARY_DIR) + "/tokenizer-reference/files/qwen3.json";
  if (!fs::exists(tokenizer)) {
    Run("bash " + ShellQuote(std::string(REEL_SOURCE_DIR) + "/scripts/fetch-tokenizer-reference") +
        " " + ShellQuote(std::string(REEL_BINARY_DIR) + "/tokenizer-reference") + " >/dev/null");
  }
  const bool exact = fs::exists(tokenizer);
  std::string job_text =
      "name: hour\ninputs: [hour.mp4]\ncontext:\n  transport: video\n  server_num_frames: 0\n"
      "  template: " +
      std::string(exact ? "chatml" : "minimax-m3") +
      "\n"
      "  fit_strategy: lower_resolution\n" +
      (exact ? "  tokenizer: " + tokenizer + "\n" : std::string()) +
      "prompts:\n  - id: what\n    question: Describe this video minute by minute.\n";
  auto job = reel::jobs::ParseJobText(job_text, dir + "/job.yaml", dir);
  if (!job.ok()) {
    std::fprintf(stderr, "%s\n", job.status().message().c_str());
    return 1;
  }
  const auto load_start = Clock::now();
  auto setup = reel::jobs::LoadContextSetup(*job);
  if (!setup.ok()) {
    std::fprintf(stderr, "%s\n", setup.status().message().c_str());
    return 1;
  }
  const double load_s = Seconds(load_start);

  // The frames at the size the context sends them, as the frame cache holds them (written once,
  // not timed), and at the default size for the cache-size figure.
  auto first = reel::jobs::BuildItemContext(*store, *job, **setup, item_id, job->prompts[0]);
  if (!first.ok()) {
    std::fprintf(stderr, "%s\n", first.status().message().c_str());
    return 1;
  }
  const std::string fitted = std::to_string(first->context.frame_width) + "x" +
                             std::to_string(first->context.frame_height);
  const std::string small = dir + "/frames-" + fitted, large = dir + "/frames-1008x560";
  for (const auto& [folder, size] :
       {std::pair{small, fitted}, std::pair{large, std::string("1008x560")}}) {
    if (fs::exists(folder + "/.done")) continue;
    fs::remove_all(folder);
    fs::create_directories(folder);
    std::string cmd = "ffmpeg -v error -f lavfi -i testsrc2=size=" + size +
                      ":rate=1:duration=" + std::to_string(frames) + " -q:v 2 " +
                      ShellQuote(folder + "/%05d.jpg");
    if (!Run(cmd)) {
      std::fprintf(stderr, "context_bench: ffmpeg failed: %s\n", cmd.c_str());
      return 1;
    }
    // Encoded again as the frame cache writes them (libjpeg-turbo, quality 90).
    for (const auto& e : fs::directory_iterator(folder)) {
      auto image = reel::pipeline::ReadImageFile(e.path().string());
      if (!image.ok() || !reel::pipeline::WriteImageFile(e.path().string(), *image, 90).ok()) {
        std::fprintf(stderr, "context_bench: cannot re-encode %s\n", e.path().c_str());
        return 1;
      }
    }
    std::ofstream(folder + "/.done");
  }
  std::vector<std::string> files;
  for (int i = 1; i <= frames; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/%05d.jpg", i);
    files.push_back(small + name);
  }

  // Reel.
  const std::string body_path = dir + "/body.json";
  std::vector<double> build_s, write_s, total_s;
  int64_t body_bytes = 0, tokens = 0;
  std::string size;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    auto c = reel::jobs::BuildItemContext(*store, *job, **setup, item_id, job->prompts[0]);
    if (!c.ok()) {
      std::fprintf(stderr, "%s\n", c.status().message().c_str());
      return 1;
    }
    build_s.push_back(Seconds(start));
    const auto write_start = Clock::now();
    std::vector<std::string> frame_files(c->input.frames.size());
    for (size_t f : reel::llm::FramesNeeded(c->context, 0)) frame_files[f] = files[f];
    auto messages = reel::llm::BuildMessages(c->context, 0, frame_files);
    reel::llm::ChatRequest request;
    request.messages = *messages;
    request.max_completion_tokens = job->model.max_output_tokens;
    auto body = reel::llm::BuildChatBody(reel::llm::VllmDialect(), job->model.name, request);
    if (!messages.ok() || !body.ok()) return 1;
    std::FILE* file = std::fopen(body_path.c_str(), "wb");
    auto reader = (*body)->Open();
    std::vector<char> buffer(1 << 20);
    body_bytes = 0;
    while (true) {
      auto n = reader->Read(buffer.data(), buffer.size());
      if (!n.ok() || *n == 0) break;
      std::fwrite(buffer.data(), 1, *n, file);
      body_bytes += static_cast<int64_t>(*n);
    }
    std::fclose(file);
    write_s.push_back(Seconds(write_start));
    total_s.push_back(Seconds(start));
    tokens = c->context.segments[0].tokens.total;
    size = std::to_string(c->context.frame_width) + "x" + std::to_string(c->context.frame_height);
  }
  // The body is what it claims: JSON with every frame in one video URL.
  {
    std::ifstream in(body_path, std::ios::binary);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    size_t commas = 0;
    for (const auto& part : j["messages"].back()["content"]) {
      if (part["type"] == "video_url") {
        const std::string& url = part["video_url"]["url"].get_ref<const std::string&>();
        commas = std::count(url.begin(), url.end(), ',');
      }
    }
    if (j.is_discarded() || commas != static_cast<size_t>(frames)) {
      std::fprintf(stderr, "context_bench: the body is not the expected JSON (%zu frames)\n",
                   commas);
      return 1;
    }
  }

  // Baselines.
  const std::string base64_out = dir + "/base64.out";
  std::vector<double> b64_s;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    Run("cat " + ShellQuote(small) + "/*.jpg | base64 -w0 > " + ShellQuote(base64_out));
    b64_s.push_back(Seconds(start));
  }
  const std::string py = dir + "/client.py";
  std::ofstream(py) << "import base64, glob, json, sys\n"
                       "files = sorted(glob.glob(sys.argv[1] + '/*.jpg'))\n"
                       "def b64(p):\n"
                       "    with open(p, 'rb') as f: return base64.b64encode(f.read()).decode()\n"
                       "url = 'data:video/jpeg;base64,' + ','.join(b64(p) for p in files)\n"
                       "body = {'model': 'MiniMax-M3', 'messages': [{'role': 'system', 'content': "
                       "'You are a helpful assistant.'}, {'role': 'user', 'content': [{'type': "
                       "'text', 'text': 'Video from 0.0 s to 3599.0 s:\\n'}, {'type': "
                       "'video_url', 'video_url': {'url': url}}, {'type': 'text', 'text': "
                       "'Describe this video minute by minute.'}]}], "
                       "'max_completion_tokens': 16384}\n"
                       "with open(sys.argv[2], 'w') as f: json.dump(body, f)\n";
  std::vector<double> py_s;
  const bool have_python = Run("command -v python3 >/dev/null");
  for (int r = 0; have_python && r < runs; ++r) {
    const auto start = Clock::now();
    Run("python3 " + ShellQuote(py) + " " + ShellQuote(small) + " " + ShellQuote(dir + "/py.json"));
    py_s.push_back(Seconds(start));
  }

  const double reel_s = Median(total_s);
  const double mb = body_bytes / 1e6;
  std::printf(
      "\nrequest: %s prompt tokens (%s), frames %s, body %.1f MB; tokenizer load %.3f s "
      "(once per run)\n",
      std::to_string(tokens).c_str(), exact ? "exact, qwen3 tokenizer.json" : "estimate",
      size.c_str(), mb, load_s);
  std::printf("%-44s %10s %10s %8s\n", "", "seconds", "MB/s", "ratio");
  std::printf("%-44s %10.3f %10s %8s\n", "Reel: build the context (rows -> counted)",
              Median(build_s), "", "");
  std::printf("%-44s %10.3f %10.1f %8s\n", "Reel: write the body (messages + chat body)",
              Median(write_s), mb / Median(write_s), "");
  std::printf("%-44s %10.3f %10.1f %8s\n", "Reel: total", reel_s, mb / reel_s, "1.00");
  std::printf("%-44s %10.3f %10.1f %8.2f\n", "base64: cat *.jpg | base64 -w0 > file", Median(b64_s),
              mb / Median(b64_s), Median(b64_s) / reel_s);
  if (have_python) {
    std::printf("%-44s %10.3f %10.1f %8.2f\n", "python: json.dump with base64 (typical client)",
                Median(py_s), mb / Median(py_s), Median(py_s) / reel_s);
  }
  std::printf("\nframe cache for %d frames: %s %.1f MB, 1008x560 %.1f MB (testsrc2, JPEG q90)\n",
              frames, fitted.c_str(), DirBytes(small) / 1e6, DirBytes(large) / 1e6);
  return 0;
}
