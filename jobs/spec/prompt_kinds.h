// What a job's prompt sends and how its answer is checked, per PromptKind (jobs/spec/job_spec.h).
// The one place the model stage asks about a prompt's kind:
//
//   PromptAppliesTo(prompt, input)      -> whether the prompt is asked about that item at all;
//   PromptRequestFor(prompt, duration)  -> the system text, question and JSON schema to send;
//   CheckPromptAnswer(prompt, content, timeline)
//       -> ok: what to store beside the content (the checked chapters as JSON; nothing for a
//          free question); kInvalidArgument: the reason, recorded as the request's failure;
//   PromptRetryFor(prompt, reason) -> the follow-up question, sent once (kAnswerCheckRetries)
//          after a failed check, in the same conversation.
//
// kQuestion: the job's question as written, no schema, every answer accepted, asked about every
// item. kChapters: llm/answers/chapters.h (the built-in question unless the job wrote one, the
// chapters schema, the check against the item's sampled frames and duration, snapped to the nearest
// frame); asked only about items with a timeline (videos and subtitle files with sampled frames
// or a duration), never about documents or still images, whose answer could not pass the check.
// The kind's check is what judges its answers: an answer the model client found not to match
// the schema (ChatOutcome::kSchemaMismatch, e.g. not JSON) is checked and asked again like any
// other answer that fails the check (AnswerCheckedByKind).
//
// Pure functions, no I/O, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "jobs/spec/job_spec.h"
#include "llm/answers/chapters.h"
#include "llm/context/context_builder.h"

namespace reel::jobs {

// Answers that fail their kind's check are asked again this many times, then the failure stands.
inline constexpr int kAnswerCheckRetries = 1;

// How that failure is recorded: requests.outcome, and the start of requests.error (the check's
// reason follows).
inline constexpr std::string_view kInvalidAnswerOutcome = "invalid answer";
inline constexpr std::string_view kAnswerCheckFailed = "the answer failed its check: ";

struct PromptRequest {
  std::string system = {};  // "" = no system message
  std::string question = {};
  std::optional<std::string> json_schema = {};  // response_format json_schema (JSON text), if any
  std::string schema_name = {};                 // its name ("" without a schema)
};

bool PromptAppliesTo(const PromptSpec& prompt, const llm::ContextInput& input);
// Whether PromptAppliesTo is true for every item (the kind asks about anything), so the item need
// not be read to know.
bool PromptAppliesToEveryItem(const PromptSpec& prompt);

// Whether the kind checks its answers itself (CheckPromptAnswer), so the client's own schema
// validation gives way to that check.
bool AnswerCheckedByKind(const PromptSpec& prompt);

PromptRequest PromptRequestFor(const PromptSpec& prompt, std::optional<double> duration_seconds);

// The structured form of a good answer (JSON text), nullopt for a free answer.
Result<std::optional<std::string>> CheckPromptAnswer(const PromptSpec& prompt,
                                                     std::string_view content,
                                                     const llm::ChapterTimeline& timeline);

std::string PromptRetryFor(const PromptSpec& prompt, std::string_view reason);

}  // namespace reel::jobs
