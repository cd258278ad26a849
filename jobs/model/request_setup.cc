#include "jobs/model/request_setup.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "base/file_util.h"
#include "jobs/spec/prompt_kinds.h"
#include "llm/client/json_schema.h"
#include "storage/sha256.h"

namespace reel::jobs {

std::optional<double> AnswerCost(const ModelSpec& m, const storage::AnswerRecord& a) {
  if (m.price_input_per_million <= 0 && m.price_cached_input_per_million <= 0 &&
      m.price_output_per_million <= 0) {
    return std::nullopt;
  }
  const double prompt = static_cast<double>(a.prompt_tokens.value_or(0));
  const double cached = static_cast<double>(a.cached_tokens.value_or(0));
  const double completion = static_cast<double>(a.completion_tokens.value_or(0));
  return ((prompt - cached) * m.price_input_per_million +
          cached * m.price_cached_input_per_million + completion * m.price_output_per_million) /
         1e6;
}

Result<ModelSetup> LoadModelSetup(const JobSpec& job, const std::string& database) {
  ModelSetup setup;
  REEL_ASSIGN_OR_RETURN(setup.context, LoadContextSetup(job));
  setup.frame_cache = FrameCacheDir(job, database);
  for (const PromptSpec& prompt : job.prompts) {
    std::string schema = prompt.json_schema;
    if (schema.empty() && !prompt.json_schema_file.empty()) {
      const std::string path = ResolveJobPath(job.base_dir, prompt.json_schema_file);
      Result<std::string> text = ReadFileToString(path, 16 << 20);
      if (!text.ok()) {
        return text.status().WithPrefix("prompt '" + prompt.id + "': json_schema " + path);
      }
      Result<llm::JsonSchema> parsed = llm::JsonSchema::Parse(*text);
      if (!parsed.ok()) {
        return parsed.status().WithPrefix("prompt '" + prompt.id + "': json_schema " + path);
      }
      schema = nlohmann::ordered_json::parse(*text).dump();  // compact, in its own key order
    }
    if (schema.empty()) {
      schema = PromptRequestFor(prompt, std::nullopt).json_schema.value_or("");
    }
    setup.schemas[prompt.id] = schema;
  }
  return setup;
}

Result<llm::ModelClientOptions> ClientOptionsFor(const JobSpec& job) {
  const ModelSpec& m = job.model;
  llm::ModelClientOptions o;
  o.endpoint = m.endpoint.value_or("");
  o.model = m.name;
  o.dialect = m.dialect;
  REEL_ASSIGN_OR_RETURN(o.api_key, llm::ApiKey::FromEnvironment(m.api_key_env));
  o.connect_timeout_s = m.connect_timeout_s;
  o.read_timeout_s = m.read_timeout_s;
  o.request_timeout_s = m.request_timeout_s;
  o.retry.max_retries = m.retries;
  o.rate_limit.requests_per_minute = m.requests_per_minute;
  o.rate_limit.tokens_per_minute = m.tokens_per_minute;
  o.circuit.give_up_after_s = m.circuit_give_up_s;
  o.max_connections = std::max(1, m.concurrency);
  return o;
}

llm::ChatRequest RequestFor(const JobSpec& job, const std::string& json_schema,
                            std::shared_ptr<const llm::BodySource> messages,
                            int64_t prompt_tokens) {
  const ModelSpec& m = job.model;
  llm::ChatRequest r;
  r.messages = std::move(messages);
  r.max_completion_tokens = m.max_output_tokens;
  r.temperature = m.temperature;
  r.top_p = m.top_p;
  if (m.top_k != -1) r.top_k = m.top_k;
  r.seed = m.seed;
  r.thinking_mode = ThinkingModeName(m.thinking_mode);
  r.json_schema = json_schema;
  r.stream = m.stream;
  r.prompt_tokens_estimate = prompt_tokens;
  return r;
}

std::string CustomId(const JobSpec& job, const std::string& item_path, const PromptSpec& prompt,
                     const std::string& json_schema, const std::string& settings_key,
                     storage::TaskStep step, int64_t segment, int round) {
  const ModelSpec& m = job.model;
  nlohmann::json key = {
      {"format", 1},
      {"job", job.name},
      {"item", item_path},
      {"prompt", prompt.id},
      {"context", settings_key},
      {"step", storage::TaskStepName(step)},
      {"segment", segment},
      {"request",
       {{"model", m.name},
        {"max_completion_tokens", m.max_output_tokens},
        {"temperature", m.temperature},
        {"top_p", m.top_p},
        {"top_k", m.top_k},
        {"seed", m.seed ? nlohmann::json(*m.seed) : nlohmann::json(nullptr)},
        {"thinking", ThinkingModeName(m.thinking_mode)},
        {"schema", json_schema},
        {"jpeg_quality", m.jpeg_quality}}},
  };
  if (step == storage::TaskStep::kReduce) {
    key["reduce"] = ReduceQuestion(job, prompt, prompt.question, 0);  // the wording
  }
  if (round > 0) key["round"] = round;  // reel ask --again; the first round's ids as before
  return "reel-" +
         storage::Sha256Hex(key.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
             .substr(0, 32);
}

std::string RefitKey(const std::string& settings_key, int64_t margin) {
  return storage::Sha256Hex("refit\n" + settings_key + "\n" + std::to_string(margin));
}

std::string ReduceKey(const std::string& settings_key) {
  return storage::Sha256Hex("reduce\n" + settings_key);
}

std::string ReduceQuestion(const JobSpec& job, const PromptSpec& prompt,
                           const std::string& question, int64_t parts, bool several_files) {
  if (!prompt.reduce.empty()) return prompt.reduce;
  if (!job.model.reduce_question.empty()) return job.model.reduce_question;
  if (several_files) {
    return "The files were too many for one request and were asked about in " +
           (parts > 0 ? std::to_string(parts) + " " : std::string()) +
           "consecutive parts. The answers for the parts are above, each with the files (and "
           "times in them) it covers. Using them, answer: " +
           question;
  }
  return "The video was too long for one request and was asked about in " +
         (parts > 0 ? std::to_string(parts) + " " : std::string()) +
         "consecutive parts. The answers for the parts are above, each with its time range. "
         "Using them, answer: " +
         question;
}

int64_t RefitMargin(const storage::TaskRecord& t) {
  constexpr int64_t kSlack = 128;
  const int64_t local = t.local_prompt_tokens.value_or(0);
  int64_t margin = 0;
  if (t.last_too_long_tokens) {
    margin = std::max<int64_t>(margin, *t.last_too_long_tokens - local);
    if (t.last_too_long_output && t.last_too_long_window) {
      margin = std::max<int64_t>(
          margin, *t.last_too_long_tokens + *t.last_too_long_output - *t.last_too_long_window);
    }
  }
  if (margin <= 0) margin = std::max<int64_t>(local / 20, kSlack);
  return margin + kSlack;
}

}  // namespace reel::jobs
