// scripts/fetch-tokenizer-reference remembers a failed fetch only within one test run: the test
// processes of that run skip at once, and the next run asks the registry again.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::testing {
namespace {

void WriteScript(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), 0755);
}

int Lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(ReferenceFetchTest, AFailedFetchIsRetriedByTheNextRunNotRememberedForAnHour) {
  const std::string dir = ScratchDir("reference_fetch");
  const std::string bin = dir + "/bin", calls = dir + "/npm-calls";
  ASSERT_EQ(RunCommand("mkdir -p " + ShellQuote(bin)).exit_code, 0);
  // An npm that cannot reach its registry, counting its calls.
  WriteScript(bin + "/node", "#!/bin/sh\nexit 0\n");
  WriteScript(bin + "/npm", "#!/bin/sh\necho \"$*\" >>" + ShellQuote(calls) +
                                "\necho 'npm error network unreachable' >&2\nexit 1\n");
  auto fetch = [&](const std::string& env) {
    return RunCommand(
        "PATH=" + ShellQuote(bin) + ":\"$PATH\" " + env + " bash " +
        ShellQuote(std::string(REEL_SOURCE_DIR) + "/scripts/fetch-tokenizer-reference") + " " +
        ShellQuote(dir + "/reference"));
  };
  CommandResult first = fetch("REEL_REQUIRE_REFERENCES=0 REEL_TEST_RUN=1");
  EXPECT_EQ(first.exit_code, 1);
  EXPECT_NE(first.err.find("npm install tokenizers"), std::string::npos) << first.err;
  EXPECT_EQ(Lines(calls), 1);
  // The same run: remembered, the registry is not asked again.
  CommandResult again = fetch("REEL_REQUIRE_REFERENCES=0 REEL_TEST_RUN=1");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("npm install tokenizers"), std::string::npos) << again.err;
  EXPECT_EQ(Lines(calls), 1);
  // The next run asks again.
  EXPECT_EQ(fetch("REEL_REQUIRE_REFERENCES=0 REEL_TEST_RUN=2").exit_code, 1);
  EXPECT_EQ(Lines(calls), 2);
  // Where the references are required, every call asks.
  EXPECT_EQ(fetch("REEL_TEST_RUN=2 REEL_REQUIRE_REFERENCES=1").exit_code, 1);
  EXPECT_EQ(Lines(calls), 3);
}

}  // namespace
}  // namespace reel::testing
