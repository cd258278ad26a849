// What a job's prompt sends and how its answer is checked, per PromptKind: the one place the
// model stage asks about a prompt's kind (applies to, request, check, retry). kQuestion accepts
// every answer; kChapters (llm/answers/chapters.h) is asked only about items with a timeline.
// Pure functions, no I/O, thread-safe.
// Each function's outcomes: jobs/spec/README.md, "Prompt kinds".
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
