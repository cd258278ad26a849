// The database boundary for outside text: TEXT columns only ever hold valid UTF-8.
#include <gtest/gtest.h>

#include "base/utf8.h"
#include "storage/query.h"
#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

TEST(StorageTextBoundaryTest, TextThatIsNotUtf8IsStoredEscaped) {
  const std::string path = reel::testing::ScratchDir("StorageTextBoundary") + "/reel.db";
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto job = store->UpsertJob({.name = "j\xE9", .spec_text = "name: j\xE9"});
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ItemRecord item;
  item.job_id = *job;
  item.path = "/media/clip\xE9.mkv";  // raw bytes: the safety net must still keep TEXT valid
  item.settings_hash = "s";
  auto id = store->UpsertItem(item);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(store->MarkItemRunning(*id, std::nullopt).ok());
  ItemOutputs outputs;
  outputs.segments.push_back({.source = "sidecar:clip\xE9.srt",
                              .start_seconds = 0,
                              .end_seconds = 1,
                              .text = "caf\xE9",
                              .language = "fr\xE9"});
  ASSERT_TRUE(store->MarkItemDone(*id, outputs).ok());
  ASSERT_TRUE(store->LogEvent({.item_id = *id, .message = "/media/clip\xE9.mkv: bad"}).ok());

  auto table = Query(path,
                     "SELECT j.name, i.path, s.source, s.text, s.language, e.message FROM jobs j "
                     "JOIN items i ON i.job_id = j.id JOIN segments s ON s.item_id = i.id "
                     "JOIN events e ON e.item_id = i.id");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->rows.size(), 1u);
  const std::vector<std::string> expected = {
      "j\\xE9",  "/media/clip\\xE9.mkv",     "sidecar:clip\\xE9.srt", "caf\\xE9",
      "fr\\xE9", "/media/clip\\xE9.mkv: bad"};
  for (size_t c = 0; c < expected.size(); ++c) {
    const std::string& value = std::get<std::string>(table->rows[0][c]);
    EXPECT_TRUE(IsValidUtf8(value)) << c;
    EXPECT_EQ(value, expected[c]) << c;
  }
  // A lookup with the same raw bytes finds the row (both sides go through the same boundary).
  auto found = store->FindItem(*job, "/media/clip\xE9.mkv");
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->path, "/media/clip\\xE9.mkv");
  // Valid UTF-8 is stored exactly, backslashes included.
  item.path = "/media/caf\xC3\xA9\\x41.mkv";
  ASSERT_TRUE(store->UpsertItem(item).ok());
  auto exact = store->FindItem(*job, "/media/caf\xC3\xA9\\x41.mkv");
  ASSERT_TRUE(exact.ok() && exact->has_value());
  EXPECT_EQ((*exact)->path, "/media/caf\xC3\xA9\\x41.mkv");
}

}  // namespace
}  // namespace reel::storage
