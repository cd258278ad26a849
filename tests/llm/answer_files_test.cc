// Which file a time in an answer over several files refers to (llm/answers/answer_files.h).
#include "llm/answers/answer_files.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace reel::llm {
namespace {

const std::vector<AnswerFile> kFiles = {
    {"/m/a.mp4", true}, {"/m/b.mp4", true}, {"/m/diagram.png", false}};

TEST(AnswerFilesTest, HeadingsCountFilesOfTheirKind) {
  EXPECT_EQ(AnswerFileHeading(kFiles, 0), "Video 1");
  EXPECT_EQ(AnswerFileHeading(kFiles, 1), "Video 2");
  EXPECT_EQ(AnswerFileHeading(kFiles, 2), "Image 1");
  EXPECT_EQ(AnswerFileHeading(kFiles, 3), "");
  EXPECT_EQ(AnswerFileName("/m/b.mp4"), "b.mp4");
  EXPECT_EQ(AnswerFileName("b.mp4"), "b.mp4");
}

TEST(AnswerFilesTest, ATimeRefersToTheFileNamedLastBeforeIt) {
  const std::string text = "In b.mp4 at 00:03, then Video 1 at 00:01; the diagram.png at 00:00.";
  EXPECT_EQ(FileNamedBefore(text, text.find("00:03"), kFiles), 1u);
  EXPECT_EQ(FileNamedBefore(text, text.find("00:01"), kFiles), 0u);
  EXPECT_EQ(FileNamedBefore(text, text.find("00:00"), kFiles), 2u);
  EXPECT_EQ(FileNamedBefore("At 00:02 first.", 3, kFiles), std::nullopt);  // none named
  EXPECT_EQ(FileNamedBefore(text, 1000, kFiles), 2u);                      // past the end
}

TEST(AnswerFilesTest, VideoOneIsNotTheStartOfVideoTwelve) {
  std::vector<AnswerFile> files;
  for (int k = 1; k <= 12; ++k) files.push_back({"/m/v" + std::to_string(k) + ".mp4", true});
  const std::string text = "Video 12 at 00:05";
  EXPECT_EQ(FileNamedBefore(text, text.find("00:05"), files), 11u);
  const std::string one = "Video 1, at 00:05";
  EXPECT_EQ(FileNamedBefore(one, one.find("00:05"), files), 0u);
}

}  // namespace
}  // namespace reel::llm
