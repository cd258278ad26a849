// Prompt kinds: `kind: chapters` in a job file (defaults, validation, the rendered job parsing
// back) and what jobs/spec/prompt_kinds.h gives the model stage for each kind.
#include "jobs/spec/prompt_kinds.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jobs/spec/job_spec.h"

namespace reel::jobs {
namespace {

PromptSpec Prompt(const std::string& id, PromptKind kind, const std::string& question = "",
                  const std::string& system = "") {
  PromptSpec p;
  p.id = id;
  p.kind = kind;
  p.question = question;
  p.system = system;
  return p;
}

Result<JobSpec> ParsePrompts(const std::string& prompts) {
  ParseOptions options;
  options.lookup_env = [](const std::string&) { return std::nullopt; };
  return ParseJobText("name: demo\ninputs: [a.mp4]\nprompts:\n" + prompts, "job.yaml", "/jobs",
                      options);
}

TEST(PromptKindsTest, ChaptersNeedsNeitherIdNorQuestion) {
  auto job = ParsePrompts("  - kind: chapters\n  - {id: describe, question: \"What happens?\"}\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_EQ(job->prompts.size(), 2u);
  EXPECT_EQ(job->prompts[0].id, "chapters");
  EXPECT_EQ(job->prompts[0].kind, PromptKind::kChapters);
  EXPECT_EQ(job->prompts[0].question, "");
  EXPECT_EQ(job->prompts[1].kind, PromptKind::kQuestion);

  // The rendered job says so and parses back to the same prompts.
  const std::string rendered = RenderResolvedJob(*job);
  EXPECT_NE(rendered.find("kind: chapters"), std::string::npos) << rendered;
  ParseOptions options;
  options.lookup_env = [](const std::string&) { return std::nullopt; };
  auto again = ParseJobText(rendered, "rendered.yaml", "/jobs", options);
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << rendered;
  ASSERT_EQ(again->prompts.size(), 2u);
  EXPECT_EQ(again->prompts[0].id, "chapters");
  EXPECT_EQ(again->prompts[0].kind, PromptKind::kChapters);
  EXPECT_EQ(again->prompts[0].question, "");
  EXPECT_EQ(again->prompts[1].question, "What happens?");
}

TEST(PromptKindsTest, ChaptersWithItsOwnIdAndQuestion) {
  auto job =
      ParsePrompts("  - {id: parts, kind: chapters, question: Split the lecture by topic.}\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->prompts[0].id, "parts");
  EXPECT_EQ(job->prompts[0].question, "Split the lecture by topic.");
}

TEST(PromptKindsTest, RefusesAnUnknownKindAndASecondDefaultChapters) {
  auto bad = ParsePrompts("  - {id: q, kind: chapter, question: \"A?\"}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'prompts[0].kind' must be one of question, chapters"),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("did you mean 'chapters'"), std::string::npos)
      << bad.status().message();

  auto twice = ParsePrompts("  - kind: chapters\n  - kind: chapters\n");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("duplicate prompt id 'chapters'"), std::string::npos)
      << twice.status().message();

  // A plain question still needs both.
  auto no_question = ParsePrompts("  - id: q\n");
  ASSERT_FALSE(no_question.ok());
  EXPECT_NE(no_question.status().message().find("missing required key 'question'"),
            std::string::npos);
}

TEST(PromptKindsTest, RequestPerKind) {
  PromptSpec question = Prompt("q", PromptKind::kQuestion, "What happens?", "Be brief.");
  PromptRequest free = PromptRequestFor(question, 75);
  EXPECT_EQ(free.system, "Be brief.");
  EXPECT_EQ(free.question, "What happens?");
  EXPECT_FALSE(free.json_schema);

  PromptSpec chapters = Prompt("chapters", PromptKind::kChapters);
  PromptRequest built_in = PromptRequestFor(chapters, 75);
  EXPECT_EQ(built_in.question, llm::ChaptersQuestion(75));
  EXPECT_NE(built_in.question.find("01:15 long"), std::string::npos) << built_in.question;
  ASSERT_TRUE(built_in.json_schema);
  EXPECT_EQ(*built_in.json_schema, llm::ChaptersJsonSchema());
  EXPECT_EQ(built_in.schema_name, "chapters");
  EXPECT_TRUE(nlohmann::json::accept(*built_in.json_schema));

  chapters.question = "By topic, please.";
  EXPECT_EQ(PromptRequestFor(chapters, 75).question, "By topic, please.");
  EXPECT_TRUE(PromptRequestFor(chapters, 75).json_schema);
}

TEST(PromptKindsTest, AnswerChecksPerKind) {
  const llm::ChapterTimeline timeline{.frame_times = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
                                      .duration_seconds = 9.5};
  PromptSpec question = Prompt("q", PromptKind::kQuestion, "What happens?");
  auto free = CheckPromptAnswer(question, "not JSON at all", timeline);
  ASSERT_TRUE(free.ok());
  EXPECT_FALSE(free->has_value());

  PromptSpec chapters = Prompt("chapters", PromptKind::kChapters);
  auto good = CheckPromptAnswer(
      chapters,
      R"({"chapters": [{"start": "00:00", "end": "00:04.4", "title": "A", "summary": "a"},)"
      R"( {"start": "00:04.4", "end": "00:09", "title": "B", "summary": "b"}]})",
      timeline);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  ASSERT_TRUE(good->has_value());
  nlohmann::json stored = nlohmann::json::parse(**good);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[1]["start_frame"], 4);  // snapped to the nearest sampled frame
  EXPECT_EQ(stored[1]["title"], "B");

