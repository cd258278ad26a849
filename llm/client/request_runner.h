// One request to an endpoint through its circuit, rate limit and retry rules, for chat completions
// and transcriptions alike: Run calls `attempt` until it succeeds, fails for good, its time is
// spent, the circuit gives up, or `cancel` is set. Thread-safe: Run may be called from many
// threads at once. Usage: llm/README.md, "Request runner".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "llm/client/api_key.h"
#include "llm/client/circuit_breaker.h"
#include "llm/client/client_clock.h"
#include "llm/client/http_client.h"
#include "llm/client/model_client.h"
#include "llm/client/rate_limiter.h"
#include "llm/client/retry_policy.h"

namespace reel::llm {

// What one attempt came to.
struct AttemptVerdict {
  ChatOutcome outcome = ChatOutcome::kOk;
  std::string message;  // why it failed
  int http_status = 0;  // 0: no HTTP answer
  bool retryable = false;
  bool down = false;  // a "server down" failure: counts toward the circuit
  // A timeout: this request's own repeats alone never open the circuit (one slow answer is not
  // a server down; several requests timing out are).
  bool slow = false;
  std::optional<double> retry_after;  // the server's wait hint, seconds
  double seconds = 0;                 // the attempt's time on the wire (request_timeout_s)
  // Ok: the tokens the request really took from the token rate limit (else the reservation).
  std::optional<int64_t> used_tokens;

  static AttemptVerdict Ok(int http_status);
  // A failure of the answer itself (malformed, rejected): not retried.
  static AttemptVerdict Fail(ChatOutcome outcome, std::string message, int http_status);
};

// A transport failure or a non-2xx answer, classified: connection errors retried (no connection
// and a connection dropped before any answer count as down), timeouts retried (a connect timeout
// and a stalled answer count as down; a stalled one is slow), the request's total time spent not
// retried, 408 / 409 / 429 / 5xx retried (502 / 503 / 504 down), `x-should-retry` obeyed,
// `retry-after-ms` / `retry-after` read, other 4xx rejected, an answer too large malformed. The
// message names the status (with its reason phrase, and where a redirect points) and the
// server's error.
AttemptVerdict ClassifyHttpFailure(const HttpResponse& response);

// "HTTP 503 Service Unavailable: <the server's message>", "HTTP 302 Found: redirected to URL".
std::string HttpFailureText(const HttpResponse& response);

// The server's own word on retrying (`x-should-retry: true|false`, which the OpenAI client
// honours); nullopt when it says nothing.
std::optional<bool> ShouldRetryHeader(const HttpResponse& response);

struct RequestOutcome {
  ChatOutcome outcome = ChatOutcome::kOk;
  std::string error;  // "" when ok; never contains the key
  int http_status = 0;
  int attempts = 0;
  std::vector<std::string> retry_reasons;
  double total_s = 0;  // waits and retries included

  bool ok() const { return outcome == ChatOutcome::kOk; }
};

struct RequestRunnerOptions {
  // One request's time on the wire over all its attempts (0: no limit); each attempt is told
  // what is left. `request_timeout_setting` names the setting in messages.
  double request_timeout_s = 0;
  std::string request_timeout_setting = "request timeout";
  RetryOptions retry;
  RateLimitOptions rate_limit;
  CircuitOptions circuit;
  ClientClock* clock = ClientClock::Real();
  ApiKey api_key;                                    // only to redact messages
  std::function<void(const std::string&)> on_event;  // retries, waits, the circuit
};

class RequestRunner {
 public:
  explicit RequestRunner(RequestRunnerOptions options);

  // `attempt(probe, time_left_s)` sends one request (probe: it tests whether the server is
  // back; time_left_s: what is left of request_timeout_s, 0 when there is no limit) and says what
  // it came to. `reserved_tokens` is taken from the token rate limit for each attempt (0 for
  // requests that are not counted in tokens). `on_retry` hears the reason before each repeat.
  using Attempt = std::function<AttemptVerdict(bool probe, double time_left_s)>;
  RequestOutcome Run(int64_t reserved_tokens, const std::atomic<bool>* cancel,
                     const Attempt& attempt,
                     const std::function<void(const std::string&)>& on_retry = nullptr);

  const CircuitBreaker& circuit() const { return breaker_; }

 private:
  void Event(const std::string& message);
  double Random();

  RequestRunnerOptions options_;
  RateLimiter limiter_;
  CircuitBreaker breaker_;
  std::mutex mutex_;
  std::mt19937_64 rng_{std::random_device{}()};
  std::atomic<int64_t> next_serial_{0};  // numbers Run calls (the circuit tells them apart)
};

}  // namespace reel::llm
