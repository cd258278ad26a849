#include "storage/store.h"

#include <gtest/gtest.h>

#include "storage/query.h"
#include "storage/sha256.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ =
        reel::testing::ScratchDir(std::string("StoreTest.") +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name()) +
        "/reel.db";
    auto store = Store::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_.emplace(std::move(store).value());
    auto job = store_->UpsertJob({.name = "clips", .spec_text = "inputs: [a, b]"});
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    job_ = *job;
  }

  int64_t AddItem(const std::string& path, const std::string& content = "c1",
                  const std::string& settings = "s1") {
    ItemRecord item;
    item.job_id = job_;
    item.path = path;
    item.content_hash = content;
    item.settings_hash = settings;
    item.size_bytes = 1000;
    auto id = store_->UpsertItem(item);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  // Runs a one-value query through the read-only query API.
  Value One(const std::string& sql) {
    auto table = Query(path_, sql);
    EXPECT_TRUE(table.ok()) << sql << ": " << table.status().ToString();
    if (!table.ok() || table->rows.empty()) return std::monostate();
    return table->rows[0][0];
  }
  int64_t Count(const std::string& sql) {
    Value v = One(sql);
    return std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v) : -1;
  }

  // Answers `prompt` for `item` with `content`.
  void Answer(int64_t item, const std::string& prompt, const std::string& content) {
    auto context = store_->PutContext({.item_id = item,
                                       .prompt_id = prompt,
                                       .text_tokens = 10,
                                       .image_tokens = 256,
                                       .manifest_json = R"({"frames": [0, 1]})"});
    ASSERT_TRUE(context.ok()) << context.status().ToString();
    auto request =
        store_->BeginRequest({.item_id = item, .context_id = *context, .prompt_id = prompt});
    ASSERT_TRUE(request.ok()) << request.status().ToString();
    ASSERT_TRUE(store_
                    ->FinishRequest(*request, {.content = content,
                                               .finish_reason = "stop",
                                               .prompt_tokens = 266,
                                               .completion_tokens = 20,
                                               .latency_seconds = 1.5})
                    .ok());
  }

  std::string path_;
  std::optional<Store> store_;
  int64_t job_ = 0;
};

FrameRecord Frame(int64_t index, double time, std::string jpeg = "") {
  FrameRecord frame;
  frame.sample_index = index;
  frame.source_frame = index * 25;
  frame.pts_seconds = time;
  frame.time_seconds = time;
  frame.width = 64;
  frame.height = 36;
  frame.thumbnail_jpeg = std::move(jpeg);
  frame.phash = 0xF0F0F0F0F0F0F0F0ull;  // high bit set: must survive the signed column
  return frame;
}

TEST_F(StoreTest, UpsertJobIsKeyedByName) {
  auto again = store_->UpsertJob({.name = "clips", .spec_text = "inputs: [a, b]"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, job_);
  auto changed = store_->UpsertJob({.name = "clips", .spec_text = "inputs: [c]"});
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(*changed, job_);
  auto found = store_->FindJob("clips");
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->spec_text, "inputs: [c]");
  EXPECT_EQ((*found)->spec_hash, Sha256Hex("inputs: [c]"));
  EXPECT_EQ(Count("SELECT count(*) FROM jobs"), 1);
  EXPECT_FALSE(store_->FindJob("nope")->has_value());
}

TEST_F(StoreTest, RunLifecycleRecordsCounters) {
  auto run =
      store_->BeginRun({.job_id = job_, .spec_hash = "h", .shard_index = 1, .shard_count = 4});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->status, RunStatus::kRunning);
  EXPECT_EQ(run->uid.size(), 32u);
  EXPECT_FALSE(run->host.empty());
  EXPECT_GT(run->pid, 0);
  EXPECT_FALSE(run->started_at.empty());
  RunCounters counters{
      .items_seen = 5, .items_done = 3, .items_skipped = 1, .items_failed = 1, .frames = 40};
  ASSERT_TRUE(store_->UpdateRunCounters(run->id, counters).ok());
  counters.requests = 3;
  ASSERT_TRUE(store_->FinishRun(run->id, RunStatus::kSucceeded, counters).ok());
  auto summary = store_->Summarize();
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->recent_runs.size(), 1u);
  const RunRecord& stored = summary->recent_runs[0];
  EXPECT_EQ(stored.status, RunStatus::kSucceeded);
  EXPECT_TRUE(stored.finished_at.has_value());
  EXPECT_EQ(stored.counters.items_done, 3);
  EXPECT_EQ(stored.counters.frames, 40);
  EXPECT_EQ(stored.counters.requests, 3);
  EXPECT_EQ(stored.shard_index, 1);
  EXPECT_EQ(stored.shard_count, 4);
  EXPECT_EQ(store_->FinishRun(999, RunStatus::kFailed, {}).code(), ErrorCode::kNotFound);
}

