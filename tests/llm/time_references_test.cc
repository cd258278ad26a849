// The grammar of time references in answers (llm/answers/time_references.h): what is a video time,
// what is not, spans and values; frame linking; the clock format.
#include "llm/answers/time_references.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace reel::llm {
namespace {

struct Found {
  std::string text;  // the span's text
  double seconds;
  double end_seconds;  // -1: a point
};

std::vector<Found> Find(const std::string& text) {
  std::vector<Found> out;
  for (const TimeReference& r : FindTimeReferences(text)) {
    EXPECT_LE(r.begin, r.end);
    EXPECT_LE(r.end, text.size());
    out.push_back({text.substr(r.begin, r.end - r.begin), r.seconds, r.end_seconds.value_or(-1)});
  }
  return out;
}

struct Case {
  const char* text;
  std::vector<Found> expected;
};

void CheckCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    std::vector<Found> got = Find(c.text);
    ASSERT_EQ(got.size(), c.expected.size()) << "text: " << c.text;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].text, c.expected[i].text) << "text: " << c.text;
      EXPECT_DOUBLE_EQ(got[i].seconds, c.expected[i].seconds) << "text: " << c.text;
      EXPECT_DOUBLE_EQ(got[i].end_seconds, c.expected[i].end_seconds) << "text: " << c.text;
    }
  }
}

TEST(TimeReferencesTest, ClockForms) {
  CheckCases({
      {"At 01:15 the dog jumps.", {{"01:15", 75, -1}}},
      {"1:15", {{"1:15", 75, -1}}},
      {"0:00", {{"0:00", 0, -1}}},
      {"at 75:30 in the long take", {{"75:30", 4530, -1}}},
      {"at 1:02:03 a car", {{"1:02:03", 3723, -1}}},
      {"01:02:03.5", {{"01:02:03.5", 3723.5, -1}}},
      {"00:01:15,250 --> 00:01:17,000", {{"00:01:15,250 --> 00:01:17,000", 75.25, 77}}},
      {"02:03.25 exactly", {{"02:03.25", 123.25, -1}}},
      {"**00:15** the title", {{"00:15", 15, -1}}},
      {"[00:15] intro; (1:20) the end", {{"00:15", 15, -1}, {"1:20", 80, -1}}},
      {"Timestamp: 00:42.", {{"00:42", 42, -1}}},
      {"at 01:15, 02:30 and 03:45", {{"01:15", 75, -1}, {"02:30", 150, -1}, {"03:45", 225, -1}}},
      {"在01:15处,狗跳了起来", {{"01:15", 75, -1}}},
      {"In 01:15 the man leaves", {{"01:15", 75, -1}}},
      {"around the 2:00 mark", {{"2:00", 120, -1}}},
      {"From 00:30 onwards", {{"00:30", 30, -1}}},
      {"At 0:05, 0:10, and 0:15", {{"0:05", 5, -1}, {"0:10", 10, -1}, {"0:15", 15, -1}}},
  });
}

TEST(TimeReferencesTest, ClockRanges) {
  CheckCases({
      {"00:10-00:25 intro", {{"00:10-00:25", 10, 25}}},
      {"Chapter 1 (00:00 - 01:30): Intro", {{"00:00 - 01:30", 0, 90}}},
      {"- **0:00\xE2\x80\x93"
       "0:12**: A man walks",
       {{"0:00\xE2\x80\x93"
         "0:12",
         0, 12}}},
      {"00:10 - 00:25", {{"00:10 - 00:25", 10, 25}}},
      {"0:10\xE2\x80\x93"
       "0:25",
       {{"0:10\xE2\x80\x93"
         "0:25",
         10, 25}}},                                                      // en dash
      {"0:10 \xE2\x80\x94 0:25", {{"0:10 \xE2\x80\x94 0:25", 10, 25}}},  // em dash
      {"from 0:10 to 0:25", {{"0:10 to 0:25", 10, 25}}},
      {"between 0:10 and 0:25", {{"0:10 and 0:25", 10, 25}}},
      {"0:10 until 1:00:00", {{"0:10 until 1:00:00", 10, 3600}}},
      {"0:10~0:25", {{"0:10~0:25", 10, 25}}},
      // Not a range: the end is before the start, or "and" without "between".
      {"00:25-00:10", {{"00:25", 25, -1}, {"00:10", 10, -1}}},
      {"at 0:10 and 0:25", {{"0:10", 10, -1}, {"0:25", 25, -1}}},
  });
}

