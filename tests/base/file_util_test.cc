#include "base/file_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/test_media.h"

namespace reel {
namespace {

namespace fs = std::filesystem;

class FilesBesideTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: ctest runs the tests of this fixture at once.
    dir_ = testing::ScratchDir(std::string("files_beside_") +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/media/talk.notes.pdf");  // a directory: never listed
    fs::create_directories(dir_ + "/media/deeper");
    for (const char* name : {"talk.mp4", "talk.pdf", "b.srt", "a.srt", "deeper/talk.pdf"}) {
      std::ofstream(dir_ + "/media/" + name) << "x";
    }
  }
  std::string dir_;
};

bool EndsInPdfOrSrt(const std::string& name) {
  return name.ends_with(".pdf") || name.ends_with(".srt");
}

// The regular files of the input's own directory that the filter takes, sorted, each joined to
// the input's directory: not the input's subdirectories' files, not directories, and the input
// itself only when the filter takes it.
TEST_F(FilesBesideTest, ListsTheTakenFilesOfTheInputsDirectorySorted) {
  const std::string media = dir_ + "/media";
  EXPECT_EQ(FilesBeside(media + "/talk.mp4", EndsInPdfOrSrt),
            (std::vector<std::string>{media + "/a.srt", media + "/b.srt", media + "/talk.pdf"}));
  std::vector<std::string> names_seen;
  FilesBeside(media + "/talk.mp4", [&](const std::string& name) {
    names_seen.push_back(name);
    return false;
  });
  std::sort(names_seen.begin(), names_seen.end());
  EXPECT_EQ(names_seen, (std::vector<std::string>{"a.srt", "b.srt", "talk.mp4", "talk.pdf"}));
  EXPECT_EQ(FilesBeside(media + "/talk.mp4", [](const std::string&) { return true; }).size(), 4u);
}

// A relative input gives relative paths (as the job listed it); a missing or unreadable
// directory gives none.
TEST_F(FilesBesideTest, KeepsARelativeInputRelativeAndToleratesAMissingDirectory) {
  const std::string relative = fs::relative(dir_ + "/media").string();
  ASSERT_FALSE(fs::path(relative).is_absolute());
  EXPECT_EQ(FilesBeside(relative + "/talk.mp4",
                        [](const std::string& name) { return name == "talk.pdf"; }),
            (std::vector<std::string>{relative + "/talk.pdf"}));
  EXPECT_TRUE(FilesBeside(dir_ + "/nowhere/talk.mp4", EndsInPdfOrSrt).empty());
}

}  // namespace
}  // namespace reel
