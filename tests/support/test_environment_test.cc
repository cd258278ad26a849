// The environment main() gives every test (tests/support/test_environment.h): its own HOME and
// XDG folders inside the build tree, none of the user's Reel settings, and `reel` started by a
// test sees the same.
#include "tests/support/test_environment.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace reel::testing {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

bool IsInside(const std::string& path, const std::string& dir) {
  return path.rfind(dir + "/", 0) == 0;
}

TEST(TestEnvironmentTest, HomeAndXdgFoldersAreTheTestsOwn) {
  const std::string home = Env("HOME");
  ASSERT_TRUE(IsInside(home, REEL_BINARY_DIR)) << home;
  EXPECT_NE(home, UserHome());
  EXPECT_TRUE(std::filesystem::is_directory(home));
  EXPECT_TRUE(IsInside(Env("XDG_DATA_HOME"), home)) << Env("XDG_DATA_HOME");
  EXPECT_TRUE(IsInside(Env("XDG_CONFIG_HOME"), home)) << Env("XDG_CONFIG_HOME");
  EXPECT_TRUE(IsInside(Env("XDG_CACHE_HOME"), home)) << Env("XDG_CACHE_HOME");
  for (const char* name :
       {"REEL_DB", "REEL_MODEL_URL", "REEL_MODEL", "REEL_API_KEY", "REEL_TOKENIZER",
        "REEL_SHARD_COUNT", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"}) {
    EXPECT_EQ(std::getenv(name), nullptr) << name << " leaks into the tests";
  }
}

TEST(TestEnvironmentTest, ReelStartedByATestUsesTheTestsHome) {
  // `reel query --ask-db` reads reel ask's database under $XDG_DATA_HOME: the test's, not the
  // user's.
  const std::string dir = ScratchDir("environment_reel");
  CommandResult r = Reel("query \"SELECT 1\"", dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no database at reel.db"), std::string::npos) << r.err;
  const std::string ask_db = Env("XDG_DATA_HOME") + "/reel/reel.db";
  WriteText(dir + "/job.yaml", "name: notes\ninputs: [notes.md]\n");
  WriteText(dir + "/notes.md", "# Notes\n");
  CommandResult run = Reel("run job.yaml --db " + ShellQuote(ask_db), dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CommandResult found =
      Reel("query --ask-db \"SELECT count(*) AS n FROM items\" --format csv", dir);
  EXPECT_EQ(found.out, "n\r\n1\r\n") << found.err;
}

void WithoutNpm() { REEL_SKIP_WITHOUT_REFERENCE(kNpm) << "no node"; }
void WithoutSharedMedia() { REEL_SKIP_WITHOUT_REFERENCE(kSharedMedia) << "no corpus"; }

// What the macro reports, without reporting it for this test.
::testing::TestPartResult Reported(void (*missing)()) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    missing();
  }
  EXPECT_EQ(results.size(), 1);
  return results.GetTestPartResult(0);
}

TEST(TestEnvironmentTest, RequiredReferencesFailInsteadOfSkipping) {
  const std::string before = Env("REEL_REQUIRE_REFERENCES");
  ::unsetenv("REEL_REQUIRE_REFERENCES");
  ::testing::TestPartResult skipped = Reported(WithoutNpm);
  EXPECT_TRUE(skipped.skipped());
  EXPECT_STREQ(skipped.message(), "missing reference (npm): no node");

  ::setenv("REEL_REQUIRE_REFERENCES", "1", 1);
  ::testing::TestPartResult failed = Reported(WithoutNpm);
  EXPECT_TRUE(failed.fatally_failed());
  EXPECT_STREQ(failed.message(),
               "required reference missing (npm; REEL_REQUIRE_REFERENCES=1): no node");
  EXPECT_TRUE(ReferenceRequired(Reference::kDebianPackage));
  EXPECT_TRUE(ReferenceRequired(Reference::kProgram));
  // CI has no shared media corpus: its tests still skip.
  EXPECT_TRUE(Reported(WithoutSharedMedia).skipped());

  ::setenv("REEL_REQUIRE_REFERENCES", "0", 1);
  EXPECT_TRUE(Reported(WithoutNpm).skipped());
  if (before.empty()) {
    ::unsetenv("REEL_REQUIRE_REFERENCES");
  } else {
    ::setenv("REEL_REQUIRE_REFERENCES", before.c_str(), 1);
  }
}

}  // namespace
}  // namespace reel::testing
