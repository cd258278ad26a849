// One request to an endpoint through its circuit, its rate limit and the retry rules: the engine
// for requests that are not chat completions (POST /v1/audio/transcriptions), on the same
// components and the same rules as ModelClient::Chat (retry_policy.h, rate_limiter.h,
// circuit_breaker.h; what each failure means: llm/README.md).
//
//   RequestRunner runner(options);                       // one per endpoint, shared by its
//   requests RequestOutcome r = runner.Run(0, cancel, [&](bool probe) {
//     HttpResponse response = http->Perform(request);
//     if (!response.transport_ok() || response.status != 200) return ClassifyHttpFailure(response);
//     ... read the answer; a malformed one: return AttemptVerdict::Fail(ChatOutcome::kMalformed,
//     why); return AttemptVerdict::Ok(response.status);
//   });
//
// Run calls `attempt` until it succeeds, fails for good (not retryable, or out of retries), the
// circuit gives up, or `cancel` is set. While the circuit is open, down failures wait for it
// without using up a retry. Thread-safe: Run may be called from many threads at once.
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
  bool down = false;                  // a "server down" failure: counts toward the circuit
  std::optional<double> retry_after;  // the server's wait hint, seconds

  static AttemptVerdict Ok(int http_status);
  // A failure of the answer itself (malformed, rejected): not retried.
  static AttemptVerdict Fail(ChatOutcome outcome, std::string message, int http_status);
};

// A transport failure or a non-2xx answer, classified as ModelClient::Chat does: connection
// errors and timeouts retried (no connection and connect timeouts count as down), 408 / 409 /
// 429 / 5xx retried (502 / 503 / 504 down), `x-should-retry` obeyed, `retry-after-ms` /
// `retry-after` read, other 4xx rejected. The message names the status and the server's error.
AttemptVerdict ClassifyHttpFailure(const HttpResponse& response);

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

  // `attempt(probe)` sends one request (probe: it tests whether the server is back) and says
  // what it came to. `reserved_tokens` is taken from the token rate limit for each attempt (0 for
  // requests that are not counted in tokens).
  RequestOutcome Run(int64_t reserved_tokens, const std::atomic<bool>* cancel,
                     const std::function<AttemptVerdict(bool probe)>& attempt);

  const CircuitBreaker& circuit() const { return breaker_; }

 private:
  void Event(const std::string& message);
  double Random();

  RequestRunnerOptions options_;
  RateLimiter limiter_;
  CircuitBreaker breaker_;
  std::mutex mutex_;
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace reel::llm
