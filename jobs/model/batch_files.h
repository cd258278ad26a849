// `reel export` and `reel import`: a job's questions as an OpenAI Batch / `vllm run-batch` input
// file (planned as a run would send them), and that run's answers read back into the database.
// Both are idempotent, report bad lines (file and line number) without stopping, and take the
// database's run lock.
// Crash safety and the rounds a split video needs: jobs/model/README.md, "Batch files".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/spec/job_spec.h"

namespace reel::jobs {

struct ExportOptions {
  std::string database;
  std::string out_path;
  std::string dialect = "vllm";  // the body's dialect: vllm, sglang or openai
  bool retry_failed = false;     // also failed questions (never too-long ones)
};

struct ExportResult {
  int64_t lines = 0;
  int64_t items = 0;  // items with at least one line
  int64_t bytes = 0;
  std::vector<std::string> warnings;  // items that could not be exported, and why
};

// Errors: the run lock is held (kUnavailable), the database or the output cannot be written.
Result<ExportResult> ExportBatch(const JobSpec& job, const ExportOptions& options);

struct ImportOptions {
  std::string database;
  std::string results_path;
  std::string dialect = "vllm";  // how to read answers: vllm, sglang or openai
  // The job, when known: answers are checked by their prompt's kind (a chapters list against
  // the item's frames; no follow-up question is possible here) and priced by model.price.
  const JobSpec* job = nullptr;
  // Longer lines are not read (the limit on an online answer's body,
  // llm::HttpClient::Options::max_response_bytes).
  int64_t max_line_bytes = kDefaultMaxImportLineBytes;

  static const int64_t kDefaultMaxImportLineBytes;
};

struct ImportResult {
  int64_t lines = 0;
  int64_t answered = 0;         // answers stored
  int64_t failed = 0;           // failures stored (errors in the file)
  int64_t already = 0;          // answered before, or this line imported before
  int64_t unknown = 0;          // custom_id of no task in this database
  int64_t bad = 0;              // not a Batch output line
  int64_t too_long = 0;         // longer than max_line_bytes: not read
  int64_t duplicates = 0;       // a custom_id an earlier line of the file has
  int64_t interrupted = 0;      // requests left 'sent' by a process that ended, marked interrupted
  int64_t segment_answers = 0;  // answers about one segment of a split video (a reduce follows)
  int64_t refit = 0;            // prompts the server found too long (they are re-fitted)
  // The first few unknown, bad, too long and repeated lines ("FILE:LINE: why").
  std::vector<std::string> problems;
};

Result<ImportResult> ImportBatch(const ImportOptions& options);

}  // namespace reel::jobs
