#include <gtest/gtest.h>

#include "tests/cli/cli_test_util.h"
#include "tests/support/model_job_db.h"

namespace reel::testing {
namespace {

TEST(ModelJobChaptersTest, Explore) {
  const ModelJobDb& m = SharedModelJobDb(ReelPath());
  ASSERT_EQ(m.error, "");
  std::printf("%s\n%d\n%s\n", m.dir.c_str(), m.run_exit_code, m.run_err.c_str());
}

}  // namespace
}  // namespace reel::testing
