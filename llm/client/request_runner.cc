#include "llm/client/request_runner.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "llm/client/client_clock.h"
#include "llm/client/server_error.h"
#include "llm/client/utf8_text.h"

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

namespace {

// "302 Found", "404 Not Found"; the bare number for a status without a common phrase.
std::string StatusLine(int status) {
  static const std::pair<int, const char*> kPhrases[] = {{301, "Moved Permanently"},
                                                         {302, "Found"},
                                                         {303, "See Other"},
                                                         {307, "Temporary Redirect"},
                                                         {308, "Permanent Redirect"},
                                                         {400, "Bad Request"},
                                                         {401, "Unauthorized"},
                                                         {403, "Forbidden"},
                                                         {404, "Not Found"},
                                                         {405, "Method Not Allowed"},
                                                         {408, "Request Timeout"},
                                                         {413, "Content Too Large"},
                                                         {422, "Unprocessable Content"},
                                                         {429, "Too Many Requests"},
                                                         {500, "Internal Server Error"},
                                                         {502, "Bad Gateway"},
                                                         {503, "Service Unavailable"},
                                                         {504, "Gateway Timeout"}};
  for (const auto& [code, phrase] : kPhrases) {
    if (code == status) return std::to_string(status) + " " + phrase;
  }
  return std::to_string(status);
}

AttemptVerdict FromTransport(const HttpResponse& r) {
  AttemptVerdict f;
  f.http_status = r.status;
  f.message = std::string(TransportErrorName(r.error)) + ": " + r.error_message;
  switch (r.error) {
    case TransportError::kConnect:
      f.outcome = ChatOutcome::kConnection;
      f.retryable = f.down = true;
      break;
    case TransportError::kConnectTimeout:
      f.outcome = ChatOutcome::kTimeout;
      f.retryable = f.down = true;
      break;
    case TransportError::kIdleTimeout:
      // A stalled server is as good as down; one slow answer is not (AttemptVerdict::slow).
      f.outcome = ChatOutcome::kTimeout;
      f.retryable = f.down = f.slow = true;
      break;
    case TransportError::kTotalTimeout:
      // The request's time is spent (the caller gave this attempt what was left of it).
      f.outcome = ChatOutcome::kTimeout;
      f.down = f.slow = true;
      break;
    case TransportError::kSendFailed:
    case TransportError::kReceiveFailed:
    case TransportError::kOther:
      f.outcome = ChatOutcome::kConnection;
      f.retryable = true;
      // Dropped before any answer (reset, refused mid-way): the server may be going down.
      f.down = r.status == 0;
      break;
    case TransportError::kBodyFailed:
      f.outcome = ChatOutcome::kBadRequest;
      f.message = r.error_message;
      break;
    case TransportError::kTooLarge:
      f.outcome = ChatOutcome::kMalformed;
      f.message = "the answer is too large: " + r.error_message;
      break;
    case TransportError::kCancelled:
      f.outcome = ChatOutcome::kCancelled;
      f.message = "cancelled";
      break;
    case TransportError::kAborted:  // handled by the caller (the stream parser's problem)
    case TransportError::kNone:
      f.outcome = ChatOutcome::kMalformed;
      break;
  }
  return f;
}

}  // namespace

// x-should-retry: the server's own word on retrying (the OpenAI client honours it).
std::optional<bool> ShouldRetryHeader(const HttpResponse& r) {
  const std::string v = r.Header("x-should-retry");
  if (v == "true") return true;
  if (v == "false") return false;
  return std::nullopt;
}

// An HTTP answer that is not a success, for a person: the status, then the server's message, or
// for a redirect where it points (Reel does not follow redirects: the endpoint should be the
// final URL).
std::string HttpFailureText(const HttpResponse& r) {
  std::string text = "HTTP " + StatusLine(r.status);
  if (r.status >= 300 && r.status < 400) {
    const std::string location = r.Header("location");
    return text + (location.empty() ? " (a redirect without a Location)"
                                    : ": redirected to " + SanitizedUtf8(location.substr(0, 500)));
  }
  const ServerError se = ParseServerError(r.status, r.body);
  if (se.message != "HTTP " + std::to_string(r.status)) text += ": " + se.message;
  return text;
}

AttemptVerdict ClassifyHttpFailure(const HttpResponse& r) {
  if (!r.transport_ok()) return FromTransport(r);
  AttemptVerdict v;
  v.http_status = r.status;
  v.message = HttpFailureText(r);
  v.retryable = ShouldRetryHeader(r).value_or(IsRetryableStatus(r.status));
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
                                  const Attempt& attempt,
                                  const std::function<void(const std::string&)>& on_retry) {
  const auto start = std::chrono::steady_clock::now();
  RequestOutcome result;
  auto finish = [&](ChatOutcome outcome, const std::string& message) {
    result.outcome = outcome;
    result.error = options_.api_key.Redact(message);
    result.total_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  };
  const int64_t serial = next_serial_.fetch_add(1) + 1;  // this request, for the circuit
  const double budget = options_.request_timeout_s;
  int retries_used = 0;
  double wire_s = 0;  // time spent in attempts, against the request timeout
  while (true) {
    if (cancel != nullptr && cancel->load()) return finish(ChatOutcome::kCancelled, "cancelled");
    if (budget > 0 && wire_s >= budget) {
      return finish(ChatOutcome::kTimeout, "request timeout: no complete answer within " +
                                               WaitText(budget) + " (" +
                                               options_.request_timeout_setting + ") over " +
                                               std::to_string(result.attempts) + " attempts");
    }
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
    const AttemptVerdict v = attempt(probe, budget > 0 ? budget - wire_s : 0);
    wire_s += v.seconds;
    result.http_status = v.http_status;

    // The circuit: a down failure counts; any HTTP answer shows the server is up; a probe that
    // proves nothing counts as down so the next probe can go.
    if (v.outcome == ChatOutcome::kCancelled) {
      if (probe) breaker_.RecordDown(true, "probe cancelled");
      return finish(ChatOutcome::kCancelled, "cancelled");
    }
    bool circuit_open = false;
    if (v.outcome != ChatOutcome::kOk && (v.down || (probe && v.http_status == 0))) {
      circuit_open =
          breaker_.RecordDown(probe, options_.api_key.Redact(v.message), v.slow ? serial : 0);
    } else if (v.http_status != 0) {
      breaker_.RecordUp();
    }
    if (v.outcome == ChatOutcome::kOk) {
      if (v.used_tokens) limiter_.Adjust(reserved, *v.used_tokens);
      return finish(ChatOutcome::kOk, "");
    }

    limiter_.Adjust(reserved, 0);  // the server did not process it
    const std::string reason = options_.api_key.Redact(v.message);
    if (v.retryable && v.down && circuit_open) {
      // Wait for the circuit (Await above) without using up a retry.
      result.retry_reasons.push_back(reason + " (waiting for the server)");
      if (on_retry) on_retry(reason);
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
    if (on_retry) on_retry(reason);
    if (!options_.clock->SleepUntil(options_.clock->Now() + wait, cancel)) {
      return finish(ChatOutcome::kCancelled, "cancelled");
    }
  }
}

}  // namespace reel::llm
