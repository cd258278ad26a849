#include "jobs/spec/prompt_kinds.h"

namespace reel::jobs {

bool PromptAppliesTo(const PromptSpec& prompt, const llm::ContextInput& input) {
  switch (prompt.kind) {
    case PromptKind::kQuestion:
      return true;
    case PromptKind::kChapters:
      return (input.kind == llm::ContextItemKind::kVideo ||
              input.kind == llm::ContextItemKind::kSubtitle ||
              input.kind == llm::ContextItemKind::kAudio) &&
             (input.duration_s > 0 || !input.frames.empty());
  }
  return true;
}

bool PromptAppliesToEveryItem(const PromptSpec& prompt) {
  return prompt.kind == PromptKind::kQuestion;
}

bool AnswerCheckedByKind(const PromptSpec& prompt) { return prompt.kind != PromptKind::kQuestion; }

PromptRequest PromptRequestFor(const PromptSpec& prompt, std::optional<double> duration_seconds) {
  PromptRequest request{.system = prompt.system, .question = prompt.question};
  if (prompt.kind == PromptKind::kChapters) {
    if (request.question.empty()) request.question = llm::ChaptersQuestion(duration_seconds);
    request.json_schema = llm::ChaptersJsonSchema(duration_seconds);
    request.schema_name = "chapters";
  }
  return request;
}

Result<std::optional<std::string>> CheckPromptAnswer(const PromptSpec& prompt,
                                                     std::string_view content,
                                                     const llm::ChapterTimeline& timeline) {
  switch (prompt.kind) {
    case PromptKind::kQuestion:
      return std::optional<std::string>();
    case PromptKind::kChapters: {
      Result<std::vector<llm::Chapter>> chapters = llm::ValidateChapters(content, timeline);
      if (!chapters.ok()) return chapters.status();
      return std::optional<std::string>(llm::ChaptersToJson(*chapters));
    }
  }
  return std::optional<std::string>();
}

std::string PromptRetryFor(const PromptSpec& prompt, std::string_view reason) {
  if (prompt.kind == PromptKind::kChapters) return llm::ChaptersRetryQuestion(reason);
  return "Your answer could not be used: " + std::string(reason) + ". Answer again.";
}

}  // namespace reel::jobs
