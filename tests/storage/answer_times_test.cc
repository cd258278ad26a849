// Answer time references in the database: stored with each response, linked to the nearest frame
// by the answer_time_frames view (the same rule as llm::NearestFrame), re-derived for responses
// stored before (a version-1 file migrated, an older grammar), carried by merges, shown by search.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "llm/answers/time_references.h"
#include "storage/database.h"
#include "storage/internal/schema.h"
#include "storage/merge.h"
#include "storage/query.h"
#include "storage/store.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

class AnswerTimesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        reel::testing::ScratchDir(std::string("AnswerTimesTest.") +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    path_ = dir_ + "/reel.db";
    auto store = Store::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_.emplace(std::move(store).value());
    auto job = store_->UpsertJob({.name = "clips", .spec_text = "{}"});
    ASSERT_TRUE(job.ok());
    job_ = *job;
  }

  // A done video item with frames at `times` and a media duration.
  int64_t AddVideo(const std::string& path, const std::vector<double>& times,
                   std::optional<double> duration) {
    ItemRecord item;
    item.job_id = job_;
    item.path = path;
    item.settings_hash = "s";
    auto id = store_->UpsertItem(item);
    EXPECT_TRUE(id.ok());
    ItemOutputs outputs;
    for (size_t i = 0; i < times.size(); ++i) {
      outputs.frames.push_back({.sample_index = static_cast<int64_t>(i),
                                .time_seconds = times[i],
                                .width = 64,
                                .height = 36});
    }
    if (duration) outputs.media_json = "{\"duration_seconds\": " + std::to_string(*duration) + "}";
    EXPECT_TRUE(store_->MarkItemDone(*id, outputs).ok());
    return *id;
  }

  int64_t Answer(int64_t item, const std::string& content) {
    auto request = store_->BeginRequest({.item_id = item, .prompt_id = "describe"});
    EXPECT_TRUE(request.ok());
    EXPECT_TRUE(store_->FinishRequest(*request, {.content = content}).ok());
    auto table =
        Query(path_, "SELECT id FROM responses WHERE request_id = " + std::to_string(*request));
    EXPECT_TRUE(table.ok() && table->rows.size() == 1);
    return std::get<int64_t>(table->rows[0][0]);
  }

  std::string dir_;
  std::string path_;
  std::optional<Store> store_;
  int64_t job_ = 0;
};

TEST_F(AnswerTimesTest, StoredWithTheResponseAndLinkedToTheNearestFrame) {
  int64_t item = AddVideo("a.mp4", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10.0);
  int64_t response = Answer(item,
                            "Ünïcödé: at 00:03 a dog; 00:05-00:08 it runs; at 10:30 am a meeting; "
                            "at 45 seconds nothing (past the end).");
  auto times = store_->ListAnswerTimes(response);
  ASSERT_TRUE(times.ok()) << times.status().ToString();
  ASSERT_EQ(times->size(), 3u);
  const AnswerTimeRecord& a = (*times)[0];
  EXPECT_EQ(a.text, "00:03");
  EXPECT_EQ(a.form, "clock");
  EXPECT_DOUBLE_EQ(a.seconds, 3);
  EXPECT_EQ(a.char_start, 12);  // code points, not bytes
  EXPECT_EQ(a.char_end, 17);
  EXPECT_EQ(a.frame_index, 3);
  EXPECT_DOUBLE_EQ(*a.frame_seconds, 3);
  const AnswerTimeRecord& b = (*times)[1];
  EXPECT_EQ(b.text, "00:05-00:08");
  EXPECT_EQ(b.end_seconds, 8.0);
  EXPECT_EQ(b.frame_index, 5);
  EXPECT_EQ(b.end_frame_index, 8);
  const AnswerTimeRecord& c = (*times)[2];
  EXPECT_EQ(c.text, "45 seconds");
  EXPECT_FALSE(c.frame_id.has_value()) << "outside the item: no frame";
  // The character span selects the text with SQLite's substr().
  auto spans =
      Query(path_,
            "SELECT substr(r.content, t.char_start + 1, t.char_end - t.char_start), t.text "
            "FROM answer_times t JOIN responses r ON r.id = t.response_id");
  ASSERT_TRUE(spans.ok());
  ASSERT_EQ(spans->rows.size(), 3u);
  for (const auto& row : spans->rows) EXPECT_EQ(row[0], row[1]);
}

