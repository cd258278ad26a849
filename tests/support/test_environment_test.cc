// The environment main() gives every test (tests/support/test_environment.h): its own HOME and
// XDG folders inside the build tree, none of the user's Reel settings, and `reel` started by a
// test sees the same.
#include "tests/support/test_environment.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
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

// A command that hangs fails its test within the deadline, saying what each process waits in,
// instead of holding the test until ctest's timeout kills it without a word.
TEST(TestEnvironmentTest, AHungCommandIsKilledAndDescribed) {
  const std::string before = Env("REEL_TEST_COMMAND_SECONDS");
  ::setenv("REEL_TEST_COMMAND_SECONDS", "1", 1);
  CommandResult result;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NONFATAL_FAILURE(result = RunCommand("echo started; sleep 120 | cat"),
                          "the command ran longer than 1 s and was killed");
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (before.empty()) {
    ::unsetenv("REEL_TEST_COMMAND_SECONDS");
  } else {
    ::setenv("REEL_TEST_COMMAND_SECONDS", before.c_str(), 1);
  }
  EXPECT_LT(took, 100) << "the sleep was killed, not waited for";
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
  EXPECT_EQ(result.out, "started\n") << "what it printed before is kept";
  // Each process of the pipeline is named with its kernel wait.
  EXPECT_NE(result.err.find("sleep 120"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("cat"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("waits in"), std::string::npos) << result.err;
  // A command that ends in time is untouched.
  CommandResult quick = RunCommand("echo fine; exit 3");
  EXPECT_EQ(quick.exit_code, 3);
  EXPECT_EQ(quick.out, "fine\n");
}

}  // namespace
}  // namespace reel::testing
