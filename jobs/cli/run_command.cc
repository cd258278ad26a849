// reel run JOB.yaml [--db FILE] [--workers N] [--wait] [--retry-failed] [--shard I/N]
//                   [--shards N] [--log-format text|json] [--verbose]
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "jobs/cli/commands.h"
#include "jobs/cli/stop_signal.h"
#include "jobs/progress.h"
#include "jobs/run/runner.h"
#include "jobs/run/shard.h"
#include "jobs/spec/job_spec.h"

namespace reel::cli {
namespace {

struct RunFlags {
  std::string job_file;
  std::optional<std::string> db;
  int workers = 0;
  bool wait = false;
  bool retry_failed = false;
  std::optional<std::string> shard;
  std::optional<int> shards;
  std::string log_format = "text";
  bool verbose = false;
  std::optional<std::string> fallback_encoding;
};

int Run(const RunFlags& flags) {
  Result<jobs::JobSpec> job = jobs::LoadJobFile(flags.job_file);
  if (!job.ok()) {
    std::fprintf(stderr, "%s\n", job.status().message().c_str());
    std::fprintf(stderr, "reel run: invalid job file; see docs/job-file.md\n");
    return kExitUsage;
  }
  if (Status set = SetFallbackEncoding(flags.fallback_encoding, *job); !set.ok()) {
    std::fprintf(stderr, "reel run: %s\n", set.message().c_str());
    return kExitUsage;
  }
  Result<jobs::ShardSpec> shard = jobs::ResolveShard(flags.shard, flags.shards);
  if (!shard.ok()) {
    std::fprintf(stderr, "reel run: %s\n", shard.status().message().c_str());
    return kExitUsage;
  }
  jobs::ProgressReporter progress(jobs::ProgressReporter::ChooseStyle(flags.log_format, stderr),
                                  stderr, flags.verbose);
  for (const std::string& warning : job->warnings) progress.Warning(warning);

  StopSignalHandlers handlers;
  g_stop_signal.store(0);
  jobs::RunOptions options;
  options.database = jobs::DatabasePathFor(*job, flags.db, *shard);
  options.workers = flags.workers;
  options.wait_for_lock = flags.wait;
  options.retry_failed = flags.retry_failed;
  options.shard = *shard;
  options.progress = &progress;
  options.stop_signal = &g_stop_signal;
  jobs::RunOutcome outcome = jobs::RunJob(*job, options);
  switch (outcome.result) {
    case jobs::RunResult::kSucceeded:
      return kExitOk;
    case jobs::RunResult::kSomeFailed:
      return kExitFailed;
    case jobs::RunResult::kQuestionsFailed:
      return kExitPartial;
    case jobs::RunResult::kInterrupted:
      if (outcome.run_id == 0) progress.Info("interrupted while waiting for the lock");
      return outcome.stop_signal == SIGTERM ? kExitSigterm
             : outcome.stop_signal > 0      ? 128 + outcome.stop_signal
                                            : kExitSigint;
    case jobs::RunResult::kLockHeld:
      std::fprintf(stderr,
                   "reel run: %s\nreel run: another run is in progress; try again later, or "
                   "pass --wait to queue behind it\n",
                   outcome.message.c_str());
      return kExitLocked;
    case jobs::RunResult::kInvalidJob:
      std::fprintf(stderr, "reel run: %s\n", outcome.message.c_str());
      return kExitUsage;
    case jobs::RunResult::kError:
      break;
  }
  std::fprintf(stderr, "reel run: %s\n", outcome.message.c_str());
  return kExitFailed;
}

}  // namespace

Status SetFallbackEncoding(const std::optional<std::string>& encoding, jobs::JobSpec& job) {
  if (!encoding) return Status::Ok();
  Status known = CheckTextEncoding(*encoding);
  if (!known.ok()) return known.WithPrefix("--fallback-encoding");
  job.text.fallback_encoding = *encoding;
  return Status::Ok();
}

void AddRunCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Process a job: sample frames, thumbnails and text of every input into the database, "
      "skipping what is already done");
  cmd->footer(
      "Exit status (what this run did; failures of earlier runs that were not retried are\n"
      "listed by `reel status`, not reported again):\n"
      "  0    done: every item done or skipped, every question answered (or nothing to do)\n"
      "  1    some items failed in this run, or the database failed\n"
      "  2    invalid job file or command line\n"
      "  3    the items are fine, but questions failed in this run or could not be asked\n"
      "       (the model server unreachable, the API key refused); they wait for the next run\n"
      "  4    another `reel run` holds this database (its pid, host and start are printed)\n"
      "  130  interrupted by SIGINT (Ctrl-C); 143 interrupted by SIGTERM\n"
      "Safe to run from cron: one run per database at a time (lock file <db>.lock); kill it at\n"
      "any moment and the next run carries on where it stopped. Shards: --shard I/N, or\n"
      "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX with --shards N or\n"
      "REEL_SHARD_COUNT; each shard writes <db stem>.shard-I-of-N.db (merge with `reel merge`).\n"
      "See docs/running.md.");
  cmd->add_option("JOB", flags->job_file, "Job file (YAML)")->required();
  cmd->add_option("--db", flags->db,
                  "Database to write (default: the job's storage.database, beside the job file)");
  cmd->add_option("-j,--workers", flags->workers,
                  "Items processed at once (default: min(4, cores))")
      ->check(CLI::Range(1, 256));
  cmd->add_flag("--wait", flags->wait,
                "If another run holds the database, wait for it instead of exiting with 4");
  cmd->add_flag("--retry-failed", flags->retry_failed,
                "Also retry items that failed before with the same content and settings");
  cmd->add_option("--shard", flags->shard, "Process only shard I of N (0-based), e.g. 0/4");
  cmd->add_option("--shards", flags->shards,
                  "Shard count for JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--log-format", flags->log_format,
                  "text: a progress line on a terminal, else only failures and a summary; "
                  "json: one JSON object per event on stderr")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_val("text");
  cmd->add_flag("-v,--verbose", flags->verbose,
                "Without a terminal, also print every item's outcome and warnings");
  cmd->add_option("--fallback-encoding", flags->fallback_encoding,
                  "How subtitle and document text that is neither UTF-8 nor marked UTF-16 is "
                  "read (overrides the job's text.fallback_encoding; default windows-1252; any "
                  "iconv name, e.g. windows-1251; utf-8 = never guess)");
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace reel::cli