TEST(TimeReferencesTest, WordForms) {
  CheckCases({
      {"at 75 seconds", {{"75 seconds", 75, -1}}},
      {"At 75s a bird", {{"75s", 75, -1}}},
      {"at 75.5 sec", {{"75.5 sec", 75.5, -1}}},
      {"around 12 secs", {{"12 secs", 12, -1}}},
      {"at about 90 seconds", {{"90 seconds", 90, -1}}},
      {"at 2 minutes", {{"2 minutes", 120, -1}}},
      {"at 1.5 min", {{"1.5 min", 90, -1}}},
      {"at 1 hour", {{"1 hour", 3600, -1}}},
      {"1m15s", {{"1m15s", 75, -1}}},
      {"1h2m3s", {{"1h2m3s", 3723, -1}}},
      {"1h02m", {{"1h02m", 3720, -1}}},
      {"1m 15s", {{"1m 15s", 75, -1}}},
      {"1 min 15 s", {{"1 min 15 s", 75, -1}}},
      {"1 minute 15 seconds", {{"1 minute 15 seconds", 75, -1}}},
      {"1 minute and 15 seconds in", {{"1 minute and 15 seconds", 75, -1}}},
      {"1 hour, 2 minutes", {{"1 hour, 2 minutes", 3720, -1}}},
      {"75 seconds in, the lights go out", {{"75 seconds", 75, -1}}},
      {"75 seconds into the video", {{"75 seconds", 75, -1}}},
      {"at the 75-second mark", {{"75-second", 75, -1}}},
      {"the 75 s mark", {{"75 s", 75, -1}}},
      {"a fade (75 s)", {{"75 s", 75, -1}}},
      {"[12.0 seconds]", {{"12.0 seconds", 12, -1}}},
      {"t=75", {{"75", 75, -1}}},
      {"t = 75s", {{"75s", 75, -1}}},
      {"@ 30 seconds", {{"30 seconds", 30, -1}}},
      {"after 10 seconds the door opens", {{"10 seconds", 10, -1}}},
      {"1分15秒", {{"1分15秒", 75, -1}}},
      {"第75秒", {{"75秒", 75, -1}}},
      {"在75秒", {{"75秒", 75, -1}}},
      {"75秒处", {{"75秒", 75, -1}}},
  });
}

TEST(TimeReferencesTest, WordRanges) {
  CheckCases({
      {"10-25 seconds: intro", {{"10-25 seconds", 10, 25}}},
      {"10 \xE2\x80\x93 25 s", {{"10 \xE2\x80\x93 25 s", 10, 25}}},
      {"from 10 to 25 seconds", {{"10 to 25 seconds", 10, 25}}},
      {"between 10 and 25 seconds", {{"10 and 25 seconds", 10, 25}}},
      {"1m10s-1m25s", {{"1m10s-1m25s", 70, 85}}},
      {"from 1 minute to 2 minutes", {{"1 minute to 2 minutes", 60, 120}}},
      {"2-3 minutes in", {{"2-3 minutes", 120, 180}}},
  });
}

TEST(TimeReferencesTest, M3Markers) {
  CheckCases({
      {"The frame at ]<]12.0 seconds[>[ shows a cat", {{"]<]12.0 seconds[>[", 12, -1}}},
      {"]<]0.0 seconds[>[ and ]<]1234.5 seconds[>[",
       {{"]<]0.0 seconds[>[", 0, -1}, {"]<]1234.5 seconds[>[", 1234.5, -1}}},
      {"]<]x seconds[>[", {}},
  });
}

