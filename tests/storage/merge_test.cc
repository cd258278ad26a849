#include "storage/merge.h"

#include <gtest/gtest.h>

#include "storage/query.h"
#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

FrameRecord MergeFrame(int64_t index, double time, const std::string& jpeg) {
  FrameRecord frame;
  frame.sample_index = index;
  frame.time_seconds = time;
  frame.width = 32;
  frame.height = 18;
  frame.thumbnail_jpeg = jpeg;
  return frame;
}

// Writes a shard: job "clips" with items at `paths`, each done with two frames (shared
// thumbnails), one subtitle segment, a feature, an answer and an event.
void WriteShard(const std::string& path, const std::vector<std::string>& paths,
                const std::string& answer_prefix) {
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto job = store->UpsertJob({.name = "clips", .spec_text = "spec"});
  ASSERT_TRUE(job.ok());
  auto run = store->BeginRun({.job_id = *job});
  ASSERT_TRUE(run.ok());
  for (const std::string& p : paths) {
    auto id = store->UpsertItem(
        {.job_id = *job, .path = p, .content_hash = "content-" + p, .settings_hash = "s1"});
    ASSERT_TRUE(id.ok());
    ASSERT_TRUE(store->MarkItemRunning(*id, run->id).ok());
    FrameRecord second = MergeFrame(1, 1, "thumb-b");
    second.duplicate_of = 0;  // the vision stage's near-duplicate mark travels with the frame
    ASSERT_TRUE(store
                    ->MarkItemDone(*id, {.frames = {MergeFrame(0, 0, "thumb-a"), second},
                                         .segments = {{.source = "subtitle:0",
                                                       .start_seconds = 1,
                                                       .end_seconds = 2,
                                                       .text = "line of " + p}}})
                    .ok());
    auto frame_ids = store->ListFrameIds(*id);
    ASSERT_TRUE(frame_ids.ok());
    ASSERT_TRUE(store
                    ->PutFeature({.frame_id = (*frame_ids)[0],
                                  .model = "m",
                                  .dtype = "f32",
                                  .dims = {2},
                                  .data = std::string(8, 'f'),
                                  .input_hash = "pixels-" + p})
                    .ok());
    auto context = store->PutContext(
        {.item_id = *id, .prompt_id = "describe", .manifest_json = R"({"item": ")" + p + R"("})"});
    ASSERT_TRUE(context.ok());
    auto request = store->BeginRequest(
        {.item_id = *id, .context_id = *context, .run_id = run->id, .prompt_id = "describe"});
    ASSERT_TRUE(request.ok());
    ASSERT_TRUE(
        store->FinishRequest(*request, {.content = answer_prefix + " answer for " + p}).ok());
    ASSERT_TRUE(store->LogEvent({.run_id = run->id, .item_id = *id, .message = "did " + p}).ok());
  }
  ASSERT_TRUE(store->FinishRun(run->id, RunStatus::kSucceeded, {.items_done = 2}).ok());
}

std::vector<int64_t> Counts(const std::string& db) {
  auto table = Query(db,
                     "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM runs), "
                     "(SELECT count(*) FROM items), (SELECT count(*) FROM frames), "
                     "(SELECT count(*) FROM segments), (SELECT count(*) FROM features), "
                     "(SELECT count(*) FROM contexts), (SELECT count(*) FROM requests), "
                     "(SELECT count(*) FROM responses), (SELECT count(*) FROM events), "
                     "(SELECT count(*) FROM blobs)");
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  std::vector<int64_t> counts;
  if (!table.ok()) return counts;
  for (const Value& v : table->rows[0]) counts.push_back(std::get<int64_t>(v));
  return counts;
}

