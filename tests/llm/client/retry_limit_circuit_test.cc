// Retry timing, the rate limit and the circuit breaker, on a simulated clock.
#include <gtest/gtest.h>

#include <cmath>

#include "llm/client/circuit_breaker.h"
#include "llm/client/rate_limiter.h"
#include "llm/client/retry_policy.h"
#include "tests/llm/client/fake_clock.h"

namespace reel::llm {
namespace {

using testing::FakeClock;

TEST(RetryPolicyTest, RetryableStatuses) {
  for (int s : {408, 409, 429, 500, 502, 503, 504, 599}) EXPECT_TRUE(IsRetryableStatus(s)) << s;
  for (int s : {200, 400, 401, 403, 404, 413, 422}) EXPECT_FALSE(IsRetryableStatus(s)) << s;
}

// min(0.5 * 2^n, 8) seconds times a factor in (0.75, 1], as the OpenAI client waits.
TEST(RetryPolicyTest, JitteredExponentialBackoff) {
  RetryOptions o;
  const double expected[] = {0.5, 1, 2, 4, 8, 8, 8};
  for (int n = 0; n < 7; ++n) {
    EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, n, std::nullopt, 0.0), expected[n]);
    EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, n, std::nullopt, 1.0), expected[n] * 0.75);
    const double mid = RetryDelaySeconds(o, n, std::nullopt, 0.5);
    EXPECT_GT(mid, expected[n] * 0.75);
    EXPECT_LE(mid, expected[n]);
  }
}

TEST(RetryPolicyTest, RetryAfterHeadersUpTo120Seconds) {
  RetryOptions o;
  const std::time_t now = 1700000000;
  EXPECT_DOUBLE_EQ(*ParseRetryAfter("1500", "", now), 1.5);
  EXPECT_DOUBLE_EQ(*ParseRetryAfter("", "3", now), 3);
  EXPECT_DOUBLE_EQ(*ParseRetryAfter("", "0.25", now), 0.25);
  EXPECT_DOUBLE_EQ(*ParseRetryAfter("250", "9", now), 0.25);  // the ms header wins
  // An HTTP date 7 s after `now` (2023-11-14 22:13:20 GMT).
  EXPECT_DOUBLE_EQ(*ParseRetryAfter("", "Tue, 14 Nov 2023 22:13:27 GMT", now), 7);
  EXPECT_FALSE(ParseRetryAfter("", "soon", now));
  EXPECT_FALSE(ParseRetryAfter("", "", now));

  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 0, 3.0, 0.9), 3.0);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 0, 120.0, 0.9), 120.0);
  // Above 120 s, zero or negative: the hint is ignored and the backoff used.
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 1, 121.0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 1, 0.0, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(RetryDelaySeconds(o, 1, -5.0, 0.0), 1.0);
}

TEST(RateLimiterTest, RequestsPerMinute) {
  FakeClock clock;
  RateLimiter limiter({/*requests_per_minute=*/60, /*tokens_per_minute=*/0}, &clock);
  const double start = clock.Now();
  // A bucket of 10 seconds' worth goes at once; then one per second.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(limiter.Acquire(1, nullptr), 0);
  for (int i = 0; i < 20; ++i) limiter.Acquire(1, nullptr);
  EXPECT_NEAR(clock.Now() - start, 20.0, 1e-6);
}

TEST(RateLimiterTest, TokensPerMinuteWithDebtAndAdjust) {
  FakeClock clock;
  RateLimiter limiter({0, /*tokens_per_minute=*/60000}, &clock);  // 1000 tokens/s, bucket 10,000
  const double start = clock.Now();
  EXPECT_EQ(limiter.Acquire(10000, nullptr), 0);
  // A request bigger than the bucket waits for a full bucket, then leaves it in debt.
  EXPECT_NEAR(limiter.Acquire(50000, nullptr), 10.0, 1e-6);
  EXPECT_NEAR(limiter.Acquire(1000, nullptr), 41.0, 1e-6);  // 40,000 of debt, then 1,000
  // A reservation that turned out smaller gives the difference back.
  limiter.Adjust(/*reserved=*/5000, /*actual=*/0);
  EXPECT_EQ(limiter.Acquire(5000, nullptr), 0);
  EXPECT_NEAR(clock.Now() - start, 51.0, 1e-6);
}

TEST(RateLimiterTest, CancelStopsTheWait) {
  FakeClock clock;
  RateLimiter limiter({1, 0}, &clock);
  limiter.Acquire(1, nullptr);
  std::atomic<bool> cancel{true};
  EXPECT_EQ(limiter.Acquire(1, &cancel), -1);
}

