#include "base/status.h"

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "tests/support/test_media.h"

namespace reel {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument(std::to_string(x) + " is odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  REEL_ASSIGN_OR_RETURN(int half, Half(x));
  REEL_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(StatusTest, OkAndErrorsCarryCodeAndMessage) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = CorruptData("clip.mp4: truncated");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kCorruptData);
  EXPECT_EQ(s.ToString(), "corrupt data: clip.mp4: truncated");
  EXPECT_EQ(s.WithPrefix("job").message(), "job: clip.mp4: truncated");
}

TEST(StatusTest, AssignOrReturnPropagatesTheFirstError) {
  EXPECT_EQ(Quarter(8).value(), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "3 is odd");
}

TEST(FileUtilTest, WriteAtomicallyThenRead) {
  std::string dir = testing::ScratchDir("FileUtilTest");
  std::string path = dir + "/a/b/c.txt";
  ASSERT_TRUE(MakeDirectories(dir + "/a/b").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "hello").ok());
  EXPECT_EQ(ReadFileToString(path).value(), "hello");
  EXPECT_EQ(ReadFileToString(path, 3).status().code(), ErrorCode::kLimitExceeded);
  EXPECT_EQ(ReadFileToString(dir + "/missing").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(ReadFileToString(dir).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace reel