TEST(MergeTest, OverlappingShardsMergeWithoutDuplicatesAndIdempotently) {
  std::string dir = reel::testing::ScratchDir("MergeTest.Overlap");
  std::string shard1 = dir + "/shard1.db", shard2 = dir + "/shard2.db", out = dir + "/out.db";
  WriteShard(shard1, {"a.mp4", "b.mp4"}, "one");
  WriteShard(shard2, {"b.mp4", "c.mp4"}, "two");  // b.mp4 is in both

  auto stats = Merge(out, {shard1, shard2});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->shards, 2);
  // jobs 1, runs 2, items 3, frames 6, segments 3, features 3, contexts 3 (b's context is the
  // same manifest in both), requests 4, responses 4, events 4, blobs 3 (two thumbnails, one
  // feature tensor).
  const std::vector<int64_t> expected = {1, 2, 3, 6, 3, 3, 3, 4, 4, 4, 3};
  EXPECT_EQ(Counts(out), expected);

  // Twice, and in the other order: nothing changes.
  auto again = Merge(out, {shard2, shard1});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Counts(out), expected);
  EXPECT_EQ(again->items, 0);
  EXPECT_EQ(again->frames, 0);
  EXPECT_EQ(again->requests, 0);
  EXPECT_EQ(again->events, 0);

  // Row ids were remapped: every answer hangs off the right item, and search works on the merge.
  auto answers = Query(out, "SELECT path, content FROM answers ORDER BY path, content");
  ASSERT_TRUE(answers.ok());
  ASSERT_EQ(answers->rows.size(), 4u);
  EXPECT_EQ(std::get<std::string>(answers->rows[0][1]), "one answer for a.mp4");
  EXPECT_EQ(std::get<std::string>(answers->rows[3][1]), "two answer for c.mp4");
  auto store = Store::Open(out);
  ASSERT_TRUE(store.ok());
  auto hits = store->Search("line c.mp4");
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].path, "c.mp4");
  EXPECT_EQ((*hits)[0].start_seconds, 1.0);
  auto runs = Query(out,
                    "SELECT count(*) FROM runs WHERE status = 'succeeded' AND "
                    "items_done = 2");
  EXPECT_EQ(std::get<int64_t>(runs->rows[0][0]), 2);
  auto linked = Query(out, "SELECT count(*) FROM items WHERE last_run_id IS NULL");
  EXPECT_EQ(std::get<int64_t>(linked->rows[0][0]), 0);
  // The vision columns come along: near-duplicate marks and feature input hashes.
  auto vision = Query(out,
                      "SELECT (SELECT count(*) FROM frames WHERE duplicate_of = 0), "
                      "(SELECT count(*) FROM features WHERE input_hash LIKE 'pixels-%')");
  ASSERT_TRUE(vision.ok());
  EXPECT_EQ(std::get<int64_t>(vision->rows[0][0]), 3);
  EXPECT_EQ(std::get<int64_t>(vision->rows[0][1]), 3);
  EXPECT_TRUE(store->database().CheckIntegrity().ok());
  auto fts = store->database().Execute(
      "INSERT INTO segments_fts(segments_fts) VALUES ('integrity-check'); "
      "INSERT INTO responses_fts(responses_fts) VALUES ('integrity-check')");
  EXPECT_TRUE(fts.ok()) << fts.ToString();
}

TEST(MergeTest, TheDoneItemWinsAndBringsItsOwnOutputs) {
  std::string dir = reel::testing::ScratchDir("MergeTest.Winner");
  std::string failed = dir + "/failed.db", done = dir + "/done.db", out = dir + "/out.db";
  {
    auto store = Store::Open(failed);
    ASSERT_TRUE(store.ok());
    auto job = store->UpsertJob({.name = "clips", .spec_text = "spec"});
    auto id = store->UpsertItem({.job_id = *job, .path = "x.mp4", .settings_hash = "old"});
    ASSERT_TRUE(store
                    ->ReplaceItemFrames(
                        *id, {MergeFrame(0, 0, ""), MergeFrame(1, 1, ""), MergeFrame(2, 2, "")})
                    .ok());
    ASSERT_TRUE(store->MarkItemRunning(*id, std::nullopt).ok());
    ASSERT_TRUE(store->MarkItemFailed(*id, "x.mp4: decode error").ok());
  }
  WriteShard(done, {"x.mp4"}, "ok");
  ASSERT_TRUE(Merge(out, {failed}).ok());
  ASSERT_TRUE(Merge(out, {done}).ok());
  auto item = Query(out,
                    "SELECT status, settings_hash, error IS NULL, "
                    "(SELECT count(*) FROM frames) FROM items");
  ASSERT_TRUE(item.ok());
  ASSERT_EQ(item->rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(item->rows[0][0]), "done");
  EXPECT_EQ(std::get<std::string>(item->rows[0][1]), "s1");
  EXPECT_EQ(std::get<int64_t>(item->rows[0][2]), 1);
  EXPECT_EQ(std::get<int64_t>(item->rows[0][3]), 2);  // the winner's two, not 3 + 2

  // Merging the failed shard again does not demote the done item.
  ASSERT_TRUE(Merge(out, {failed}).ok());
  item = Query(out, "SELECT status, (SELECT count(*) FROM frames) FROM items");
  EXPECT_EQ(std::get<std::string>(item->rows[0][0]), "done");
  EXPECT_EQ(std::get<int64_t>(item->rows[0][1]), 2);
}

TEST(MergeTest, RejectsMissingShardsAndSelfMerge) {
  std::string dir = reel::testing::ScratchDir("MergeTest.Errors");
  std::string out = dir + "/out.db";
  auto missing = Merge(out, {dir + "/missing.db"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  ASSERT_TRUE(Store::Open(out).ok());
  auto self = Merge(out, {out});
  ASSERT_FALSE(self.ok());
  EXPECT_EQ(self.status().code(), ErrorCode::kInvalidArgument);
  {
    auto old = Database::Open(dir + "/old.db");
    ASSERT_TRUE(old.ok());
    ASSERT_TRUE(old->Execute("PRAGMA user_version = 0").ok());
  }
  auto old = Merge(out, {dir + "/old.db"});
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(old.status().message().find("old.db"), std::string::npos);
}

}  // namespace
}  // namespace reel::storage
