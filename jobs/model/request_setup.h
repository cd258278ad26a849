// How a job talks to its model: the client's options, each request's fields, the prompts'
// schemas, and the tasks' stable custom_ids (the same on every rerun and machine, new when
// anything the answer depends on changes). Shared by the run, `reel export`, `reel import` and
// `reel ask`. What the custom_id covers: jobs/model/README.md, "Request setup".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "jobs/context/item_context.h"
#include "jobs/spec/job_spec.h"
#include "llm/client/chat_request.h"
#include "llm/client/model_client.h"
#include "storage/records.h"
#include "storage/tasks.h"

namespace reel::jobs {

struct ModelSetup {
  std::shared_ptr<const ContextSetup> context;  // template and tokenizer (or the estimate)
  std::string frame_cache;  // where request frames are cached (FrameCacheDir of the database)
  // prompt id -> the answer's JSON schema, compact ("" = none): the prompt's json_schema (or its
  // file), else its kind's (jobs/spec/prompt_kinds.h: chapters).
  std::map<std::string, std::string> schemas;
};

// The cost of one answer from the job's per-million prices; nullopt when the job sets none.
std::optional<double> AnswerCost(const ModelSpec& model, const storage::AnswerRecord& answer);

// Loads the tokenizer and the prompts' schema files, for a command writing `database` (the
// database it opened; "" = the job's storage.database). Errors name the file and the prompt.
Result<ModelSetup> LoadModelSetup(const JobSpec& job, const std::string& database);

// The client's options for the job's endpoint (which must be set). Errors: the API key's
// variable is unset (named, never its value).
Result<llm::ModelClientOptions> ClientOptionsFor(const JobSpec& job);

// The request fields of the job's model settings around `messages`.
llm::ChatRequest RequestFor(const JobSpec& job, const std::string& json_schema,
                            std::shared_ptr<const llm::BodySource> messages, int64_t prompt_tokens);

std::string CustomId(const JobSpec& job, const std::string& item_path, const PromptSpec& prompt,
                     const std::string& json_schema, const std::string& settings_key,
                     storage::TaskStep step, int64_t segment, int round = 0);

// The settings key of a context re-fitted with `margin` tokens less budget, and of the reduce
// context over the answers of a split context.
std::string RefitKey(const std::string& settings_key, int64_t margin);
std::string ReduceKey(const std::string& settings_key);

// The question of the reduce step over `parts` segment answers: the prompt's `reduce`, the job's
// model.reduce_question, or the built-in one around `question` (the question the segments were
// asked). `several_files`: the parts are of a context over several files (group_context.h),
// each headed with the files it covers.
std::string ReduceQuestion(const JobSpec& job, const PromptSpec& prompt,
                           const std::string& question, int64_t parts, bool several_files = false);

// Extra margin (tokens) for re-fitting a context the server found too long, from that send's
// numbers: the server's count minus ours, or the overflow of its window, plus one 128-token
// block; 5% of our count when the server gave no number.
int64_t RefitMargin(const storage::TaskRecord& too_long_task);

}  // namespace reel::jobs