TEST_F(AnswerTimesTest, ViewAgreesWithNearestFrameEverywhere) {
  // Irregular frame times (a variable-rate video) and no duration in one item; with one in another.
  std::vector<double> times = {0.0, 0.4, 1.3, 1.35, 2.9, 4.0, 6.5, 6.75, 9.1};
  int64_t with_duration = AddVideo("d.mp4", times, 9.5);
  int64_t without = AddVideo("n.mp4", times, std::nullopt);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> tenths(0, 120);
  std::string content;
  std::vector<double> asked;
  for (int i = 0; i < 60; ++i) {
    double t = tenths(rng) / 10.0;
    asked.push_back(t);
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "at 0:%02d.%d x; ", static_cast<int>(t),
                  static_cast<int>(std::lround(t * 10)) % 10);
    content += buffer;
  }
  for (int64_t item : {with_duration, without}) {
    std::optional<double> duration = item == with_duration ? std::optional(9.5) : std::nullopt;
    auto refs = store_->ListAnswerTimes(Answer(item, content));
    ASSERT_TRUE(refs.ok());
    ASSERT_EQ(refs->size(), asked.size());
    for (size_t i = 0; i < asked.size(); ++i) {
      std::optional<size_t> expected = llm::NearestFrame((*refs)[i].seconds, duration, times);
      std::optional<int64_t> got = (*refs)[i].frame_index;
      EXPECT_EQ(got.has_value(), expected.has_value()) << (*refs)[i].text;
      if (got && expected) {
        EXPECT_EQ(*got, static_cast<int64_t>(*expected)) << (*refs)[i].text;
      }
    }
  }
}

TEST_F(AnswerTimesTest, ReplacedFramesAreLinkedAnew) {
  int64_t item = AddVideo("a.mp4", {0, 1, 2, 3}, 4.0);
  int64_t response = Answer(item, "at 00:02 a cat");
  ASSERT_TRUE(store_
                  ->ReplaceItemFrames(item, {{.sample_index = 0, .time_seconds = 0},
                                             {.sample_index = 1, .time_seconds = 2.2}})
                  .ok());
  auto times = store_->ListAnswerTimes(response);
  ASSERT_TRUE(times.ok());
  ASSERT_EQ(times->size(), 1u);
  EXPECT_EQ((*times)[0].frame_index, 1);
  EXPECT_DOUBLE_EQ(*(*times)[0].frame_seconds, 2.2);
}

TEST_F(AnswerTimesTest, IndexingFindsResponsesStoredWithoutReferences) {
  int64_t item = AddVideo("a.mp4", {0, 1, 2}, 3.0);
  Answer(item, "at 00:01 a cat");
  auto up_to_date = store_->IndexAnswerTimes();
  ASSERT_TRUE(up_to_date.ok());
  EXPECT_EQ(*up_to_date, 0) << "FinishRequest already scanned it";
  // A response written by something that does not scan (an older reel, a hand-made import).
  ASSERT_TRUE(store_->database()
                  .Execute("INSERT INTO requests(uid, item_id, prompt_id, status) VALUES "
                           "('u-old', 1, 'p', 'succeeded');"
                           "INSERT INTO responses(request_id, content) VALUES "
                           "(last_insert_rowid(), 'at 00:02 a dog and 1m15s')")
                  .ok());
  auto scanned = store_->IndexAnswerTimes(/*batch_size=*/1);
  ASSERT_TRUE(scanned.ok()) << scanned.status().ToString();
  EXPECT_EQ(*scanned, 1);
  Value n = Query(path_, "SELECT count(*) FROM answer_times").value().rows[0][0];
  EXPECT_EQ(std::get<int64_t>(n), 3);
  // A newer grammar re-scans what an older one scanned, replacing its references.
  ASSERT_TRUE(store_->database().Execute("UPDATE answer_time_scans SET grammar_version = 0").ok());
  auto rescanned = store_->IndexAnswerTimes(/*batch_size=*/1);
  ASSERT_TRUE(rescanned.ok());
  EXPECT_EQ(*rescanned, 2);
  n = Query(path_, "SELECT count(*) FROM answer_times").value().rows[0][0];
  EXPECT_EQ(std::get<int64_t>(n), 3);
}