TEST(TimeReferencesTest, NotVideoTimes) {
  CheckCases({
      // Ratios and one-digit seconds.
      {"a 16:9 frame", {}},
      {"4:3 and 2.35:1", {}},
      {"a 16:10 aspect ratio", {}},
      {"the aspect is 21:09", {}},
      // Scores.
      {"The score is 21:15 now", {}},
      {"they won 10:08", {}},
      // Clock times of day.
      {"the meeting at 10:30 am", {}},
      {"at 10:30 a.m. sharp", {}},
      {"10:30 PM", {}},
      {"12:30pm", {}},
      {"at 14:30 UTC", {}},
      {"09:15 in the morning", {}},
      {"the wall clock reads 10:30", {}},
      {"at 6:00 o'clock", {}},
      // Dates and date-times.
      {"2024-05-01 12:00", {}},
      {"2024-05-01T12:00:00Z", {}},
      {"on 5/1 10:30 we met", {}},
      // Glued to letters, more components, addresses.
      {"v1:20", {}},
      {"1:02:03:04", {}},
      {"localhost:8080", {}},
      {"127.0.0.1:8080", {}},
      {"00:60", {}},
      {"1:60:00", {}},
      {"123:45:00", {}},
      {"1.2:30", {}},
      // Durations.
      {"it lasts 10 seconds", {}},
      {"it lasts about 10 seconds", {}},
      {"for 75 seconds", {}},
      {"a 75-second clip", {}},
      {"a 75 second clip", {}},
      {"75 seconds long", {}},
      {"10 seconds later", {}},
      {"every 5 seconds", {}},
      {"The video is 04:58 long", {}},
      {"it lasts 01:30", {}},
      {"The video's duration is 1:30.", {}},
      {"in the first 10 seconds", {}},
      {"10 seconds of footage", {}},
      // Numbers and units with no locating word.
      {"75 seconds", {}},
      {"There are 3 people and 2 dogs", {}},
      {"in the 1980s", {}},
      {"a 2m wall", {}},
      {"at 2m", {}},
      {"at 1h", {}},
      {"1,500 seconds", {}},
      {"1234567 seconds", {}},
      {"", {}},
  });
}

// Every example in docs/database.md, "Answer time references", as the docs say.
TEST(TimeReferencesTest, DocumentedExamples) {
  CheckCases({
      {"at 01:15", {{"01:15", 75, -1}}},
      {"1:02:03.5", {{"1:02:03.5", 3723.5, -1}}},
      {"00:01:02,500", {{"00:01:02,500", 62.5, -1}}},
      {"00:10-00:25", {{"00:10-00:25", 10, 25}}},
      {"from 0:10 to 0:25", {{"0:10 to 0:25", 10, 25}}},
      {"between 10 and 25 s", {{"10 and 25 s", 10, 25}}},
      {"10–25 seconds", {{"10–25 seconds", 10, 25}}},
      {"at 75 seconds", {{"75 seconds", 75, -1}}},
      {"around 75 s", {{"75 s", 75, -1}}},
      {"(75 s)", {{"75 s", 75, -1}}},
      {"75 seconds in", {{"75 seconds", 75, -1}}},
      {"the 75-second mark", {{"75-second", 75, -1}}},
      {"t=75", {{"75", 75, -1}}},
      {"1m15s", {{"1m15s", 75, -1}}},
      {"1 minute and 15 seconds", {{"1 minute and 15 seconds", 75, -1}}},
      {"1分15秒", {{"1分15秒", 75, -1}}},
      {"第75秒", {{"75秒", 75, -1}}},
      {"]<]75.0 seconds[>[", {{"]<]75.0 seconds[>[", 75, -1}}},
      {"10:30 am", {}},
      {"12:00 UTC", {}},
      {"on 2024-05-01 12:00", {}},
      {"16:9", {}},
      {"won 3:1", {}},
      {"aspect 4:3", {}},
      {"it lasts 10 seconds", {}},
      {"for 1:30", {}},
      {"a 75-second clip", {}},
      {"in the first 10 seconds", {}},
      {"2m", {}},
  });
}

