#include "base/strings.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "base/clock.h"
#include "base/enum_names.h"

namespace reel {
namespace {

TEST(StringsTest, LowerFoldsAsciiOnly) {
  EXPECT_EQ(Lower("MP4 Clip.MKV"), "mp4 clip.mkv");
  EXPECT_EQ(Lower("\xC3\x89T\xC3\x89"), "\xC3\x89t\xC3\x89");  // ÉTÉ: the É bytes stay
  EXPECT_EQ(Lower(""), "");
}

TEST(StringsTest, TrimRemovesTheGivenBytesAtBothEnds) {
  EXPECT_EQ(Trim("  \t a b \r\n\v\f"), "a b");
  EXPECT_EQ(Trim(" \n "), "");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim("x"), "x");
  EXPECT_EQ(Trim("\n a \n", " \t"), "\n a \n");  // only the bytes asked for
  EXPECT_EQ(Trim(" \ta\t ", " \t"), "a");
}

TEST(StringsTest, JoinPutsTheSeparatorBetween) {
  EXPECT_EQ(Join({}, ", "), "");
  EXPECT_EQ(Join({"fps"}, ", "), "fps");
  EXPECT_EQ(Join({"fps", "count", "keyframes"}, ", "), "fps, count, keyframes");
}

TEST(ClockTest, IsoTimesAndMediaClock) {
  EXPECT_TRUE(std::regex_match(NowIso(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << NowIso();
  EXPECT_TRUE(
      std::regex_match(NowIsoMillis(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << NowIsoMillis();
  EXPECT_EQ(MediaClock(0), "0:00:00.000");
  EXPECT_EQ(MediaClock(75.25), "0:01:15.250");
  EXPECT_EQ(MediaClock(3723.0004), "1:02:03.000");
  EXPECT_EQ(MediaClock(59.9996), "0:01:00.000");  // rounded to the millisecond
}

enum class Color { kRed, kGreen, kBlue };

TEST(EnumNamesTest, ParseNameAndList) {
  const EnumNames<Color> names{{{"red", Color::kRed}, {"green", Color::kGreen}}};
  EXPECT_EQ(names.Parse("green"), Color::kGreen);
  EXPECT_EQ(names.Parse("Green"), std::nullopt);
  EXPECT_EQ(names.Name(Color::kGreen), "green");
  EXPECT_EQ(names.Name(Color::kBlue), "red");  // no entry: the first one's
  EXPECT_EQ(names.Names(), (std::vector<std::string>{"red", "green"}));
}

}  // namespace
}  // namespace reel
