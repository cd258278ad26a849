#include "jobs/model/usage_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace reel::jobs {
namespace {

using nlohmann::json;

std::string Fixed(double v, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, v);
  return buffer;
}

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::optional<double> OptOf(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

}  // namespace

std::optional<double> Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t index = static_cast<size_t>(std::clamp(rank, 1.0, double(values.size()))) - 1;
  return values[index];
}

RunReport MakeRunReport(const storage::SendTotals& t, const ModelSpec& model,
                        const storage::TaskCounts& tasks) {
  RunReport r;
  r.requests = t.sends;
  r.ok = t.succeeded;
  r.failed = t.failed;
  r.cancelled = t.cancelled;
  r.retried = t.retries;
  r.rechecked = t.rechecked;
  r.resent = t.resent;
  r.too_long = t.too_long;
  r.truncated = t.truncated;
  r.prompt_tokens = t.prompt_tokens;
  r.completion_tokens = t.completion_tokens;
  r.cached_tokens = t.cached_tokens;
  r.reasoning_tokens = t.reasoning_tokens;
  if (t.last_finished_unix > t.first_sent_unix && t.first_sent_unix > 0) {
    r.model_seconds = t.last_finished_unix - t.first_sent_unix;
    r.prompt_tokens_per_s = static_cast<double>(t.prompt_tokens) / r.model_seconds;
    r.generation_tokens_per_s = static_cast<double>(t.completion_tokens) / r.model_seconds;
  }
  if (!t.latencies.empty()) {
    r.latency_mean_s = t.latency_sum / static_cast<double>(t.latencies.size());
    r.latency_p99_s = Percentile(t.latencies, 99);
  }
  if (!t.ttft_seconds.empty()) {
    r.ttft_mean_s = std::accumulate(t.ttft_seconds.begin(), t.ttft_seconds.end(), 0.0) /
                    static_cast<double>(t.ttft_seconds.size());
    r.ttft_p99_s = Percentile(t.ttft_seconds, 99);
  }
  r.token_compared = t.compared;
  if (t.compared > 0) {
    r.token_difference_mean =
        static_cast<double>(t.compared_server_tokens - t.local_prompt_tokens) /
        static_cast<double>(t.compared);
    r.token_difference_max_abs = t.max_abs_token_difference;
  }
  r.tokenize_compared = t.tokenize_compared;
  if (t.tokenize_compared > 0) {
    r.tokenize_difference_mean =
        static_cast<double>(t.tokenize_difference_sum) / static_cast<double>(t.tokenize_compared);
    r.tokenize_difference_max_abs = t.tokenize_max_abs_difference;
  }
  const double uncached = static_cast<double>(t.prompt_tokens - t.cached_tokens);
  if (model.price_input_per_million > 0 || model.price_cached_input_per_million > 0 ||
      model.price_output_per_million > 0) {
    r.cost_tokens = (uncached * model.price_input_per_million +
                     static_cast<double>(t.cached_tokens) * model.price_cached_input_per_million +
                     static_cast<double>(t.completion_tokens) * model.price_output_per_million) /
                    1e6;
  }
  if (model.price_gpu_hour > 0) {
    r.cost_gpu = model.price_gpu_hour * model.gpus * r.model_seconds / 3600.0;
  }
  r.tasks = tasks;
  return r;
}

std::string RunReport::ToJson() const {
  json j = {{"requests", requests},
            {"ok", ok},
            {"failed", failed},
            {"cancelled", cancelled},
            {"retried", retried},
            {"rechecked", rechecked},
            {"resent", resent},
            {"too_long", too_long},
            {"truncated", truncated},
            {"prompt_tokens", prompt_tokens},
            {"completion_tokens", completion_tokens},
            {"cached_tokens", cached_tokens},
            {"reasoning_tokens", reasoning_tokens},
            {"model_seconds", model_seconds},
            {"prompt_tokens_per_s", prompt_tokens_per_s},
            {"generation_tokens_per_s", generation_tokens_per_s},
            {"latency_mean_s", Opt(latency_mean_s)},
            {"latency_p99_s", Opt(latency_p99_s)},
            {"ttft_mean_s", Opt(ttft_mean_s)},
            {"ttft_p99_s", Opt(ttft_p99_s)},
            {"token_compared", token_compared},
            {"token_difference_mean", Opt(token_difference_mean)},
            {"token_difference_max_abs", token_difference_max_abs},
            {"tokenize_compared", tokenize_compared},
            {"tokenize_difference_mean", Opt(tokenize_difference_mean)},
            {"tokenize_difference_max_abs", tokenize_difference_max_abs},
            {"cost_tokens", Opt(cost_tokens)},
            {"cost_gpu", Opt(cost_gpu)},
            {"tasks",
             {{"waiting", tasks.waiting},
              {"sent", tasks.sent},
              {"answered", tasks.succeeded},
              {"failed", tasks.failed}}},
            {"contexts", {{"built", contexts_built}, {"reused", contexts_reused}}},
            {"frames", {{"decoded", frames_decoded}, {"passes", frame_passes}}}};
  return j.dump();
}

