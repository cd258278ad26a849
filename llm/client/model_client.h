// The model client: one OpenAI-compatible endpoint with checks before a run, retries, a rate
// limit and a circuit. Chat always returns a ChatResult (an answer or a failure with its kind;
// never throws); a too-long prompt (kTooLong) is never retried. Thread-safe: one client per
// endpoint per run. The API key appears only in the Authorization header (ApiKey::Redact).
// Usage: llm/README.md, "Model client".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "llm/client/api_key.h"
#include "llm/client/chat_request.h"
#include "llm/client/chat_response.h"
#include "llm/client/circuit_breaker.h"
#include "llm/client/client_clock.h"
#include "llm/client/dialect.h"
#include "llm/client/rate_limiter.h"
#include "llm/client/retry_policy.h"
#include "llm/client/server_error.h"

namespace reel::llm {

class HttpClient;

struct ModelClientOptions {
  // Base URL, e.g. "http://localhost:8000/v1" (a URL without a path gets "/v1").
  std::string endpoint;
  std::string model = "MiniMax-M3";  // the `model` field, as the server names it
  std::string dialect = "auto";      // "auto", "vllm", "sglang", "openai"
  ApiKey api_key;
  double connect_timeout_s = 10;
  double read_timeout_s = 3600;  // silence allowed while the server prefills a long prompt
  // The most time one request may spend on the wire, over all its attempts (waiting for the
  // rate limit, a paused circuit or a retry's pause not counted); 0 = no limit. Bounds a server
  // that trickles bytes (never silent) or streams without end. Not retried once spent.
  double request_timeout_s = 7200;
  int64_t max_response_bytes = int64_t{256} << 20;  // an answer (streamed or not) above fails
  RetryOptions retry;
  RateLimitOptions rate_limit;
  CircuitOptions circuit;
  int max_connections = 64;                // connections to the endpoint
  std::vector<std::string> extra_headers;  // "Name: value" (OpenRouter's HTTP-Referer, ...)
  ClientClock* clock = ClientClock::Real();
  // The run's log: retries, waits for the rate limit, the circuit opening and closing.
  std::function<void(const std::string&)> on_event;
};

// What GET /v1/models said.
struct ServerInfo {
  const Dialect* dialect = nullptr;      // the one in use (detected when "auto")
  std::vector<std::string> models;       // the served model ids
  std::optional<int64_t> max_model_len;  // of our model, when the server says
};

enum class ChatOutcome {
  kOk = 0,
  kTooLong,         // the prompt does not fit (see ChatResult::too_long); not retried
  kRejected,        // another 4xx: the request is wrong (bad schema, unknown model, auth)
  kServerError,     // 5xx (or an error object) after the retries
  kTimeout,         // connect or read timeout after the retries, or request_timeout_s spent
  kConnection,      // no connection, or cut mid-answer, after the retries
  kMalformed,       // the answer could not be read (not JSON, not a completion)
  kEmptyChoices,    // the server answered with no choice
  kSchemaMismatch,  // the answer is not JSON matching the prompt's schema (content kept)
  kServerDown,      // the circuit stayed open longer than CircuitOptions::give_up_after_s
  kCancelled,       // the run was stopped
  kBadRequest,      // our side could not build or send the request (body file missing, ...)
};

const char* ChatOutcomeName(ChatOutcome outcome);

struct ChatResult {
  ChatOutcome outcome = ChatOutcome::kOk;
  std::string error;  // why it failed, for a person; "" when ok; never contains the key
  int http_status = 0;

  ChatAnswer answer;        // content, reasoning, finish reason, usage, ids
  bool truncated = false;   // finish_reason "length": the answer hit max_completion_tokens
  std::string json_answer;  // with a schema: the answer as compact JSON, checked
  std::optional<TooLongPrompt> too_long;  // with kTooLong: the server's numbers

  int attempts = 0;                        // requests sent (1 + retries)
  std::vector<std::string> retry_reasons;  // why each retry happened
  double latency_s = 0;                    // the final attempt: request start to the whole answer
  double total_s = 0;                      // the whole call, waits and retries included
  std::optional<double> ttft_s;   // streaming: start of the final attempt to its first token
  std::string server_request_id;  // the server's id for the request (header, else body id)
  std::string http_version;
  int64_t request_bytes = 0;  // body bytes of the final attempt

  bool ok() const { return outcome == ChatOutcome::kOk; }
};

class JsonSchema;

// Fills `result` from a complete answer: the answer itself, the `length` flag, and with a schema
// the answer as checked JSON (or kSchemaMismatch with the reason; the content is kept). Shared by
// Chat and the Batch-file import, so both store the same result.
void FinishAnswer(const ChatAnswer& answer, const JsonSchema* schema, ChatResult* result);

// Watches a streamed answer arrive (reel ask). OnRetry is called before a retry that follows
// output already shown, so the watcher can start over.
class ChatObserver : public ChatStreamParser::Observer {
 public:
  virtual void OnRetry(const std::string& reason) { (void)reason; }
};

class ModelClient {
 public:
  // Fails only on bad options (no endpoint, unknown dialect) or when libcurl cannot start.
  static Result<std::unique_ptr<ModelClient>> Create(ModelClientOptions options);
  ~ModelClient();
  ModelClient(const ModelClient&) = delete;
  ModelClient& operator=(const ModelClient&) = delete;

  // GET /v1/models: resolves "auto", checks that the model is served, reads its max_model_len.
  // kNotFound names the served models; kUnavailable when the server cannot be reached.
  Result<ServerInfo> CheckModel();

  // Fails at once (kLimitExceeded, both numbers in the message) when `token_budget` (prompt plus
  // output) is above the server's max_model_len. OK when the server did not say.
  Status CheckBudget(int64_t token_budget);

  // The server's count of the request's prompt (POST /tokenize with the messages), for
  // comparing with the local count. kUnsupported for dialects without the endpoint.
  Result<int64_t> CountPromptTokens(const ChatRequest& request);

  // Sends a chat request: waits for the circuit and the rate limit, retries as RetryOptions
  // says, parses (streamed or not) and checks a structured answer against its schema.
  ChatResult Chat(const ChatRequest& request, const std::atomic<bool>* cancel = nullptr,
                  ChatObserver* observer = nullptr);

  // The dialect in use ("auto" before CheckModel resolves to the generic one).
  const Dialect& dialect() const;
  const std::string& endpoint() const;
  const CircuitBreaker& circuit() const;

  struct Impl;

 private:
  explicit ModelClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace reel::llm
