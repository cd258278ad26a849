#include "llm/client/request_runner.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "llm/client/client_clock.h"
#include "llm/client/server_error.h"

namespace reel::llm {

AttemptVerdict AttemptVerdict::Ok(int http_status) {
  AttemptVerdict v;
  v.http_status = http_status;
  return v;
}

AttemptVerdict AttemptVerdict::Fail(ChatOutcome outcome, std::string message, int http_status) {
  AttemptVerdict v;
  v.outcome = outcome;
  v.message = std::move(message);
  v.http_status = http_status;
  return v;
}

AttemptVerdict ClassifyHttpFailure(const HttpResponse& r) {
  AttemptVerdict v;
  v.http_status = r.status;
  if (!r.transport_ok()) {
    v.message = std::string(TransportErrorName(r.error)) + ": " + r.error_message;
    switch (r.error) {
      case TransportError::kConnect:
        v.outcome = ChatOutcome::kConnection;
        v.retryable = v.down = true;
        break;
      case TransportError::kConnectTimeout:
        v.outcome = ChatOutcome::kTimeout;
        v.retryable = v.down = true;
        break;
      case TransportError::kIdleTimeout:
      case TransportError::kTotalTimeout:
        v.outcome = ChatOutcome::kTimeout;
        v.retryable = true;
        break;
      case TransportError::kSendFailed:
      case TransportError::kReceiveFailed:
      case TransportError::kOther:
        v.outcome = ChatOutcome::kConnection;
        v.retryable = true;
        v.down = r.status == 0;  // dropped before any answer: the server may be going down
        break;
      case TransportError::kBodyFailed:
        v.outcome = ChatOutcome::kBadRequest;
        v.message = r.error_message;
        break;
      case TransportError::kTooLarge:
      case TransportError::kAborted:
      case TransportError::kNone:
        v.outcome = ChatOutcome::kMalformed;
        break;
      case TransportError::kCancelled:
        v.outcome = ChatOutcome::kCancelled;
        v.message = "cancelled";
        break;
    }
    return v;
  }
  const ServerError se = ParseServerError(r.status, r.body);
  v.message = "HTTP " + std::to_string(r.status) + ": " + se.message;
  const std::string should_retry = r.Header("x-should-retry");
  v.retryable = should_retry == "true"    ? true
                : should_retry == "false" ? false
                                          : IsRetryableStatus(r.status);
  v.down = r.status == 502 || r.status == 503 || r.status == 504;
  v.outcome = r.status == 408                                  ? ChatOutcome::kTimeout
              : IsRetryableStatus(r.status) || r.status >= 500 ? ChatOutcome::kServerError
                                                               : ChatOutcome::kRejected;
  v.retry_after =
      ParseRetryAfter(r.Header("retry-after-ms"), r.Header("retry-after"), std::time(nullptr));
  return v;
}

RequestRunner::RequestRunner(RequestRunnerOptions options)
    : options_(std::move(options)),
      limiter_(options_.rate_limit, options_.clock ? options_.clock : ClientClock::Real()),
      breaker_(options_.circuit, options_.clock ? options_.clock : ClientClock::Real(),
               [this](bool, const std::string& m) { Event(m); }) {
  if (options_.clock == nullptr) options_.clock = ClientClock::Real();
}

void RequestRunner::Event(const std::string& message) {
  if (options_.on_event) options_.on_event(options_.api_key.Redact(message));
}

double RequestRunner::Random() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::uniform_real_distribution<double>(0, 1)(rng_);
}

RequestOutcome RequestRunner::Run(int64_t reserved, const std::atomic<bool>* cancel,
                                  const std::function<AttemptVerdict(bool probe)>& attempt) {
  const auto start = std::chrono::steady_clock::now();
  RequestOutcome result;
  auto finish = [&](ChatOutcome outcome, const std::string& message) {
    result.outcome = outcome;
    result.error = options_.api_key.Redact(message);
    result.total_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  };
  int retries_used = 0;
  while (true) {
    if (cancel != nullptr && cancel->load()) return finish(ChatOutcome::kCancelled, "cancelled");
    const CircuitBreaker::Verdict gate = breaker_.Await(cancel);
    if (gate == CircuitBreaker::Verdict::kCancelled) {
      return finish(ChatOutcome::kCancelled, "cancelled");
    }
    if (gate == CircuitBreaker::Verdict::kGiveUp) {
      return finish(ChatOutcome::kServerDown,
                    "the server was unreachable for " + WaitText(breaker_.seconds_open()) +
                        " (longer than the circuit allows): " + breaker_.last_reason());
    }
    const bool probe = gate == CircuitBreaker::Verdict::kProbe;
    const double waited = limiter_.Acquire(reserved, cancel);
    if (waited < 0) return finish(ChatOutcome::kCancelled, "cancelled");
    if (waited >= 1) Event("rate limit: waited " + WaitText(waited) + " before sending");

    ++result.attempts;
    const AttemptVerdict v = attempt(probe);
    result.http_status = v.http_status;

    // The circuit: a down failure counts; any HTTP answer shows the server is up; a probe that
    // proves nothing counts as down so the next probe can go.
    if (v.outcome == ChatOutcome::kCancelled) {
      if (probe) breaker_.RecordDown(true, "probe cancelled");
      return finish(ChatOutcome::kCancelled, "cancelled");
    }
    bool circuit_open = false;
    if (v.outcome != ChatOutcome::kOk && (v.down || (probe && v.http_status == 0))) {
      circuit_open = breaker_.RecordDown(probe, options_.api_key.Redact(v.message));
    } else if (v.http_status != 0) {
      breaker_.RecordUp();
    }
    if (v.outcome == ChatOutcome::kOk) return finish(ChatOutcome::kOk, "");

    limiter_.Adjust(reserved, 0);  // the server did not process it
    const std::string reason = options_.api_key.Redact(v.message);
    if (v.retryable && v.down && circuit_open) {
      // Wait for the circuit (Await above) without using up a retry.
      result.retry_reasons.push_back(reason + " (waiting for the server)");
      continue;
    }
    if (!v.retryable || retries_used >= options_.retry.max_retries) {
      std::string message = reason;
      if (result.attempts > 1) {
        message += " (after " + std::to_string(result.attempts) + " attempts)";
      }
      return finish(v.outcome, message);
    }
    const double wait = RetryDelaySeconds(options_.retry, retries_used, v.retry_after, Random());
    ++retries_used;
    result.retry_reasons.push_back(reason);
    Event("retry " + std::to_string(retries_used) + "/" +
          std::to_string(options_.retry.max_retries) + " in " + WaitText(wait) + ": " + reason);
    if (!options_.clock->SleepUntil(options_.clock->Now() + wait, cancel)) {
      return finish(ChatOutcome::kCancelled, "cancelled");
    }
  }
}

}  // namespace reel::llm