TEST_F(AnswerTimesTest, MigratingAVersionOneFileThenIndexingBackFills) {
  // A version-1 file, as the previous release wrote it, with one answer.
  std::string old_path = dir_ + "/v1.db";
  std::string sql = std::string(internal::Migrations()[0].sql) +
                    "PRAGMA user_version = 1;"
                    "INSERT INTO jobs(name, spec_text, spec_hash) VALUES ('j', '{}', 'h');"
                    "INSERT INTO items(job_id, path, kind, settings_hash, status, media_json) "
                    "VALUES (1, 'v.mp4', 'video', 's', 'done', '{\"duration_seconds\": 20}');"
                    "INSERT INTO frames(item_id, sample_index, time_seconds, width, height) "
                    "VALUES (1, 0, 0, 8, 8), (1, 1, 10, 8, 8), (1, 2, 19, 8, 8);"
                    "INSERT INTO requests(uid, item_id, prompt_id, status) "
                    "VALUES ('u1', 1, 'p', 'succeeded');"
                    "INSERT INTO responses(request_id, content) VALUES (1, 'From 0:09 to 0:18.');";
  std::ofstream(dir_ + "/v1.sql") << sql;
  reel::testing::CommandResult made =
      reel::testing::RunCommand("sqlite3 " + reel::testing::ShellQuote(old_path) + " < " +
                                reel::testing::ShellQuote(dir_ + "/v1.sql"));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto store = Store::Open(old_path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(store->database().SchemaVersion().value(), Database::LatestSchemaVersion());
  auto scanned = store->IndexAnswerTimes();
  ASSERT_TRUE(scanned.ok()) << scanned.status().ToString();
  EXPECT_EQ(*scanned, 1);
  auto times = store->ListAnswerTimes(1);
  ASSERT_TRUE(times.ok());
  ASSERT_EQ(times->size(), 1u);
  EXPECT_EQ((*times)[0].text, "0:09 to 0:18");
  EXPECT_EQ((*times)[0].frame_index, 1);
  EXPECT_EQ((*times)[0].end_frame_index, 2);
}

TEST_F(AnswerTimesTest, MergeCarriesReferences) {
  int64_t item = AddVideo("a.mp4", {0, 1, 2}, 3.0);
  Answer(item, "at 00:01 and at 00:02 things");
  store_.reset();
  std::string out = dir_ + "/merged.db";
  auto merged = Merge(out, {path_});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  auto table = Query(out, "SELECT text, frame_index FROM answer_time_frames ORDER BY char_start");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[0][0], Value(std::string("00:01")));
  EXPECT_EQ(table->rows[1][1], Value(int64_t{2}));
  auto again = Merge(out, {path_});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::get<int64_t>(Query(out, "SELECT count(*) FROM answer_times")->rows[0][0]), 2);
}

TEST_F(AnswerTimesTest, SearchHitsShowTheFramesInTheirSnippet) {
  int64_t item = AddVideo("a.mp4", {0, 1, 2, 3, 4, 5}, 6.0);
  Answer(item, "The penguin dives at 00:04 and surfaces later.");
  auto hits = store_->Search("penguin");
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 1u);
  ASSERT_EQ((*hits)[0].times.size(), 1u);
  EXPECT_EQ((*hits)[0].times[0].text, "00:04");
  EXPECT_EQ((*hits)[0].times[0].frame_index, 4);
}

}  // namespace
}  // namespace reel::storage
