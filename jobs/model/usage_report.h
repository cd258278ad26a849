// The model part of a run report: requests, tokens, throughput, time to first token, how far
// Reel's token counts were from the server's, and cost. Printed at the end of `reel run` and
// kept in runs.report_json for `reel status`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobs/spec/job_spec.h"
#include "storage/tasks.h"

namespace reel::jobs {

struct RunReport {
  int64_t requests = 0;  // sends finished in the run
  int64_t ok = 0;
  int64_t failed = 0;
  int64_t cancelled = 0;  // stopped with the run; asked again by the next
  int64_t retried = 0;    // HTTP retries inside requests
  int64_t rechecked = 0;  // answers that failed their prompt kind's check, asked again
  int64_t resent = 0;     // requests of a question that had been sent before
  int64_t too_long = 0;
  int64_t truncated = 0;  // answers cut by max_output_tokens
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t reasoning_tokens = 0;
  double model_seconds = 0;  // first request sent to last answer
  double prompt_tokens_per_s = 0;
  double generation_tokens_per_s = 0;
  std::optional<double> latency_mean_s, latency_p99_s;
  std::optional<double> ttft_mean_s, ttft_p99_s;  // streamed requests
  // Server's prompt_tokens minus Reel's count, over answers that have both.
  int64_t token_compared = 0;
  std::optional<double> token_difference_mean;
  int64_t token_difference_max_abs = 0;
  // POST /tokenize checks (model.verify_tokens).
  int64_t tokenize_compared = 0;
  std::optional<double> tokenize_difference_mean;
  int64_t tokenize_difference_max_abs = 0;
  std::optional<double> cost_tokens;  // from the per-million prices
  std::optional<double> cost_gpu;     // price_gpu_hour x gpus x model hours
  storage::TaskCounts tasks;          // the job's questions by state, after the run
  // What preparing the requests cost (ModelRunCounters): contexts the model stage built and
  // those it took from the context stage; passes over media files that decoded request frames.
  int64_t contexts_built = 0;
  int64_t contexts_reused = 0;
  int64_t frame_passes = 0;
  int64_t frames_decoded = 0;

  std::string ToJson() const;
  // Lines for a person ("Model: 12 requests (12 ok, 0 failed, 1 retried) ...").
  std::vector<std::string> Lines() const;
  static std::optional<RunReport> FromJson(const std::string& json);
};

RunReport MakeRunReport(const storage::SendTotals& totals, const ModelSpec& model,
                        const storage::TaskCounts& tasks);

// The p-th percentile (0..100) of `values` by the nearest-rank method; nullopt when empty.
std::optional<double> Percentile(std::vector<double> values, double p);

}  // namespace reel::jobs
