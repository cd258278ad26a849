// Starts tests/support/fake_openai_server.py (a fake OpenAI-compatible model server: a test
// double for vLLM, SGLang or a hosted service) on loopback for one test, and scripts it.
//
// The server runs as a child process; the destructor stops it. Script() queues behaviours for
// the coming chat requests (see the script's docstring: 429 with retry-after, 5xx, stall, cut,
// malformed JSON, empty choices, too-long prompts in both shapes, slow prefill, ...). Log()
// returns what the server received, as JSON text.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace reel::testing {

struct FakeServerOptions {
  std::string mode = "vllm";  // vllm | sglang | openai
  std::string model = "MiniMax-M3";
  long long max_model_len = 1048576;
  std::string api_key{};                  // required in Authorization when set
  std::vector<std::string> extra_args{};  // more command-line options of the script
};

class FakeModelServer {
 public:
  explicit FakeModelServer(FakeServerOptions options = {});
  ~FakeModelServer();
  FakeModelServer(const FakeModelServer&) = delete;
  FakeModelServer& operator=(const FakeModelServer&) = delete;

  bool started() const { return port_ > 0; }
  int port() const { return port_; }
  std::string root() const;      // http://127.0.0.1:PORT
  std::string endpoint() const;  // http://127.0.0.1:PORT/v1

  // Appends behaviours (a JSON list) for the coming chat requests.
  void Script(const std::string& json_list);
  // Clears the script, the log, the prefix cache and any "down" window.
  void Reset();
  // Every request received so far (JSON list).
  std::string Log();
  // The chat completion requests of Log(), in the order they arrived.
  std::vector<nlohmann::json> ChatLog();
  // How many transcription uploads (POST /v1/audio/transcriptions) Log() holds.
  int TranscriptionUploads();

  // Runs the script in batch mode (as `vllm run-batch`) over an OpenAI Batch input file.
  // Returns the exit status.
  static int RunBatch(const FakeServerOptions& options, const std::string& input_path,
                      const std::string& output_path);

  static std::string ScriptPath();

 private:
  std::string Call(const std::string& method, const std::string& path, const std::string& body);

  FakeServerOptions options_;
  int pid_ = -1;
  int port_ = 0;
};

}  // namespace reel::testing
