// `reel export` and `reel import`: a job's questions as an OpenAI Batch / `vllm run-batch` input
// file, and the answers (or errors) of such a run read back into the database.
//
// Export writes one line per question that has no answer (waiting, or left 'sent' by a run that
// ended), planned exactly as a run would send it (jobs/model/model_plan.h): the same body, the
// task's custom_id. Lines are streamed (base64 frames and all) to OUT.tmp and renamed to OUT at the
// end. Nothing is marked: exporting twice writes the same lines.
//
// Import reads output lines and stores each as the answer (or the failure) of the task with
// that custom_id, parsed the way an online answer is (reasoning split, schema checked, too-long
// errors recognised with the server's numbers). A task answered already, or a line imported
// before (same output id), is skipped, so importing a file twice changes nothing. Unknown
// custom_ids, lines that are not Batch output lines, lines longer than an online answer may be
// (ImportOptions::max_line_bytes; skipped without being held in memory) and a custom_id repeated
// within the file are counted and reported with the file and line number, never fatal: the rest
// of the file is imported.
//
// An import killed part-way leaves every line it stored complete. A line's request row is
// written before its answer: one killed in between stays 'sent', and the next import (or run)
// marks it interrupted and stores the line's answer then (TaskStore::RequeueInterrupted).
//
// A split video needs two rounds (the segments, then the reduce over their answers; one more per
// level of a reduce in levels, jobs/model/model_plan.h), and a too-long refusal a re-fitted
// question: export again after an import to get what is left.
//
// Both take the database's run lock: they refuse to work while a run holds it.
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
