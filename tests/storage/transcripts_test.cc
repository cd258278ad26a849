// Transcripts of speech in the store: chunks stored one by one and kept for a resumed transcript,
// dropped for one made from other settings; the item's own outputs never touch them; merging
// databases carries them.
#include <gtest/gtest.h>

#include "storage/merge.h"
#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

SegmentRecord Speech(double start, const std::string& text) {
  SegmentRecord s;
  s.source = kSpeechSource;
  s.start_seconds = start;
  s.end_seconds = start + 1;
  s.text = text;
  s.language = "en";
  s.confidence = 0.75;
  s.words_json = R"([{"start": 1.0, "end": 1.5, "text": "hello"}])";
  return s;
}

class TranscriptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        reel::testing::ScratchDir(std::string("TranscriptsTest.") +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    Result<Store> store = Store::Open(dir_ + "/reel.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_.emplace(std::move(store).value());
    Result<int64_t> job = store_->UpsertJob({.name = "talks", .spec_text = "inputs: [a]"});
    ASSERT_TRUE(job.ok());
    ItemRecord item;
    item.job_id = *job;
    item.path = "talk.mp4";
    item.content_hash = "c1";
    item.settings_hash = "s1";
    Result<int64_t> id = store_->UpsertItem(item);
    ASSERT_TRUE(id.ok());
    item_ = *id;
  }

  std::vector<SegmentRecord> SpeechSegments() {
    std::vector<SegmentRecord> out;
    std::vector<SegmentRecord> all = store_->ListSegments(item_).value();
    for (SegmentRecord& s : all) {
      if (s.source == kSpeechSource) out.push_back(std::move(s));
    }
    return out;
  }

  std::string dir_;
  std::optional<Store> store_;
  int64_t item_ = 0;
};

TEST_F(TranscriptsTest, ChunksAreKeptForTheSameKeyAndDroppedForAnother) {
  TranscriptRecord t{.item_id = item_, .settings_key = "k1", .backend = "openai", .model = "w"};
  ASSERT_TRUE(store_->StartTranscript(t).ok());
  ASSERT_TRUE(store_
                  ->AddTranscriptChunk(item_, {.chunk = 0, .start_seconds = 0, .end_seconds = 9},
                                       {Speech(1, "hello there"), Speech(4, "general")})
                  .ok());
  std::optional<TranscriptRecord> stored = store_->GetTranscript(item_).value();
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->status, TranscriptStatus::kRunning);
  EXPECT_EQ(stored->segments, 2);
  std::vector<SegmentRecord> segments = SpeechSegments();
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_EQ(segments[0].confidence, 0.75);
  EXPECT_EQ(segments[0].words_json, Speech(1, "").words_json);

  // The item redone (new frames, other subtitles): the transcript's segments stay.
  ItemOutputs outputs;
  outputs.segments.push_back(
      {.source = "subtitle:2", .start_seconds = 1, .end_seconds = 2, .text = "a cue"});
  ASSERT_TRUE(store_->MarkItemDone(item_, outputs).ok());
  EXPECT_EQ(SpeechSegments().size(), 2u);
  EXPECT_EQ(store_->ListSegments(item_).value().size(), 3u);

  // Resumed with the same key: the chunk stays (a rerun skips it).
  ASSERT_TRUE(store_->StartTranscript(t).ok());
  EXPECT_EQ(store_->ListTranscriptChunks(item_).value().size(), 1u);
  ASSERT_TRUE(store_
                  ->AddTranscriptChunk(item_, {.chunk = 1, .start_seconds = 9, .end_seconds = 20},
                                       {Speech(12, "kenobi")})
                  .ok());
  t.status = TranscriptStatus::kDone;
  t.chunks = 2;
  t.speech_seconds = 7.5;
  ASSERT_TRUE(store_->FinishTranscript(t).ok());
  stored = store_->GetTranscript(item_).value();
  EXPECT_EQ(stored->status, TranscriptStatus::kDone);
  EXPECT_EQ(stored->segments, 3);
  EXPECT_EQ(stored->chunks, 2);
  EXPECT_EQ(store_->CountUnfinishedTranscripts(1).value(), 0);

  // Another key: everything of the old transcript goes.
  TranscriptRecord other{
      .item_id = item_, .settings_key = "k2", .backend = "pocketsphinx", .model = "en-us"};
  ASSERT_TRUE(store_->StartTranscript(other).ok());
  EXPECT_TRUE(SpeechSegments().empty());
  EXPECT_TRUE(store_->ListTranscriptChunks(item_).value().empty());
  EXPECT_EQ(store_->ListSegments(item_).value().size(), 1u) << "the subtitle stays";
  EXPECT_EQ(store_->CountUnfinishedTranscripts(1).value(), 1);
  // Finishing the old key's transcript is refused: it is not the stored one.
  EXPECT_EQ(store_->FinishTranscript(t).code(), ErrorCode::kNotFound);
  // Full-text search sees only the current segments.
  ASSERT_TRUE(store_
                  ->AddTranscriptChunk(item_, {.chunk = 0, .start_seconds = 0, .end_seconds = 9},
                                       {Speech(2, "obi wan")})
                  .ok());
  EXPECT_EQ(store_->Search("kenobi").value().size(), 0u);
  EXPECT_EQ(store_->Search("obi wan").value().size(), 1u);
}

TEST_F(TranscriptsTest, MergeCarriesTranscripts) {
  TranscriptRecord t{.item_id = item_, .settings_key = "k1", .backend = "openai", .model = "w"};
  ASSERT_TRUE(store_->StartTranscript(t).ok());
  ASSERT_TRUE(store_->MarkItemDone(item_, {}).ok());
  ASSERT_TRUE(store_
                  ->AddTranscriptChunk(item_, {.chunk = 0, .start_seconds = 0, .end_seconds = 9},
                                       {Speech(1, "hello there")})
                  .ok());
  t.status = TranscriptStatus::kDone;
  ASSERT_TRUE(store_->FinishTranscript(t).ok());
  store_.reset();
  const std::string out = dir_ + "/merged.db";
  Result<MergeStats> merged = Merge(out, {dir_ + "/reel.db"});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  Result<Store> target = Store::Open(out);
  ASSERT_TRUE(target.ok());
  Result<std::optional<ItemRecord>> item = target->FindItem(1, "talk.mp4");
  ASSERT_TRUE(item.ok() && item->has_value());
  std::optional<TranscriptRecord> copied = target->GetTranscript((*item)->id).value();
  ASSERT_TRUE(copied);
  EXPECT_EQ(copied->settings_key, "k1");
  EXPECT_EQ(copied->status, TranscriptStatus::kDone);
  EXPECT_EQ(target->ListTranscriptChunks((*item)->id).value().size(), 1u);
  EXPECT_EQ(target->ListSegments((*item)->id).value().size(), 1u);
}

}  // namespace
}  // namespace reel::storage