  for (const char* bad : {
           "Chapter one is the start.",                                            // not JSON
           R"([{"start": "00:00", "end": "00:06", "title": "A", "summary": ""},)"  // overlapping
           R"( {"start": "00:05", "end": "00:09", "title": "B", "summary": ""}])",
           R"([{"start": "00:00", "end": "02:00", "title": "A", "summary": ""}])",  // too long
       }) {
    auto checked = CheckPromptAnswer(chapters, bad, timeline);
    ASSERT_FALSE(checked.ok()) << bad;
    EXPECT_EQ(checked.status().code(), ErrorCode::kInvalidArgument);
    const std::string retry = PromptRetryFor(chapters, checked.status().message());
    EXPECT_NE(retry.find(checked.status().message()), std::string::npos) << retry;
  }
}

// Chapters are asked about items with a timeline only; questions about every item.
TEST(PromptKindsTest, ChaptersApplyToItemsWithATimeline) {
  PromptSpec question = Prompt("q", PromptKind::kQuestion, "What happens?");
  PromptSpec chapters = Prompt("chapters", PromptKind::kChapters);
  auto input = [](llm::ContextItemKind kind, double duration, int frames) {
    llm::ContextInput in;
    in.kind = kind;
    in.duration_s = duration;
    for (int i = 0; i < frames; ++i) in.frames.push_back({.time_s = static_cast<double>(i)});
    return in;
  };
  using K = llm::ContextItemKind;
  struct Case {
    llm::ContextInput in;
    bool chapters;
  } cases[] = {
      {input(K::kVideo, 12, 12), true},    // frames and a duration
      {input(K::kVideo, 0, 3), true},      // frames, duration unknown
      {input(K::kVideo, 12, 0), true},     // a duration, no frames
      {input(K::kVideo, 0, 0), false},     // neither: the check could never pass
      {input(K::kSubtitle, 30, 0), true},  // timed text
      {input(K::kImage, 0, 1), false},    {input(K::kDocument, 0, 0), false},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(PromptAppliesTo(question, c.in));
    EXPECT_EQ(PromptAppliesTo(chapters, c.in), c.chapters)
        << static_cast<int>(c.in.kind) << " " << c.in.duration_s << " " << c.in.frames.size();
  }
  // The chapters kind judges its answers itself (a schema mismatch gives way to the check).
  EXPECT_TRUE(AnswerCheckedByKind(chapters));
  EXPECT_FALSE(AnswerCheckedByKind(question));
}

}  // namespace
}  // namespace reel::jobs
