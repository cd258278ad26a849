// The request engine shared by the model client's rules and the transcription backend: retries,
// the server's wait hints, the circuit, cancellation; on a simulated clock.
#include <gtest/gtest.h>

#include <deque>

#include "llm/client/request_runner.h"
#include "tests/llm/client/fake_clock.h"

namespace reel::llm {
namespace {

using reel::llm::testing::FakeClock;

HttpResponse Status(int status, std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpResponse r;
  r.status = status;
  r.headers = std::move(headers);
  r.body =
      R"({"error": {"message": "scripted", "type": "x", "code": )" + std::to_string(status) + "}}";
  return r;
}

HttpResponse Transport(TransportError e) {
  HttpResponse r;
  r.error = e;
  r.error_message = "scripted transport failure";
  return r;
}

// Sends the scripted responses in turn; 200 after them.
struct Script {
  std::deque<HttpResponse> responses;
  int calls = 0;
  AttemptVerdict operator()(bool, double) {
    ++calls;
    if (responses.empty()) return AttemptVerdict::Ok(200);
    HttpResponse r = responses.front();
    responses.pop_front();
    if (r.transport_ok() && r.status == 200) return AttemptVerdict::Ok(200);
    return ClassifyHttpFailure(r);
  }
};

RequestRunnerOptions Options(FakeClock* clock) {
  RequestRunnerOptions o;
  o.clock = clock;
  return o;
}

TEST(RequestRunnerTest, RetriesWhatTheModelClientRetriesAndHonoursRetryAfter) {
  FakeClock clock;
  RequestRunner runner(Options(&clock));
  Script script;
  script.responses = {Status(429, {{"retry-after", "7"}}), Status(503)};
  RequestOutcome r = runner.Run(0, nullptr, std::ref(script));
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(script.calls, 3);
  ASSERT_EQ(clock.sleeps().size(), 2u);
  EXPECT_DOUBLE_EQ(clock.sleeps()[0], 7.0);             // the server's hint
  EXPECT_GT(clock.sleeps()[1], 0.5 * 2 * 0.75 - 1e-9);  // backoff for the second retry
  EXPECT_LE(clock.sleeps()[1], 1.0);
  EXPECT_EQ(r.retry_reasons.size(), 2u);
}

TEST(RequestRunnerTest, GivesUpAfterTheRetriesAndNeverRetriesARejection) {
  FakeClock clock;
  RequestRunner runner(Options(&clock));
  Script failing;
  failing.responses = {Status(500), Status(502), Status(500), Status(500)};
  RequestOutcome r = runner.Run(0, nullptr, std::ref(failing));
  EXPECT_EQ(r.outcome, ChatOutcome::kServerError);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_NE(r.error.find("HTTP 500 Internal Server Error: scripted (after 3 attempts)"),
            std::string::npos)
      << r.error;

  Script rejected;
  rejected.responses = {Status(400)};
  r = runner.Run(0, nullptr, std::ref(rejected));
  EXPECT_EQ(r.outcome, ChatOutcome::kRejected);
  EXPECT_EQ(r.attempts, 1);

  Script told;
  told.responses = {Status(500, {{"x-should-retry", "false"}})};
  EXPECT_EQ(runner.Run(0, nullptr, std::ref(told)).attempts, 1);

  Script bad = {};
  r = runner.Run(0, nullptr, [&](bool, double) {
    ++bad.calls;
    return AttemptVerdict::Fail(ChatOutcome::kMalformed, "not JSON", 200);
  });
  EXPECT_EQ(r.outcome, ChatOutcome::kMalformed);
  EXPECT_EQ(bad.calls, 1);
}

TEST(RequestRunnerTest, WhileTheCircuitIsOpenRequestsWaitWithoutUsingRetries) {
  FakeClock clock;
  RequestRunnerOptions o = Options(&clock);
  o.circuit.failure_threshold = 2;
  RequestRunner runner(o);
  Script down;
  // Six "no connection" failures: far more than two retries, then the server is back.
  for (int i = 0; i < 6; ++i) down.responses.push_back(Transport(TransportError::kConnect));
  RequestOutcome r = runner.Run(0, nullptr, std::ref(down));
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.attempts, 7);
  EXPECT_FALSE(runner.circuit().open());
  EXPECT_GE(runner.circuit().times_opened(), 1);