TEST_F(StoreTest, AbandonedRunsBecomeInterruptedOnce) {
  auto finished = store_->BeginRun({.job_id = job_, .spec_hash = "h"});
  auto abandoned = store_->BeginRun({.job_id = job_, .spec_hash = "h", .pid = 4242});
  ASSERT_TRUE(finished.ok() && abandoned.ok());
  ASSERT_TRUE(store_->FinishRun(finished->id, RunStatus::kSucceeded, {}).ok());

  auto marked = store_->InterruptAbandonedRuns("found by a later run");
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  ASSERT_EQ(marked->size(), 1u);
  EXPECT_EQ((*marked)[0].id, abandoned->id);
  EXPECT_EQ((*marked)[0].pid, 4242);
  EXPECT_EQ(Count("SELECT count(*) FROM runs WHERE status = 'interrupted' AND finished_at IS NOT "
                  "NULL AND message = 'found by a later run'"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM runs WHERE status = 'succeeded'"), 1);
  EXPECT_TRUE(store_->InterruptAbandonedRuns("again")->empty()) << "nothing left running";
}

TEST_F(StoreTest, ItemLifecycleCountsAttemptsAndDecidesSkipping) {
  int64_t id = AddItem("a.mp4");
  EXPECT_EQ(AddItem("a.mp4"), id);  // same key, same row
  auto item = store_->FindItem(job_, "a.mp4");
  ASSERT_TRUE(item.ok() && item->has_value());
  EXPECT_EQ((*item)->status, ItemStatus::kPending);
  EXPECT_EQ((*item)->attempts, 0);
  EXPECT_FALSE(IsUpToDate(**item, "c1", "s1"));

  ASSERT_TRUE(store_->MarkItemRunning(id, std::nullopt).ok());
  ASSERT_TRUE(store_->MarkItemFailed(id, "a.mp4: truncated file").ok());
  item = store_->FindItem(job_, "a.mp4");
  EXPECT_EQ((*item)->status, ItemStatus::kFailed);
  EXPECT_EQ((*item)->attempts, 1);
  EXPECT_EQ((*item)->error, "a.mp4: truncated file");

  auto run = store_->BeginRun({.job_id = job_});
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(store_->MarkItemRunning(id, run->id).ok());
  EXPECT_EQ((*store_->GetItem(id))->status, ItemStatus::kRunning);
  ASSERT_TRUE(store_
                  ->MarkItemDone(id, {.frames = {Frame(0, 0.0)},
                                      .media_json = R"({"duration_seconds": 12.5})"})
                  .ok());
  item = store_->FindItem(job_, "a.mp4");
  EXPECT_EQ((*item)->status, ItemStatus::kDone);
  EXPECT_EQ((*item)->attempts, 2);
  EXPECT_FALSE((*item)->error.has_value());
  EXPECT_EQ((*item)->last_run_id, run->id);
  EXPECT_EQ((*item)->media_json, R"({"duration_seconds": 12.5})");
  EXPECT_TRUE(IsUpToDate(**item, "c1", "s1"));
  EXPECT_FALSE(IsUpToDate(**item, "c2", "s1"));
  EXPECT_FALSE(IsUpToDate(**item, "c1", "s2"));
  EXPECT_FALSE(IsUpToDate(**item, std::nullopt, "s1"));

  // Same content and settings again: stays done. Changed settings: back to pending, fresh count.
  AddItem("a.mp4");
  EXPECT_EQ((*store_->GetItem(id))->status, ItemStatus::kDone);
  AddItem("a.mp4", "c1", "s2");
  item = store_->GetItem(id);
  EXPECT_EQ((*item)->status, ItemStatus::kPending);
  EXPECT_EQ((*item)->attempts, 0);
  EXPECT_EQ((*item)->media_json, R"({"duration_seconds": 12.5})");  // kept until re-probed

  EXPECT_EQ(store_->MarkItemRunning(12345, std::nullopt).code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->MarkItemDone(12345, {}).code(), ErrorCode::kNotFound);
  EXPECT_FALSE(store_->FindItem(job_, "missing.mp4")->has_value());
}

TEST_F(StoreTest, ReplacingFramesIsAtomicAndDuplicateFree) {
  int64_t id = AddItem("a.mp4");
  ASSERT_TRUE(store_
                  ->MarkItemDone(id, {.frames = {Frame(0, 0.0, "jpeg-0"), Frame(1, 2.0, "jpeg-1"),
                                                 Frame(2, 4.0, "jpeg-0")},
                                      .segments = {{.source = "subtitle:0",
                                                    .start_seconds = 1,
                                                    .end_seconds = 2,
                                                    .text = "hello there"}}})
                  .ok());
  auto frames = store_->ListFrames(id);
  ASSERT_TRUE(frames.ok());
  ASSERT_EQ(frames->size(), 3u);
  EXPECT_EQ((*frames)[1].time_seconds, 2.0);
  EXPECT_EQ((*frames)[1].source_frame, 25);
  EXPECT_EQ((*frames)[1].phash, 0xF0F0F0F0F0F0F0F0ull);
  EXPECT_EQ((*frames)[0].thumbnail_hash, Sha256Hex("jpeg-0"));
  EXPECT_EQ((*frames)[0].thumbnail_hash, (*frames)[2].thumbnail_hash);
  EXPECT_EQ(Count("SELECT count(*) FROM blobs"), 2);  // identical thumbnails stored once

  // Doing it again replaces rather than appends.
  ASSERT_TRUE(store_->MarkItemDone(id, {.frames = {Frame(0, 0.5), Frame(1, 2.5)}}).ok());
  EXPECT_EQ(store_->ListFrames(id)->size(), 2u);
  EXPECT_EQ(store_->ListSegments(id)->size(), 0u);
  EXPECT_EQ(Count("SELECT count(*) FROM frames"), 2);

  // A batch with a duplicate sample index fails as a whole: the old frames and status stay.
  ASSERT_TRUE(store_->MarkItemRunning(id, std::nullopt).ok());
  Status dup = store_->MarkItemDone(id, {.frames = {Frame(0, 9.0), Frame(5, 9.5), Frame(5, 10.0)}});
  EXPECT_EQ(dup.code(), ErrorCode::kInvalidArgument) << dup.ToString();
  frames = store_->ListFrames(id);
  ASSERT_EQ(frames->size(), 2u);
  EXPECT_EQ((*frames)[0].time_seconds, 0.5);
  EXPECT_EQ((*store_->GetItem(id))->status, ItemStatus::kRunning);

  // A thumbnail reference to a blob that does not exist is refused (foreign key).
  FrameRecord dangling = Frame(0, 0);
  dangling.thumbnail_hash = std::string(64, '0');
  EXPECT_FALSE(store_->ReplaceItemFrames(id, {dangling}).ok());
  EXPECT_EQ(store_->ListFrames(id)->size(), 2u);

  // Segments: unique on (item, source, start, text).
  SegmentRecord s{.source = "subtitle:0", .start_seconds = 1, .end_seconds = 2, .text = "hi"};
  EXPECT_FALSE(store_->ReplaceItemSegments(id, {s, s}).ok());
  SegmentRecord other_source = s;
  other_source.source = "subtitle:1";
  EXPECT_TRUE(store_->ReplaceItemSegments(id, {s, other_source}).ok());
  EXPECT_EQ(store_->ListSegments(id)->size(), 2u);
  EXPECT_TRUE(store_->database().CheckIntegrity().ok());
}

TEST_F(StoreTest, BlobsAreStoredOnceByContent) {
  std::string bytes("\0\1\2binary\xff", 10);
  auto h1 = store_->PutBlob(bytes);
  auto h2 = store_->PutBlob(bytes);
  ASSERT_TRUE(h1.ok() && h2.ok());
  EXPECT_EQ(*h1, *h2);
  EXPECT_EQ(*h1, Sha256Hex(bytes));
  EXPECT_EQ(Count("SELECT count(*) FROM blobs"), 1);
  EXPECT_EQ(Count("SELECT size FROM blobs"), 10);
  EXPECT_EQ(store_->GetBlob(*h1)->value(), bytes);
  EXPECT_FALSE(store_->GetBlob(Sha256Hex("other"))->has_value());
  auto empty = store_->PutBlob("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(store_->GetBlob(*empty)->value(), "");
}

TEST_F(StoreTest, FeaturesAreKeyedByFrameAndModelAndGoWithTheirFrames) {
  int64_t id = AddItem("a.mp4");
  ASSERT_TRUE(store_->MarkItemDone(id, {.frames = {Frame(0, 0), Frame(1, 1)}}).ok());
  auto frame_ids = store_->ListFrameIds(id);
  ASSERT_TRUE(frame_ids.ok());
  ASSERT_EQ(frame_ids->size(), 2u);
  FeatureRecord feature{.frame_id = (*frame_ids)[0],
                        .model = "siglip",
                        .dtype = "f16",
                        .dims = {4, 2},
                        .data = std::string(16, 'x')};
  auto f1 = store_->PutFeature(feature);
  ASSERT_TRUE(f1.ok()) << f1.status().ToString();
  feature.data = std::string(16, 'y');
  auto f2 = store_->PutFeature(feature);
  ASSERT_TRUE(f2.ok());
  EXPECT_EQ(*f1, *f2);
  EXPECT_EQ(Count("SELECT count(*) FROM features"), 1);
  EXPECT_EQ(std::get<std::string>(One("SELECT dims_json FROM features")), "[4,2]");
  feature.dtype = "complex128";
  EXPECT_FALSE(store_->PutFeature(feature).ok());
  ASSERT_TRUE(store_->ReplaceItemFrames(id, {Frame(0, 0)}).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM features"), 0);  // stale features went with the frames
}

// The vision stage's outputs: features by sample index in the item's own transaction, reuse by
// input hash, near-duplicate marks, and the reads `reel similar` makes.
TEST_F(StoreTest, ItemFeaturesDuplicatesAndFeatureReads) {
  int64_t id = AddItem("a.mp4");
  FrameRecord dup = Frame(1, 1);
  dup.duplicate_of = 0;
  auto feature = [](const std::string& bytes, const std::string& input) {
    return FeatureRecord{
        .model = "m3-vision/abc", .dtype = "f16", .dims = {2}, .data = bytes, .input_hash = input};
  };
  ItemOutputs outputs{.frames = {Frame(0, 0), dup},
                      .features = {{0, feature("1111", "pair0")}, {1, feature("1111", "pair0")}}};
  ASSERT_TRUE(store_->MarkItemDone(id, outputs).ok());
  auto frames = store_->ListFrames(id);
  ASSERT_TRUE(frames.ok());
  EXPECT_FALSE((*frames)[0].duplicate_of.has_value());
  EXPECT_EQ((*frames)[1].duplicate_of, 0);
  EXPECT_EQ(Count("SELECT count(*) FROM features"), 2);
  EXPECT_EQ(Count("SELECT count(DISTINCT blob_hash) FROM features"), 1);  // one blob for the pair

  auto found = store_->FindFeatureData("m3-vision/abc", "pair0");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, std::optional<std::string>("1111"));
  EXPECT_FALSE(store_->FindFeatureData("m3-vision/abc", "other")->has_value());
  EXPECT_FALSE(store_->FindFeatureData("other-model", "pair0")->has_value());

  auto ids = store_->ListFrameIds(id);
  ASSERT_TRUE(ids.ok());
  auto row = store_->GetFrameFeature((*ids)[1]);
  ASSERT_TRUE(row.ok());
  ASSERT_TRUE(row->has_value());
  EXPECT_EQ((*row)->path, "a.mp4");
  EXPECT_EQ((*row)->job, "clips");
  EXPECT_EQ((*row)->sample_index, 1);
  EXPECT_EQ((*row)->duplicate_of, 0);
  EXPECT_EQ((*row)->dims_json, "[2]");
  EXPECT_EQ((*row)->data, "1111");
  int seen = 0;
  ASSERT_TRUE(store_
                  ->ForEachFeature("m3-vision/abc", std::nullopt,
                                   [&](const FeatureRow& r) {
                                     ++seen;
                                     EXPECT_EQ(r.item_id, id);
                                     return Status::Ok();
                                   })
                  .ok());
  EXPECT_EQ(seen, 2);
  auto models = store_->FeatureModels();
  ASSERT_TRUE(models.ok());
  ASSERT_EQ(models->size(), 1u);
  EXPECT_EQ((*models)[0], std::make_pair(std::string("m3-vision/abc"), int64_t{2}));

  // A feature naming a frame the item does not have fails the whole transaction.
  ItemOutputs bad{.frames = {Frame(0, 0)}, .features = {{5, feature("2222", "x")}}};
  Status st = store_->MarkItemDone(id, bad);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Count("SELECT count(*) FROM frames"), 2);  // rolled back
}

TEST_F(StoreTest, ContextsAndRequestsRecordAnswersAndFailures) {
  int64_t id = AddItem("a.mp4");
  ContextRecord context{.item_id = id,
                        .prompt_id = "describe",
                        .text_tokens = 10,
                        .image_tokens = 256,
                        .manifest_json = R"({"frames": [0]})"};
  auto c1 = store_->PutContext(context);
  auto c2 = store_->PutContext(context);
  ASSERT_TRUE(c1.ok() && c2.ok());
  EXPECT_EQ(*c1, *c2);
  EXPECT_EQ(Count("SELECT total_tokens FROM contexts"), 266);
  context.manifest_json = "not json";
  EXPECT_FALSE(store_->PutContext(context).ok());

  auto failed = store_->BeginRequest({.item_id = id, .context_id = *c1, .prompt_id = "describe"});
  ASSERT_TRUE(failed.ok());
  ASSERT_TRUE(store_->FailRequest(*failed, "server: 503 overloaded", 0.2).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM failures WHERE stage = 'request'"), 1);
  Answer(id, "describe", "A cat sits on a mat.");
  // A later success clears the failure from the failures view; the request history stays.
  EXPECT_EQ(Count("SELECT count(*) FROM failures WHERE stage = 'request'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM requests"), 2);
  EXPECT_EQ(Count("SELECT cached_tokens IS NULL FROM responses"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM requests WHERE status = 'succeeded'"), 1);
  EXPECT_EQ(store_->FinishRequest(777, {.content = "x"}).code(), ErrorCode::kNotFound);
}

TEST_F(StoreTest, SearchRanksAndReturnsSnippetsWithPathAndTime) {
  int64_t a = AddItem("videos/a.mp4");
  int64_t b = AddItem("videos/b.mp4");
  ASSERT_TRUE(store_
                  ->MarkItemDone(a, {.segments = {{.source = "subtitle:0",
                                                   .start_seconds = 12.5,
                                                   .end_seconds = 14,
                                                   .text = "The penguin waddles across the ice.",
                                                   .language = "en"},
                                                  {.source = "subtitle:0",
                                                   .start_seconds = 20,
                                                   .end_seconds = 21,
                                                   .text = "Nothing to see here."}}})
                  .ok());
  Answer(b, "describe", "Penguin, penguin, penguin: a colony of penguins on the ice shelf.");
  Answer(a, "describe", "A bird walks on ice.");

  auto hits = store_->Search("penguin");
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 2u);
  // The answer that says "penguin" three times outranks the subtitle that says it once.
  EXPECT_EQ((*hits)[0].source, SearchHit::Source::kAnswer);
  EXPECT_EQ((*hits)[0].path, "videos/b.mp4");
  EXPECT_EQ((*hits)[0].origin, "describe");
  EXPECT_EQ((*hits)[0].job, "clips");
  EXPECT_FALSE((*hits)[0].start_seconds.has_value());
  EXPECT_NE((*hits)[0].snippet.find("[Penguin]"), std::string::npos) << (*hits)[0].snippet;
  EXPECT_LE((*hits)[0].score, (*hits)[1].score);
  EXPECT_EQ((*hits)[1].source, SearchHit::Source::kSegment);
  EXPECT_EQ((*hits)[1].path, "videos/a.mp4");
  EXPECT_EQ((*hits)[1].item_id, a);
  EXPECT_EQ((*hits)[1].origin, "subtitle:0");
  EXPECT_EQ((*hits)[1].start_seconds, 12.5);
  EXPECT_EQ((*hits)[1].end_seconds, 14.0);
  EXPECT_EQ((*hits)[1].snippet, "The [penguin] waddles across the ice.");

  // All words must occur; punctuation in plain queries is harmless.
  EXPECT_EQ(store_->Search("ice penguin")->size(), 2u);
  EXPECT_EQ(store_->Search("ice bird")->size(), 1u);
  EXPECT_EQ(store_->Search("penguin's \"ice\" (shelf) -x")->size(), 0u);
  EXPECT_EQ(store_->Search("penguin", {.answers = false})->size(), 1u);
  EXPECT_EQ(store_->Search("penguin", {.limit = 1})->size(), 1u);
  EXPECT_EQ(store_->Search("penguin", {.job = "other"})->size(), 0u);
  // FTS5 syntax on request.
  EXPECT_EQ(store_->Search("pengu* OR bird", {.fts_syntax = true})->size(), 3u);
  EXPECT_EQ(store_->Search("AND (", {.fts_syntax = true}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(store_->Search("  ").status().code(), ErrorCode::kInvalidArgument);

  // The index follows the rows: replaced segments are no longer found.
  ASSERT_TRUE(store_->ReplaceItemSegments(a, {}).ok());
  EXPECT_EQ(store_->Search("waddles")->size(), 0u);
  EXPECT_EQ(Count("SELECT count(*) FROM segments_fts WHERE segments_fts MATCH 'penguin'"), 0);
  ASSERT_TRUE(store_->database()
                  .Execute("INSERT INTO segments_fts(segments_fts) VALUES ('integrity-check'); "
                           "INSERT INTO responses_fts(responses_fts) VALUES ('integrity-check')")
                  .ok());
}

TEST_F(StoreTest, ViewsAnswerCommonQuestions) {
  int64_t a = AddItem("a.mp4");
  int64_t b = AddItem("b.mp4");
  int64_t c = AddItem("c.mp4");
  ASSERT_TRUE(store_->MarkItemRunning(b, std::nullopt).ok());
  ASSERT_TRUE(store_->MarkItemFailed(b, "b.mp4: no video stream").ok());
  ASSERT_TRUE(store_->MarkItemDone(a, {.frames = {Frame(0, 0), Frame(1, 1)}}).ok());
  Answer(a, "describe", "first answer");
  Answer(a, "describe", "second answer");
  Answer(a, "tags", "cat, mat");
  Answer(c, "describe", "c answer");

  // latest_answers: one row per (item, prompt), the newest.
  auto latest = Query(path_,
                      "SELECT path, prompt_id, content FROM latest_answers "
                      "ORDER BY path, prompt_id");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  ASSERT_EQ(latest->rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(latest->rows[0][2]), "second answer");
  EXPECT_EQ(std::get<std::string>(latest->rows[1][2]), "cat, mat");
  EXPECT_EQ(std::get<std::string>(latest->rows[2][0]), "c.mp4");

  auto failures = Query(path_, "SELECT path, stage, error, attempts FROM failures");
  ASSERT_TRUE(failures.ok());
  ASSERT_EQ(failures->rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(failures->rows[0][0]), "b.mp4");
  EXPECT_EQ(std::get<std::string>(failures->rows[0][1]), "item");
  EXPECT_EQ(std::get<std::string>(failures->rows[0][2]), "b.mp4: no video stream");
  EXPECT_EQ(std::get<int64_t>(failures->rows[0][3]), 1);

  auto summary = Query(path_,
                       "SELECT status, frames, answers FROM item_summary WHERE path = "
                       "'a.mp4'");
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(std::get<std::string>(summary->rows[0][0]), "done");
  EXPECT_EQ(std::get<int64_t>(summary->rows[0][1]), 2);
  EXPECT_EQ(std::get<int64_t>(summary->rows[0][2]), 3);

  auto jobs = Query(path_, "SELECT job, items, pending, done, failed FROM job_summary");
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->rows.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(jobs->rows[0][1]), 3);
  EXPECT_EQ(std::get<int64_t>(jobs->rows[0][2]), 1);
  EXPECT_EQ(std::get<int64_t>(jobs->rows[0][3]), 1);
  EXPECT_EQ(std::get<int64_t>(jobs->rows[0][4]), 1);

  auto status = store_->Summarize({.job = "clips"});
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->items.pending, 1);
  EXPECT_EQ(status->items.done, 1);
  EXPECT_EQ(status->items.failed, 1);
  ASSERT_EQ(status->recent_failures.size(), 1u);
  EXPECT_EQ(status->recent_failures[0].path, "b.mp4");
  EXPECT_EQ(store_->Summarize({.job = "other"})->items.done, 0);
}

TEST_F(StoreTest, EventsAreLogged) {
  int64_t a = AddItem("a.mp4");
  auto run = store_->BeginRun({.job_id = job_});
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(store_
                  ->LogEvent({.run_id = run->id,
                              .item_id = a,
                              .level = EventLevel::kWarning,
                              .message = "a.mp4: 3 corrupt packets skipped"})
                  .ok());
  ASSERT_TRUE(store_->LogEvent({.run_id = run->id, .message = "run started"}).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE run_id IS NOT NULL"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE level = 'warning' AND item_id IS NOT NULL"),
            1);
}

}  // namespace
}  // namespace reel::storage
