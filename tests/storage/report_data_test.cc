// ReportReader (storage/report_data.h) directly: a snapshot holds one state of the file while a
// run keeps writing, and frames carry their thumbnail's size (so a rerun of `reel report` need
// not read blobs it already wrote).
#include "storage/report_data.h"

#include <gtest/gtest.h>

#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

class ReportDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        reel::testing::ScratchDir(std::string("ReportDataTest.") +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    path_ = dir_ + "/reel.db";
    auto store = Store::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_.emplace(std::move(store).value());
    auto job = store_->UpsertJob({.name = "clips", .spec_text = "{}"});
    ASSERT_TRUE(job.ok());
    job_ = *job;
  }

  int64_t AddItem(const std::string& path, const std::vector<std::string>& thumbnails) {
    ItemRecord record;
    record.job_id = job_;
    record.path = path;
    record.settings_hash = "s";
    auto id = store_->UpsertItem(record);
    EXPECT_TRUE(id.ok());
    ItemOutputs outputs;
    for (size_t i = 0; i < thumbnails.size(); ++i) {
      outputs.frames.push_back({.sample_index = static_cast<int64_t>(i),
                                .time_seconds = static_cast<double>(i),
                                .width = 64,
                                .height = 36,
                                .thumbnail_jpeg = thumbnails[i]});
    }
    EXPECT_TRUE(store_->MarkItemDone(*id, outputs).ok());
    return *id;
  }

  std::string dir_;
  std::string path_;
  std::optional<Store> store_;
  int64_t job_ = 0;
};

TEST_F(ReportDataTest, ASnapshotIgnoresRowsWrittenDuringIt) {
  AddItem("a.mp4", {});
  auto reader = ReportReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_TRUE(reader->BeginSnapshot().ok());
  EXPECT_EQ(reader->CountItems(std::nullopt).value(), 1);
  AddItem("b.mp4", {});  // a run writing while the report is made
  EXPECT_EQ(reader->CountItems(std::nullopt).value(), 1);
  EXPECT_EQ(reader->ListItems(std::nullopt, 0, 10).value().size(), 1u);
  ASSERT_TRUE(reader->EndSnapshot().ok());
  EXPECT_EQ(reader->CountItems(std::nullopt).value(), 2);
}

TEST_F(ReportDataTest, FramesCarryTheirThumbnailSize) {
  const int64_t id = AddItem("a.mp4", {std::string(300, 'x'), std::string(7, 'y')});
  AddItem("no-thumbs.mp4", {"", ""});
  auto reader = ReportReader::Open(path_);
  ASSERT_TRUE(reader.ok());
  auto item = reader->ReadItem(id);
  ASSERT_TRUE(item.ok()) << item.status().ToString();
  ASSERT_EQ(item->frames.size(), 2u);
  ASSERT_TRUE(item->frames[0].thumbnail_hash);
  EXPECT_EQ(item->frames[0].thumbnail_bytes, 300);
  EXPECT_EQ(item->frames[1].thumbnail_bytes, 7);
  auto blob = reader->ReadBlob(*item->frames[1].thumbnail_hash);
  ASSERT_TRUE(blob.ok() && *blob);
  EXPECT_EQ(**blob, std::string(7, 'y'));
}

}  // namespace
}  // namespace reel::storage