std::optional<RunReport> RunReport::FromJson(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  RunReport r;
  auto i = [&](const char* key) { return j.value(key, int64_t{0}); };
  r.requests = i("requests");
  r.ok = i("ok");
  r.failed = i("failed");
  r.cancelled = i("cancelled");
  r.retried = i("retried");
  r.rechecked = i("rechecked");
  r.resent = i("resent");
  r.too_long = i("too_long");
  r.truncated = i("truncated");
  r.prompt_tokens = i("prompt_tokens");
  r.completion_tokens = i("completion_tokens");
  r.cached_tokens = i("cached_tokens");
  r.reasoning_tokens = i("reasoning_tokens");
  r.model_seconds = j.value("model_seconds", 0.0);
  r.prompt_tokens_per_s = j.value("prompt_tokens_per_s", 0.0);
  r.generation_tokens_per_s = j.value("generation_tokens_per_s", 0.0);
  r.latency_mean_s = OptOf(j, "latency_mean_s");
  r.latency_p99_s = OptOf(j, "latency_p99_s");
  r.ttft_mean_s = OptOf(j, "ttft_mean_s");
  r.ttft_p99_s = OptOf(j, "ttft_p99_s");
  r.token_compared = i("token_compared");
  r.token_difference_mean = OptOf(j, "token_difference_mean");
  r.token_difference_max_abs = i("token_difference_max_abs");
  r.tokenize_compared = i("tokenize_compared");
  r.tokenize_difference_mean = OptOf(j, "tokenize_difference_mean");
  r.tokenize_difference_max_abs = i("tokenize_difference_max_abs");
  r.cost_tokens = OptOf(j, "cost_tokens");
  r.cost_gpu = OptOf(j, "cost_gpu");
  if (j.contains("tasks") && j["tasks"].is_object()) {
    const json& t = j["tasks"];
    r.tasks.waiting = t.value("waiting", int64_t{0});
    r.tasks.sent = t.value("sent", int64_t{0});
    r.tasks.succeeded = t.value("answered", int64_t{0});
    r.tasks.failed = t.value("failed", int64_t{0});
  }
  if (j.contains("contexts") && j["contexts"].is_object()) {
    r.contexts_built = j["contexts"].value("built", int64_t{0});
    r.contexts_reused = j["contexts"].value("reused", int64_t{0});
  }
  if (j.contains("frames") && j["frames"].is_object()) {
    r.frames_decoded = j["frames"].value("decoded", int64_t{0});
    r.frame_passes = j["frames"].value("passes", int64_t{0});
  }
  return r;
}

std::vector<std::string> RunReport::Lines() const {
  std::vector<std::string> lines;
  if (requests > 0)
    lines.push_back(
        "model: " + std::to_string(requests) + " requests (" + std::to_string(ok) + " ok, " +
        std::to_string(failed) + " failed, " + std::to_string(retried) + " retried, " +
        (rechecked ? std::to_string(rechecked) + " asked again after a failed answer check, "
                   : "") +
        std::to_string(resent) + " sent again" +
        (cancelled ? ", " + std::to_string(cancelled) + " stopped" : "") +
        (too_long ? ", " + std::to_string(too_long) + " too long" : "") +
        (truncated ? ", " + std::to_string(truncated) + " cut by max_output_tokens" : "") + ")");
  if (requests > 0) {
    lines.push_back(
        "tokens: " + std::to_string(prompt_tokens) + " prompt (" + std::to_string(cached_tokens) +
        " cached), " + std::to_string(completion_tokens) + " completion" +
        (reasoning_tokens ? " (" + std::to_string(reasoning_tokens) + " reasoning)" : "") + "; " +
        Fixed(prompt_tokens_per_s, 1) + " prompt and " + Fixed(generation_tokens_per_s, 1) +
        " generated tokens/s over " + Fixed(model_seconds, 1) + " s");
    std::string timing;
    if (latency_mean_s) {
      timing = "latency mean " + Fixed(*latency_mean_s, 2) + " s, p99 " +
               Fixed(latency_p99_s.value_or(0), 2) + " s";
    }
    if (ttft_mean_s) {
      timing += (timing.empty() ? "" : "; ") + std::string("time to first token mean ") +
                Fixed(*ttft_mean_s, 2) + " s, p99 " + Fixed(ttft_p99_s.value_or(0), 2) + " s";
    }
    if (!timing.empty()) lines.push_back(timing);
  }
  if (token_difference_mean || tokenize_difference_mean) {
    std::string s = "token counts (server - Reel):";
    if (token_difference_mean) {
      s += " usage mean " + Fixed(*token_difference_mean, 1) + ", max |" +
           std::to_string(token_difference_max_abs) + "| over " + std::to_string(token_compared) +
           " answers";
    }
    if (tokenize_difference_mean) {
      s += std::string(token_difference_mean ? ";" : "") + " /tokenize mean " +
           Fixed(*tokenize_difference_mean, 1) + ", max |" +
           std::to_string(tokenize_difference_max_abs) + "| over " +
           std::to_string(tokenize_compared) + " checks";
    }
    lines.push_back(s);
  }
  if (requests > 0 && (cost_tokens || cost_gpu)) {  // a run that sent nothing cost nothing
    std::string s = "cost:";
    if (cost_tokens) s += " " + Fixed(*cost_tokens, 4) + " by tokens";
    if (cost_gpu)
      s += std::string(cost_tokens ? "," : "") + " " + Fixed(*cost_gpu, 4) + " by GPU time";
    lines.push_back(s);
  }
  if (contexts_built > 0 || contexts_reused > 0 || frames_decoded > 0) {
    lines.push_back("requests prepared: " + std::to_string(contexts_built) + " contexts built, " +
                    std::to_string(contexts_reused) + " as the context stage built them; " +
                    std::to_string(frames_decoded) + " frames decoded in " +
                    std::to_string(frame_passes) + " passes");
  }
  lines.push_back("questions: " + std::to_string(tasks.succeeded) + " answered, " +
                  std::to_string(tasks.failed) + " failed, " +
                  std::to_string(tasks.waiting + tasks.sent) + " waiting for a model");
  return lines;
}

}  // namespace reel::jobs
