#include "storage/query.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

class QueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ =
        reel::testing::ScratchDir(std::string("QueryTest.") +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name()) +
        "/reel.db";
    auto store = Store::Open(path_);
    ASSERT_TRUE(store.ok());
    auto job = store->UpsertJob({.name = "j", .spec_text = "s"});
    ASSERT_TRUE(job.ok());
    ItemRecord item{.job_id = *job, .path = "a.mp4", .settings_hash = "s"};
    ASSERT_TRUE(store->UpsertItem(item).ok());
    ASSERT_TRUE(store->PutBlob(std::string("\x01\x02\x03", 3)).ok());
  }
  std::string path_;
};

TEST_F(QueryTest, ReturnsColumnsAndTypedValues) {
  auto table = Query(path_,
                     "SELECT 1 AS i, 2.5 AS r, 'x' AS t, NULL AS n, x'00ff' AS b, path "
                     "FROM items");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(table->columns, (std::vector<std::string>{"i", "r", "t", "n", "b", "path"}));
  ASSERT_EQ(table->rows.size(), 1u);
  const auto& row = table->rows[0];
  EXPECT_EQ(std::get<int64_t>(row[0]), 1);
  EXPECT_EQ(std::get<double>(row[1]), 2.5);
  EXPECT_EQ(std::get<std::string>(row[2]), "x");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(row[3]));
  EXPECT_EQ(std::get<Blob>(row[4]).bytes, std::string("\x00\xff", 2));
  EXPECT_EQ(FormatValue(row[0]), "1");
  EXPECT_EQ(FormatValue(row[1]), "2.5");
  EXPECT_EQ(FormatValue(row[3]), "NULL");
  EXPECT_EQ(FormatValue(row[4]), "<blob 2 bytes>");
  EXPECT_FALSE(table->truncated);
}

TEST_F(QueryTest, TruncatesAtMaxRows) {
  auto table = Query(path_,
                     "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n "
                     "WHERE x < 50) SELECT x FROM n",
                     {.max_rows = 10});
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->rows.size(), 10u);
  EXPECT_TRUE(table->truncated);
}

TEST_F(QueryTest, RefusesWritesAndLeavesTheFileUnchanged) {
  const std::vector<std::string> kWrites = {
      "DELETE FROM items",
      "INSERT INTO jobs(name, spec_text, spec_hash) VALUES ('x', 'y', 'z')",
      "UPDATE items SET status = 'done'",
      "DROP TABLE items",
      "CREATE TABLE t(x)",
      "PRAGMA user_version = 7",
      "PRAGMA query_only = OFF",
      "VACUUM",
      "ATTACH '" + path_ + ".other' AS other",
  };
  for (const std::string& sql : kWrites) {
    auto result = Query(path_, sql);
    EXPECT_FALSE(result.ok()) << sql;
  }
  // Writes hidden behind a second statement are refused too.
  EXPECT_EQ(Query(path_, "SELECT 1; DELETE FROM items").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".other"));
  auto count = Query(path_, "SELECT count(*) FROM items");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(std::get<int64_t>(count->rows[0][0]), 1);
  // Read-only pragmas work.
  EXPECT_TRUE(Query(path_, "PRAGMA user_version").ok());
  EXPECT_TRUE(Query(path_, "PRAGMA integrity_check").ok());
}

TEST_F(QueryTest, ReportsBadSqlAndMissingFiles) {
  auto bad = Query(path_, "SELEC nonsense");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("syntax error"), std::string::npos);
  auto missing = Query(path_ + ".missing", "SELECT 1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(path_ + ".missing"));
}

// A recursive CTE that never ends and never yields a row: only the clock can stop it.
TEST_F(QueryTest, StopsAtTheTimeLimit) {
  const std::string forever =
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
  auto start = std::chrono::steady_clock::now();
  auto table = Query(path_, forever, {.timeout_s = 0.3});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(table.status().message().find("stopped after 0.3 s"), std::string::npos)
      << table.status().message();
  EXPECT_LT(seconds, 30);  // stopped, not run to the end (which never comes)
}

TEST_F(QueryTest, StopsAtTheMemoryLimit) {
  // One value that grows inside SQLite to 30 MB: its heap hits the limit.
  auto grows = Query(path_,
                     "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                     "LIMIT 300000) SELECT length(group_concat(printf('%.100c', 'x'))) FROM c",
                     {.max_memory_bytes = 8 << 20});
  ASSERT_FALSE(grows.ok());
  EXPECT_EQ(grows.status().code(), ErrorCode::kLimitExceeded) << grows.status().ToString();
  EXPECT_NE(grows.status().message().find("bytes of memory"), std::string::npos)
      << grows.status().message();
  // Many rows, each small: the rows kept for printing hit the limit.
  auto rows = Query(path_,
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                    "LIMIT 1000000) SELECT printf('%.1000c', 'x') FROM c",
                    {.max_rows = 1000000, .max_memory_bytes = 8 << 20});
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), ErrorCode::kLimitExceeded) << rows.status().ToString();
  // The limit is lifted afterwards: the next query in this process may use more.
  auto after = Query(path_, "SELECT length(printf('%.20000000c', 'x'))");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(std::get<int64_t>(after->rows[0][0]), 20000000);
}

TEST_F(QueryTest, IntegrityCheckIsOk) {
  auto table = Query(path_, "PRAGMA integrity_check");
  ASSERT_TRUE(table.ok());
  ASSERT_EQ(table->rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(table->rows[0][0]), "ok");
}

}  // namespace
}  // namespace reel::storage