  // A circuit open longer than it allows gives up with "server down".
  o.circuit.give_up_after_s = 30;
  RequestRunner short_runner(o);
  Script dead;
  for (int i = 0; i < 100; ++i) dead.responses.push_back(Transport(TransportError::kConnect));
  r = short_runner.Run(0, nullptr, std::ref(dead));
  EXPECT_EQ(r.outcome, ChatOutcome::kServerDown);
  EXPECT_NE(r.error.find("unreachable"), std::string::npos);
}

TEST(RequestRunnerTest, CancelStopsAndKeysNeverShow) {
  FakeClock clock;
  RequestRunnerOptions o = Options(&clock);
  o.api_key = ApiKey::FromSecret("sk-very-secret");
  std::vector<std::string> events;
  o.on_event = [&](const std::string& e) { events.push_back(e); };
  RequestRunner runner(o);
  std::atomic<bool> cancel{true};
  Script s;
  EXPECT_EQ(runner.Run(0, &cancel, std::ref(s)).outcome, ChatOutcome::kCancelled);
  EXPECT_EQ(s.calls, 0);
  RequestOutcome r = runner.Run(0, nullptr, [](bool, double) {
    AttemptVerdict v =
        AttemptVerdict::Fail(ChatOutcome::kServerError, "HTTP 500: bad key sk-very-secret", 500);
    v.retryable = true;
    return v;
  });
  EXPECT_EQ(r.error.find("sk-very-secret"), std::string::npos);
  EXPECT_NE(r.error.find("[redacted]"), std::string::npos);
  ASSERT_FALSE(events.empty());
  for (const std::string& e : events) EXPECT_EQ(e.find("sk-very-secret"), std::string::npos);
}

// One table for chat and transcriptions (ModelClient::Chat classifies through it too).
TEST(RequestRunnerTest, ClassifiesEveryFailure) {
  EXPECT_TRUE(ClassifyHttpFailure(Transport(TransportError::kConnect)).down);
  EXPECT_TRUE(ClassifyHttpFailure(Transport(TransportError::kConnect)).retryable);
  EXPECT_EQ(ClassifyHttpFailure(Transport(TransportError::kIdleTimeout)).outcome,
            ChatOutcome::kTimeout);
  // A stalled server is as good as down; one slow answer is not: slow, so a request's own
  // repeats never open the circuit.
  EXPECT_TRUE(ClassifyHttpFailure(Transport(TransportError::kIdleTimeout)).down);
  EXPECT_TRUE(ClassifyHttpFailure(Transport(TransportError::kIdleTimeout)).slow);
  EXPECT_TRUE(ClassifyHttpFailure(Transport(TransportError::kIdleTimeout)).retryable);
  // The request's own time is spent: not sent again.
  EXPECT_FALSE(ClassifyHttpFailure(Transport(TransportError::kTotalTimeout)).retryable);
  EXPECT_EQ(ClassifyHttpFailure(Transport(TransportError::kTooLarge)).outcome,
            ChatOutcome::kMalformed);
  EXPECT_EQ(ClassifyHttpFailure(Transport(TransportError::kReceiveFailed)).outcome,
            ChatOutcome::kConnection);
  EXPECT_FALSE(ClassifyHttpFailure(Transport(TransportError::kBodyFailed)).retryable);
  EXPECT_EQ(ClassifyHttpFailure(Status(408)).outcome, ChatOutcome::kTimeout);
  EXPECT_TRUE(ClassifyHttpFailure(Status(409)).retryable);
  EXPECT_TRUE(ClassifyHttpFailure(Status(504)).down);
  EXPECT_FALSE(ClassifyHttpFailure(Status(500)).down);
  EXPECT_EQ(ClassifyHttpFailure(Status(401)).outcome, ChatOutcome::kRejected);
  EXPECT_EQ(ClassifyHttpFailure(Status(401)).message.rfind("HTTP 401 Unauthorized", 0), 0u);
  EXPECT_TRUE(ClassifyHttpFailure(Status(401, {{"x-should-retry", "true"}})).retryable);
  EXPECT_DOUBLE_EQ(*ClassifyHttpFailure(Status(429, {{"retry-after-ms", "250"}})).retry_after,
                   0.25);
}

// The request's time on the wire is shared by its attempts: each is told what is left, and the
// request ends when it is spent (chat's model.request_timeout, one rule for every request).
TEST(RequestRunnerTest, TheRequestTimeoutSpansEveryAttempt) {
  FakeClock clock;
  RequestRunnerOptions o = Options(&clock);
  o.request_timeout_s = 10;
  o.request_timeout_setting = "model.request_timeout";
  o.retry.max_retries = 100;
  RequestRunner runner(o);
  std::vector<double> told;
  RequestOutcome r = runner.Run(0, nullptr, [&](bool, double time_left_s) {
    told.push_back(time_left_s);
    AttemptVerdict v = AttemptVerdict::Fail(ChatOutcome::kTimeout, "idle timeout", 0);
    v.retryable = true;
    v.down = true;  // a stalled answer counts toward the circuit...
    v.slow = true;  // ...but not one request's own repeats
    v.seconds = 4;
    return v;
  });
  EXPECT_EQ(r.outcome, ChatOutcome::kTimeout);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_NE(r.error.find("(model.request_timeout) over 3 attempts"), std::string::npos) << r.error;
  EXPECT_EQ(told, (std::vector<double>{10, 6, 2}));
  // One request's own slow answers never open the circuit.
  EXPECT_FALSE(runner.circuit().open());
}

}  // namespace
}  // namespace reel::llm