TEST(TimeReferencesTest, SpansAreByteOffsetsAndCodePointsCount) {
  std::string text = "Ünïcödé at 01:15";
  std::vector<TimeReference> refs = FindTimeReferences(text);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(text.substr(refs[0].begin, refs[0].end - refs[0].begin), "01:15");
  EXPECT_EQ(CodePointOffset(text, refs[0].begin), 11);  // 7 letters, 4 ASCII bytes... in points
  EXPECT_EQ(CodePointOffset(text, refs[0].end), 16);
  EXPECT_EQ(CodePointOffset("abc", 99), 3);
}

TEST(TimeReferencesTest, AnyBytesAreSafe) {
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 131 + 7) % 256);
  junk += "]<]1";
  (void)FindTimeReferences(junk);
  EXPECT_EQ(FindTimeReferences(std::string("\0 at 0:15", 9)).size(), 1u);
  EXPECT_EQ(FindTimeReferences("at 9:").size(), 0u);
  EXPECT_EQ(FindTimeReferences("at 9:5").size(), 0u);
  EXPECT_EQ(FindTimeReferences("]<]").size(), 0u);
  EXPECT_EQ(FindTimeReferences("1m").size(), 0u);
}

TEST(TimeReferencesTest, ParseTimeTextForChapterBoundaries) {
  struct TextCase {
    const char* text;
    std::optional<double> seconds;
  } cases[] = {
      {"01:15", 75},
      {" 1:02:03 ", 3723},
      {"75", 75},
      {"75.5", 75.5},
      {"75s", 75},
      {"75 seconds", 75},
      {"1m15s", 75},
      {"00:00", 0},
      {"", std::nullopt},
      {"soon", std::nullopt},
      {"1:5", std::nullopt},
      {"0:10-0:20", std::nullopt},
      {"-5", std::nullopt},
      {"01:15 and 02:00", std::nullopt},
  };
  for (const TextCase& c : cases) {
    EXPECT_EQ(ParseTimeText(c.text), c.seconds) << c.text;
  }
}

TEST(TimeReferencesTest, FormatClockTime) {
  EXPECT_EQ(FormatClockTime(0), "00:00");
  EXPECT_EQ(FormatClockTime(75), "01:15");
  EXPECT_EQ(FormatClockTime(74.5), "01:15");
  EXPECT_EQ(FormatClockTime(3599.4), "59:59");
  EXPECT_EQ(FormatClockTime(3723), "1:02:03");
  EXPECT_EQ(FormatClockTime(-3), "00:00");
  EXPECT_EQ(ParseTimeText(FormatClockTime(4000)), 4000);
}

TEST(TimeReferencesTest, NearestFrame) {
  const std::vector<double> times = {0, 1, 2, 3, 4.5};
  struct FrameCase {
    double seconds;
    std::optional<double> duration;
    std::optional<size_t> expected;
  } cases[] = {
      {0, 5, 0},
      {0.4, 5, 0},
      {0.5, 5, 0} /* a tie: the earlier */,
      {0.6, 5, 1},
      {3.7, 5, 3},
      {3.75, 5, 3} /* a tie */,
      {3.8, 5, 4},
      {4.6, 5, 4},
      {6.0, 5, 4} /* within the slack */,
      {6.1, 5, std::nullopt},
      {-1, 5, std::nullopt},
      {5.4, std::nullopt, 4} /* no duration: last frame + slack */,
      {5.6, std::nullopt, std::nullopt},
  };
  for (const FrameCase& c : cases) {
    EXPECT_EQ(NearestFrame(c.seconds, c.duration, times), c.expected) << c.seconds;
  }
  EXPECT_EQ(NearestFrame(1, 5, {}), std::nullopt);
}

}  // namespace
}  // namespace reel::llm
