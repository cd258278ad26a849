// Query with bound parameters: values reach the statement as they are (a quote in a job name is
// data, not SQL), every value type binds, and more values than parameters is refused.
#include <gtest/gtest.h>

#include <string>

#include "storage/query.h"
#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

class QueryParametersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ =
        reel::testing::ScratchDir(std::string("QueryParametersTest.") +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name()) +
        "/reel.db";
    auto store = Store::Open(path_);
    ASSERT_TRUE(store.ok());
    for (const char* name : {"plain", "it's; DROP TABLE jobs; --", "x' OR '1'='1"}) {
      ASSERT_TRUE(store->UpsertJob({.name = name, .spec_text = "s"}).ok());
    }
  }
  std::string path_;
};

TEST_F(QueryParametersTest, TextIsDataNotSql) {
  for (const std::string name : {"it's; DROP TABLE jobs; --", "x' OR '1'='1", "plain"}) {
    auto table = Query(path_, "SELECT name FROM jobs WHERE name = ?1", {.parameters = {name}});
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    ASSERT_EQ(table->rows.size(), 1u) << name;
    EXPECT_EQ(std::get<std::string>(table->rows[0][0]), name);
  }
  auto none = Query(path_, "SELECT name FROM jobs WHERE name = ?1",
                    {.parameters = {std::string("x' OR '1'='1' --")}});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->rows.empty());
}

TEST_F(QueryParametersTest, EveryValueTypeBinds) {
  auto table = Query(path_, "SELECT ?1, ?2, ?3, ?4, typeof(?5)",
                     {.parameters = {int64_t{7}, 2.5, std::string("t"),
                                     Blob{std::string("\x00\x01", 2)}, std::monostate{}}});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->rows.size(), 1u);
  const auto& row = table->rows[0];
  EXPECT_EQ(std::get<int64_t>(row[0]), 7);
  EXPECT_EQ(std::get<double>(row[1]), 2.5);
  EXPECT_EQ(std::get<std::string>(row[2]), "t");
  EXPECT_EQ(std::get<Blob>(row[3]).bytes, std::string("\x00\x01", 2));
  EXPECT_EQ(std::get<std::string>(row[4]), "null");
}

TEST_F(QueryParametersTest, MoreValuesThanParametersIsRefused) {
  auto table = Query(path_, "SELECT ?1", {.parameters = {int64_t{1}, int64_t{2}}});
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), ErrorCode::kInvalidArgument);
  // Unbound parameters stay NULL, as before.
  auto unbound = Query(path_, "SELECT ?1 IS NULL");
  ASSERT_TRUE(unbound.ok());
  EXPECT_EQ(std::get<int64_t>(unbound->rows[0][0]), 1);
}

}  // namespace
}  // namespace reel::storage
