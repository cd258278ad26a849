// What a job's prompt sends and how its answer is checked, per PromptKind (jobs/job_spec.h). The
// one place the model stage asks about a prompt's kind:
//
//   PromptRequestFor(prompt, duration)  -> the system text, question and JSON schema to send;
//   CheckPromptAnswer(prompt, content, timeline)
//       -> ok: what to store beside the content (the checked chapters as JSON; nothing for a
//          free question); kInvalidArgument: the reason, recorded as the request's failure;
//   PromptRetryFor(prompt, reason) -> the follow-up question, sent once (kAnswerCheckRetries)
//          after a failed check, in the same conversation.
//
// kQuestion: the job's question as written, no schema, every answer accepted. kChapters:
// llm/chapters.h (the built-in question unless the job wrote one, the chapters schema, the check
// against the item's sampled frames and duration, snapped to the nearest frame).
//
// Pure functions, no I/O, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "jobs/job_spec.h"
#include "llm/chapters.h"

namespace reel::jobs {

// Answers that fail their kind's check are asked again this many times, then the failure stands.
inline constexpr int kAnswerCheckRetries = 1;

struct PromptRequest {
  std::string system = {};  // "" = no system message
  std::string question = {};
  std::optional<std::string> json_schema = {};  // response_format json_schema (JSON text), if any
  std::string schema_name = {};                 // its name ("" without a schema)
};

PromptRequest PromptRequestFor(const PromptSpec& prompt, std::optional<double> duration_seconds);

// The structured form of a good answer (JSON text), nullopt for a free answer.
Result<std::optional<std::string>> CheckPromptAnswer(const PromptSpec& prompt,
                                                     std::string_view content,
                                                     const llm::ChapterTimeline& timeline);

std::string PromptRetryFor(const PromptSpec& prompt, std::string_view reason);

}  // namespace reel::jobs
