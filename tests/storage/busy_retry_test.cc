#include "storage/busy_retry.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

TEST(BusyRetryTest, RunsABusyWriteAgainUntilItSucceeds) {
  int calls = 0;
  Result<int> result = RetryBusy([&]() -> Result<int> {
    if (++calls < 3) return Unavailable("database is locked");
    return 42;
  });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, 42);
  EXPECT_EQ(calls, 3);
}

TEST(BusyRetryTest, GivesUpAfterTheLastAttemptWithTheBusyError) {
  int calls = 0;
  Status status = RetryBusy([&] {
    ++calls;
    return Unavailable("database is locked");
  });
  EXPECT_EQ(status.code(), ErrorCode::kUnavailable);
  EXPECT_EQ(calls, kBusyAttempts);
}

TEST(BusyRetryTest, OtherErrorsAreNotRetried) {
  int calls = 0;
  Status status = RetryBusy([&] {
    ++calls;
    return InvalidArgument("bad JSON");
  });
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(calls, 1);
}

// A real lock: another connection holds the write lock past the writer's busy timeout; the
// write alone fails with kUnavailable, and RetryBusy gets it through once the lock is let go.
TEST(BusyRetryTest, AWriteLockedPastTheBusyTimeoutGoesThroughOnRetry) {
  const std::string path = testing::ScratchDir("BusyRetryTest.Lock") + "/reel.db";
  auto holder = Database::Open(path);
  ASSERT_TRUE(holder.ok()) << holder.status().ToString();
  auto store = Store::Open(path, {.busy_timeout_ms = 20});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto job = store->UpsertJob({.name = "j", .spec_text = "spec"});
  ASSERT_TRUE(job.ok()) << job.status().ToString();

  ASSERT_TRUE(holder->Execute("BEGIN IMMEDIATE").ok());
  Status alone = store->LogEvent({.message = "alone"});
  EXPECT_EQ(alone.code(), ErrorCode::kUnavailable) << alone.ToString();
  EXPECT_TRUE(IsBusy(alone));

  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    EXPECT_TRUE(holder->Execute("COMMIT").ok());
  });
  int calls = 0;
  Status retried = RetryBusy([&] {
    ++calls;
    return store->LogEvent({.message = "retried"});
  });
  release.join();
  EXPECT_TRUE(retried.ok()) << retried.ToString();
  EXPECT_GT(calls, 1);
}

}  // namespace
}  // namespace reel::storage