TEST(CircuitBreakerTest, OpensAfterThresholdProbesAndCloses) {
  FakeClock clock;
  std::vector<std::string> changes;
  CircuitBreaker breaker({/*failure_threshold=*/3, /*first_pause_s=*/5, /*max_pause_s=*/20,
                          /*give_up_after_s=*/1000},
                         &clock, [&](bool open, const std::string& m) {
                           changes.push_back((open ? "open: " : "closed: ") + m);
                         });
  EXPECT_EQ(breaker.Await(nullptr), CircuitBreaker::Verdict::kGo);
  EXPECT_FALSE(breaker.RecordDown(false, "refused"));
  EXPECT_FALSE(breaker.RecordDown(false, "refused"));
  breaker.RecordUp();  // an answer resets the count
  EXPECT_FALSE(breaker.RecordDown(false, "refused"));
  EXPECT_FALSE(breaker.RecordDown(false, "refused"));
  EXPECT_TRUE(breaker.RecordDown(false, "HTTP 503"));
  EXPECT_TRUE(breaker.open());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_NE(changes[0].find("HTTP 503"), std::string::npos);

  // The first waiter becomes the probe after the first pause.
  const double t0 = clock.Now();
  EXPECT_EQ(breaker.Await(nullptr), CircuitBreaker::Verdict::kProbe);
  EXPECT_NEAR(clock.Now() - t0, 5, 1e-6);
  // A failed probe doubles the pause; failures of others do not move it.
  EXPECT_TRUE(breaker.RecordDown(true, "refused"));
  EXPECT_TRUE(breaker.RecordDown(false, "refused"));
  EXPECT_EQ(breaker.Await(nullptr), CircuitBreaker::Verdict::kProbe);
  EXPECT_NEAR(clock.Now() - t0, 15, 1e-6);
  breaker.RecordUp();
  EXPECT_FALSE(breaker.open());
  EXPECT_EQ(breaker.Await(nullptr), CircuitBreaker::Verdict::kGo);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1].rfind("closed", 0), 0u);
  EXPECT_EQ(breaker.times_opened(), 1);
  EXPECT_NEAR(breaker.seconds_open(), 15, 1e-6);
}

TEST(CircuitBreakerTest, GivesUpAfterTheLimit) {
  FakeClock clock;
  CircuitBreaker breaker({1, 10, 10, /*give_up_after_s=*/25}, &clock);
  EXPECT_TRUE(breaker.RecordDown(false, "refused"));
  for (int i = 0; i < 2; ++i) {  // probes at 10 s and 20 s
    ASSERT_EQ(breaker.Await(nullptr), CircuitBreaker::Verdict::kProbe);
    breaker.RecordDown(true, "refused");
  }
  EXPECT_EQ(breaker.Await(nullptr), CircuitBreaker::Verdict::kGiveUp);
  std::atomic<bool> cancel{true};
  EXPECT_EQ(breaker.Await(&cancel), CircuitBreaker::Verdict::kGiveUp);
}

// Timeouts count toward the circuit, told apart by request: one slow answer retried again and
// again never opens it; timeouts of two requests (a server that accepts and stalls) do.
TEST(CircuitBreakerTest, TimeoutsOfOneRequestAloneNeverOpenIt) {
  FakeClock clock;
  CircuitBreaker breaker({/*failure_threshold=*/3, 5, 20, 1000}, &clock);
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(breaker.RecordDown(false, "read timeout", /*slow_request=*/7)) << i;
  }
  EXPECT_FALSE(breaker.open());
  // A second request times out too: the server stalls.
  EXPECT_TRUE(breaker.RecordDown(false, "read timeout", /*slow_request=*/8));
  EXPECT_TRUE(breaker.open());
  EXPECT_EQ(breaker.times_opened(), 1);

  // Other down failures count as before, mixed with timeouts too.
  breaker.RecordUp();
  EXPECT_FALSE(breaker.RecordDown(false, "read timeout", 9));
  EXPECT_FALSE(breaker.RecordDown(false, "refused"));
  EXPECT_TRUE(breaker.RecordDown(false, "read timeout", 9));
  breaker.RecordUp();
  // An answer in between resets the count: slow answers among good ones never open it.
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(breaker.RecordDown(false, "read timeout", 10 + i));
    EXPECT_FALSE(breaker.RecordDown(false, "read timeout", 20 + i));
    breaker.RecordUp();
  }
  EXPECT_EQ(breaker.times_opened(), 2);
}

}  // namespace
}  // namespace reel::llm
