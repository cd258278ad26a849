// Job files the job_file fuzz target (tests/fuzz) found trouble with.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "jobs/spec/job_spec.h"

namespace reel::jobs {
namespace {

// Parses `text` in a child process limited to 1 GiB of memory and 20 s: a parser that never
// returns (and allocates while it spins) must fail the test, not take the machine down.
// Returns the child's exit status: 0 = parsed, 1 = rejected with a message naming the file.
int ParseInChild(const std::string& text) {
  const pid_t child = fork();
  if (child == 0) {
    struct rlimit memory = {1ull << 30, 1ull << 30};
    setrlimit(RLIMIT_AS, &memory);
    alarm(20);
    Result<JobSpec> job = ParseJobText(text, "job.yaml", "/base");
    if (job.ok()) _exit(0);
    const bool named = job.status().code() == ErrorCode::kInvalidArgument &&
                       job.status().message().starts_with("job.yaml");
    _exit(named ? 1 : 2);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status)) return 100 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return WEXITSTATUS(status);
}

// yaml-cpp 0.7's LoadAll never returns on a stray ',' at the top level (it allocates until the
// process is killed). Each must fail at once with a message instead.
TEST(JobFuzzRegressionTest, StrayCommaAtTopLevelFailsInsteadOfHanging) {
  for (std::string text :
       {",", ", a", ",\n", " ,x", "- a\n,\n", "name: a\ninputs: [x.mp4]\n...\n---\n,\n"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(ParseInChild(text), 1) << "0: accepted, 1: rejected, 100+N: killed by signal N";
  }
}

TEST(JobFuzzRegressionTest, SecondDocumentIsReportedWhereItStarts) {
  auto job = ParseJobText("name: a\ninputs: [x.mp4]\n---\nname: b\n", "job.yaml", "/base");
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("job.yaml:3:1: more than one YAML document"),
            std::string::npos)
      << job.status().message();
}

}  // namespace
}  // namespace reel::jobs
