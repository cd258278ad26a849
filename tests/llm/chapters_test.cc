// The `chapters` prompt kind (llm/answers/chapters.h): the schema, the question, and the check of
// answers, table-driven: good answers, overlapping, out of order, out of range, not JSON, ...
#include "llm/answers/chapters.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <regex>

namespace reel::llm {
namespace {

// A 120-second video sampled at 1 fps: frames at 0, 1, ..., 119.
ChapterTimeline Video120() {
  ChapterTimeline t;
  for (int i = 0; i < 120; ++i) t.frame_times.push_back(i);
  t.duration_seconds = 120.0;
  return t;
}

TEST(ChaptersTest, GoodAnswers) {
  struct Case {
    const char* name;
    std::string answer;
    std::vector<std::pair<double, double>> times;  // start, end as written (end clamped)
  } cases[] = {
      {"object root",
       R"({"chapters":[{"start":"00:00","end":"00:42","title":"Intro","summary":"A title."},)"
       R"({"start":"00:42","end":"02:00","title":"Walk","summary":"A man walks."}]})",
       {{0, 42}, {42, 120}}},
      {"bare array, gap between chapters",
       R"([{"start":"00:05","end":"00:30","title":"A","summary":""},)"
       R"({"start":"01:00","end":"01:30","title":"B","summary":"b"}])",
       {{5, 30}, {60, 90}}},
      {"code fence and reasoning before it",
       "thinking about it</mm:think>\n```json\n"
       R"({"chapters":[{"start":"0:10","end":"1:00","title":"A","summary":"a"}]})"
       "\n```\n",
       {{10, 60}}},
      {"numbers of seconds and other time forms",
       R"({"chapters":[{"start":0,"end":"75s","title":"A","summary":"a"},)"
       R"({"start":"1m15s","end":119.5,"title":"B","summary":"b"}]})",
       {{0, 75}, {75, 119.5}}},
      {"end a second past the duration is clamped",
       R"({"chapters":[{"start":"00:00","end":"02:01","title":"A","summary":"a"}]})",
       {{0, 120}}},
      {"H:MM:SS",
       R"({"chapters":[{"start":"0:00:00","end":"0:01:00","title":"A","summary":"a"}]})",
       {{0, 60}}},
  };
  for (const Case& c : cases) {
    Result<std::vector<Chapter>> chapters = ValidateChapters(c.answer, Video120());
    ASSERT_TRUE(chapters.ok()) << c.name << ": " << chapters.status().message();
    ASSERT_EQ(chapters->size(), c.times.size()) << c.name;
    for (size_t i = 0; i < c.times.size(); ++i) {
      EXPECT_DOUBLE_EQ((*chapters)[i].start_seconds, c.times[i].first) << c.name;
      EXPECT_DOUBLE_EQ((*chapters)[i].end_seconds, c.times[i].second) << c.name;
      EXPECT_FALSE((*chapters)[i].title.empty()) << c.name;
    }
  }
}

TEST(ChaptersTest, BadAnswersSayWhy) {
  struct Case {
    const char* name;
    std::string answer;
    std::string reason;  // a part of the message
  } cases[] = {
      {"not JSON", "Chapter 1: intro (00:00-00:42)",
       "the answer is not JSON (syntax error at byte"},
      {"truncated JSON", R"({"chapters":[{"start":"00:00")", "not JSON"},
      {"empty", "  ", "the answer is empty"},
      {"wrong root", R"("00:00 intro")", "expected {\"chapters\": [...]}, got a JSON string"},
      {"no chapters key", R"({"parts":[]})", "has no \"chapters\""},
      {"chapters not a list", R"({"chapters":{"start":"00:00"}})", "got a JSON object"},
      {"no chapters", R"({"chapters":[]})", "the answer has no chapters"},
      {"chapter not an object", R"({"chapters":["00:00 intro"]})",
       "chapter 1 is a string, not an object"},
      {"missing end", R"({"chapters":[{"start":"00:00","title":"A","summary":"a"}]})",
       "chapter 1 has no \"end\""},
      {"missing title", R"({"chapters":[{"start":"00:00","end":"00:10","summary":"a"}]})",
       "chapter 1 has no \"title\""},
      {"empty title", R"({"chapters":[{"start":"00:00","end":"00:10","title":" ","summary":"a"}]})",
       "chapter 1 has an empty \"title\""},
      {"summary not text",
       R"({"chapters":[{"start":"00:00","end":"00:10","title":"A","summary":3}]})",
       "chapter 1: \"summary\" is a number, not a string"},
      {"bad time", R"({"chapters":[{"start":"1:7","end":"00:10","title":"A","summary":"a"}]})",
       "chapter 1: start \"1:7\" is not a time"},
      {"negative time", R"({"chapters":[{"start":-5,"end":"00:10","title":"A","summary":"a"}]})",
       "chapter 1: start \"-5\" is not a time"},
      {"ends before it starts",
       R"({"chapters":[{"start":"00:20","end":"00:10","title":"A","summary":"a"}]})",
       "chapter 1 ends (00:10) before it starts (00:20)"},
      {"empty chapter",
       R"({"chapters":[{"start":"00:20","end":"00:20","title":"A","summary":"a"}]})",
       "chapter 1 is empty: it starts and ends at 00:20"},
      {"start out of range",
       R"({"chapters":[{"start":"00:00","end":"01:00","title":"A","summary":"a"},)"
       R"({"start":"02:10","end":"02:30","title":"B","summary":"b"}]})",
       "chapter 2 starts at 02:10, after the end of the video (02:00)"},
      {"end out of range",
       R"({"chapters":[{"start":"00:00","end":"05:00","title":"A","summary":"a"}]})",
       "chapter 1 ends at 05:00, after the end of the video (02:00)"},
      {"overlapping",
       R"({"chapters":[{"start":"00:30","end":"01:30","title":"A","summary":"a"},)"
       R"({"start":"01:00","end":"01:50","title":"B","summary":"b"}]})",
       "chapter 2 (01:00-01:50) overlaps chapter 1 (00:30-01:30)"},
      {"out of order",
       R"({"chapters":[{"start":"01:00","end":"01:30","title":"A","summary":"a"},)"
       R"({"start":"00:10","end":"00:20","title":"B","summary":"b"}]})",
       "chapter 2 starts (00:10) before chapter 1 (01:00): chapters must be in order"},
      // Found by the fuzzer: nlohmann's parser throws out_of_range, not parse_error, here.
      {"number out of range", R"({"chapters":[{"start":3e999,"end":"00:10"}]})",
       "a number is out of range"},
      {"deep nesting", std::string(100, '[') + std::string(100, ']'), "deeper than 64"},
  };
  for (const Case& c : cases) {
    Result<std::vector<Chapter>> chapters = ValidateChapters(c.answer, Video120());
    ASSERT_FALSE(chapters.ok()) << c.name;
    EXPECT_EQ(chapters.status().code(), ErrorCode::kInvalidArgument) << c.name;
    EXPECT_NE(chapters.status().message().find(c.reason), std::string::npos)
        << c.name << ": " << chapters.status().message();
  }
}

TEST(ChaptersTest, SnapsToTheNearestSampledFrame) {
  // Frames every 2.5 s from 0.2 s (not on whole seconds), a 30 s video.
  ChapterTimeline timeline;
  for (int i = 0; i < 12; ++i) timeline.frame_times.push_back(0.2 + 2.5 * i);
  timeline.duration_seconds = 30.0;
  Result<std::vector<Chapter>> chapters =
      ValidateChapters(R"([{"start":"00:00","end":"00:11","title":"A","summary":"a"},)"
                       R"({"start":"00:11","end":"00:30","title":"B","summary":"b"}])",
                       timeline);
  ASSERT_TRUE(chapters.ok()) << chapters.status().message();
  const Chapter& a = (*chapters)[0];
  const Chapter& b = (*chapters)[1];
  EXPECT_EQ(a.start_frame, 0u);
  EXPECT_DOUBLE_EQ(*a.frame_start_seconds, 0.2);
  EXPECT_EQ(a.end_frame, 4u);  // 11 s: frames at 10.2 (0.8 away) and 12.7 (1.7 away)
  EXPECT_DOUBLE_EQ(*a.frame_end_seconds, 10.2);
  EXPECT_EQ(b.start_frame, 4u);
  EXPECT_EQ(b.end_frame, 11u);  // 30 s: the last frame, 27.7
  EXPECT_DOUBLE_EQ(*b.frame_end_seconds, 27.7);
  nlohmann::json j = nlohmann::json::parse(ChaptersToJson(*chapters));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["start"], "00:00");
  EXPECT_EQ(j[1]["end"], "00:30");
  EXPECT_EQ(j[1]["start_frame"], 4);
  EXPECT_EQ(j[1]["title"], "B");
}

TEST(ChaptersTest, ItemsWithoutFramesOrTimeline) {
  ChapterTimeline duration_only{{}, 60.0};
  Result<std::vector<Chapter>> ok = ValidateChapters(
      R"([{"start":"00:00","end":"01:00","title":"A","summary":"a"}])", duration_only);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_FALSE((*ok)[0].start_frame.has_value());
  Result<std::vector<Chapter>> none = ValidateChapters(
      R"([{"start":"00:00","end":"01:00","title":"A","summary":"a"}])", ChapterTimeline{});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no timeline"), std::string::npos);
}

TEST(ChaptersTest, SchemaAndQuestions) {
  nlohmann::json schema = nlohmann::json::parse(ChaptersJsonSchema());
  EXPECT_EQ(schema["type"], "object");
  const nlohmann::json& item = schema["properties"]["chapters"]["items"];
  EXPECT_EQ(item["required"], nlohmann::json({"start", "end", "title", "summary"}));
  EXPECT_EQ(item["properties"]["start"]["type"], "string");
  // The example in the question passes the check, and the schema's pattern agrees with the
  // clock forms the check reads.
  std::string question = ChaptersQuestion(125.0);
  EXPECT_NE(question.find("The video is 02:05 long."), std::string::npos) << question;
  EXPECT_NE(question.find("MM:SS"), std::string::npos);
  EXPECT_EQ(ChaptersQuestion().find("long."), std::string::npos);
  size_t json_at = question.find("{\"chapters\"");
  ASSERT_NE(json_at, std::string::npos);
  std::string example = question.substr(json_at);
  Result<std::vector<Chapter>> parsed = ValidateChapters(example, Video120());
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  std::string retry = ChaptersRetryQuestion("chapter 2 overlaps chapter 1");
  EXPECT_NE(retry.find("chapter 2 overlaps chapter 1. Answer again"), std::string::npos) << retry;
}

// A 3.2-second clip sampled at 5 fps: its chapters are under a second or two long, so the
// question asks for tenths, the schema lets them through, and the check, its messages and the
// stored JSON keep them ("00:01.5", not "00:02"; never "empty: it starts and ends at 00:00").
TEST(ChaptersTest, AShortClipIsChapteredInTenthsOfASecond) {
  ChapterTimeline clip;
  for (int i = 0; i < 16; ++i) clip.frame_times.push_back(i * 0.2);
  clip.duration_seconds = 3.2;
  const std::string question = ChaptersQuestion(3.2);
  EXPECT_NE(question.find("The video is 00:03.2 long"), std::string::npos) << question;
  EXPECT_NE(question.find("MM:SS.s"), std::string::npos) << question;
  Result<std::vector<Chapter>> example =
      ValidateChapters(question.substr(question.find("{\"chapters\"")), clip);
  ASSERT_TRUE(example.ok()) << example.status().message();
  EXPECT_DOUBLE_EQ((*example)[0].end_seconds, 1.5);
  nlohmann::json schema = nlohmann::json::parse(ChaptersJsonSchema(3.2));
  const std::regex pattern(
      schema["properties"]["chapters"]["items"]["properties"]["start"]["pattern"]
          .get<std::string>());
  EXPECT_TRUE(std::regex_match("00:01.5", pattern));
  EXPECT_TRUE(std::regex_match("00:03", pattern));
  // A long video keeps whole seconds (its requests do not change).
  const std::regex whole(nlohmann::json::parse(ChaptersJsonSchema(
      125.0))["properties"]["chapters"]["items"]["properties"]["start"]["pattern"]
                             .get<std::string>());
  EXPECT_FALSE(std::regex_match("00:01.5", whole));
  EXPECT_EQ(ChaptersJsonSchema(125.0), ChaptersJsonSchema());

  Result<std::vector<Chapter>> chapters = ValidateChapters(
      R"({"chapters":[{"start":"00:00.0","end":"00:00.6","title":"Pan","summary":"a"},)"
      R"({"start":"00:00.6","end":"00:01.5","title":"Zoom","summary":"b"},)"
      R"({"start":"00:01.5","end":"00:03.2","title":"Fade","summary":"c"}]})",
      clip);
  ASSERT_TRUE(chapters.ok()) << chapters.status().message();
  ASSERT_EQ(chapters->size(), 3u);
  EXPECT_EQ(*(*chapters)[1].start_frame, 3u);  // 0.6 s
  nlohmann::json stored = nlohmann::json::parse(ChaptersToJson(*chapters));
  EXPECT_EQ(stored[1]["start"], "00:00.6");
  EXPECT_EQ(stored[1]["end"], "00:01.5");
  EXPECT_EQ(stored[2]["end"], "00:03.2");
  // What is wrong is said at the same precision.
  Result<std::vector<Chapter>> empty =
      ValidateChapters(R"([{"start":"00:00.4","end":"00:00.4","title":"A","summary":""}])", clip);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("starts and ends at 00:00.4"), std::string::npos)
      << empty.status().message();
  Result<std::vector<Chapter>> overlap =
      ValidateChapters(R"([{"start":"00:00.0","end":"00:01.4","title":"A","summary":""},)"
                       R"({"start":"00:01.2","end":"00:02.0","title":"B","summary":""}])",
                       clip);
  ASSERT_FALSE(overlap.ok());
  EXPECT_NE(overlap.status().message().find("(00:01.2-00:02) overlaps chapter 1 (00:00-00:01.4)"),
            std::string::npos)
      << overlap.status().message();
}

}  // namespace
}  // namespace reel::llm
