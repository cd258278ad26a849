// `reel export` and `reel import`: a job's questions as an OpenAI Batch / `vllm run-batch` input
// file, and the answers (or errors) of such a run read back into the database.
//
// Export writes one line per question that has no answer (waiting, or left 'sent' by a run that
// ended), planned exactly as a run would send it (jobs/model_plan.h): the same body, the task's
// custom_id. Lines are streamed (base64 frames and all) to OUT.tmp and renamed to OUT at the end.
// Nothing is marked: exporting twice writes the same lines.
//
// Import reads output lines and stores each as the answer (or the failure) of the task with
// that custom_id, parsed the way an online answer is (reasoning split, schema checked, too-long
// errors recognised with the server's numbers). A task answered already, or a line imported
// before (same output id), is skipped, so importing a file twice changes nothing. Unknown
// custom_ids and lines that are not Batch output lines are counted and reported, never fatal.
//
// A split video needs two rounds (the segments, then the reduce over their answers; one more per
// level of a reduce in levels, jobs/model_plan.h), and a too-long refusal a re-fitted question:
// export again after an import to get what is left.
//
// Both take the database's run lock: they refuse to work while a run holds it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/job_spec.h"

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
};

struct ImportResult {
  int64_t lines = 0;
  int64_t answered = 0;               // answers stored
  int64_t failed = 0;                 // failures stored (errors in the file)
  int64_t already = 0;                // answered before, or this line imported before
  int64_t unknown = 0;                // custom_id of no task in this database
  int64_t bad = 0;                    // not a Batch output line
  std::vector<std::string> problems;  // the first few unknown / bad lines, with their numbers
};

Result<ImportResult> ImportBatch(const ImportOptions& options);

}  // namespace reel::jobs
