// `reel run` with vision.enabled, and `reel similar`, end to end on a random tiny checkpoint.
#include "tests/cli/cli_test_util.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

class VisionRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ScratchDir("VisionRun");
    ASSERT_EQ(Reel("make-test-weights --config tiny " + ShellQuote(dir_ + "/weights")).exit_code,
              0);
    // 4 s of a still blue picture, then 4 s of moving test pattern, 5 fps; sampled at 1 fps:
    // frames 0-3 identical (pairs (0,1) and (2,3)), 4-8 moving.
    ASSERT_EQ(RunCommand("cd " + ShellQuote(dir_) +
                         " && ffmpeg -loglevel error -y -f lavfi -i color=c=blue:s=160x120:d=4:r=5 "
                         "-f lavfi -i testsrc2=s=160x120:d=4:r=5 -filter_complex "
                         "'[0][1]concat=n=2:v=1[v]' -map '[v]' -c:v libx264 -pix_fmt yuv420p "
                         "clip.mp4 && ffmpeg -loglevel error -y -f lavfi -i testsrc2=s=160x120 "
                         "-frames:v 1 still.png")
                  .exit_code,
              0);
    WriteText(dir_ + "/notes.txt", "A document: no frames, no vision.\n");
  }

  void WriteJob(const std::string& vision_extra = "") {
    WriteText(dir_ + "/job.yaml",
              "name: vis\ninputs: [clip.mp4, still.png, notes.txt]\nvision:\n  enabled: true\n"
              "  weights: weights\n" +
                  vision_extra);
  }

  std::string db() const { return dir_ + "/vis.db"; }
  std::string dir_;
};

TEST_F(VisionRunTest, FeaturesDuplicatesReuseAndSimilar) {
  WriteJob();
  CommandResult run = Reel("run job.yaml", dir_);
  ASSERT_EQ(run.exit_code, 0) << run.err;

  // One f16 pooled feature per frame, the two frames of a pair sharing one blob.
  EXPECT_EQ(QueryInt(db(), "SELECT count(*) FROM frames"), 10);
  EXPECT_EQ(QueryInt(db(), "SELECT count(*) FROM features"), 10);
  EXPECT_EQ(QueryInt(db(),
                     "SELECT count(DISTINCT blob_hash) FROM features f JOIN frames fr ON "
                     "fr.id = f.frame_id JOIN items i ON i.id = fr.item_id "
                     "WHERE i.path LIKE '%clip.mp4'"),
            4);  // pairs (0,1) and (2,3) have identical pixels: one feature
  EXPECT_EQ(QueryInt(db(),
                     "SELECT count(*) FROM features WHERE dtype = 'f16' AND dims_json = "
                     "'[64]' AND model LIKE 'm3-vision/%-bf16/50176' AND input_hash "
                     "IS NOT NULL"),
            10);
  // The still picture repeats: frames 2 and 3 are near-duplicates of frame 0; 0 and 1 are kept.
  nlohmann::json dup = QueryJson(db(),
                                 "SELECT f.sample_index, f.duplicate_of FROM frames f JOIN items "
                                 "i ON i.id = f.item_id WHERE i.path LIKE '%clip.mp4' AND "
                                 "f.sample_index < 4 ORDER BY f.sample_index");
  ASSERT_EQ(dup.size(), 4u);
  EXPECT_TRUE(dup[0]["duplicate_of"].is_null());
  EXPECT_TRUE(dup[1]["duplicate_of"].is_null());
  EXPECT_EQ(dup[2]["duplicate_of"], 0);
  EXPECT_EQ(dup[3]["duplicate_of"], 0);
  nlohmann::json facts = QueryJson(db(),
                                   "SELECT json_extract(media_json, '$.vision') AS v FROM items "
                                   "WHERE path LIKE '%clip.mp4'");
  nlohmann::json vision = nlohmann::json::parse(facts[0]["v"].get<std::string>());
  EXPECT_EQ(vision["pairs"], 5);  // (0,1) (2,3) (4,5) (6,7) and frame 8 alone
  EXPECT_EQ(vision["encoded"].get<int>() + vision["reused"].get<int>(), 5);
  EXPECT_GE(vision["reused"].get<int>(), 1);  // (2,3) is (0,1) again

  // A second run has nothing to do.
  CommandResult again = Reel("run job.yaml --log-format json", dir_);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(LastJsonLine(again.err)["skipped"], 3);

  // A vision setting changes: items are redone, but every feature is reused, none encoded.
  WriteJob("  dedup_threshold: 1\n");
  CommandResult redo = Reel("run job.yaml --log-format json", dir_);
  ASSERT_EQ(redo.exit_code, 0) << redo.err;
  EXPECT_EQ(LastJsonLine(redo.err)["done"], 2);  // the video and the image; notes.txt skipped
  EXPECT_EQ(QueryInt(db(), "SELECT sum(json_extract(media_json, '$.vision.encoded')) FROM items"),
            0);
  EXPECT_EQ(QueryInt(db(), "SELECT sum(json_extract(media_json, '$.vision.reused')) FROM items"),
            6);
  EXPECT_EQ(QueryInt(db(), "SELECT count(*) FROM frames WHERE duplicate_of IS NOT NULL"), 0);

  // reel similar: the still picture's frame finds the blue pairs furthest away... and a frame
  // of the blue part finds its identical twin pair first with score 1.
  const int64_t blue = QueryInt(db(),
                                "SELECT f.id FROM frames f JOIN items i ON i.id = f.item_id "
                                "WHERE i.path LIKE '%clip.mp4' AND f.sample_index = 0");
  CommandResult similar =
      Reel("similar --job job.yaml " + std::to_string(blue) + " --limit 3 --format json", dir_);
  ASSERT_EQ(similar.exit_code, 0) << similar.err;
  nlohmann::json hits = nlohmann::json::parse(similar.out);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0]["sample_index"], 2);  // the identical pair (2,3); its own pair left out
  EXPECT_DOUBLE_EQ(hits[0]["score"].get<double>(), 1.0);
  EXPECT_EQ(hits[0]["rank"], 1);
  EXPECT_TRUE(hits[0]["path"].get<std::string>().ends_with("clip.mp4"));

  // An image query, encoded with the job's weights: the still picture itself scores 1.
  CommandResult by_image = Reel("similar --job job.yaml still.png --limit 1 --format json", dir_);
  ASSERT_EQ(by_image.exit_code, 0) << by_image.err;
  nlohmann::json top = nlohmann::json::parse(by_image.out);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_TRUE(top[0]["path"].get<std::string>().ends_with("still.png"));
  EXPECT_NEAR(top[0]["score"].get<double>(), 1.0, 1e-3);

  // A video query at a time in the blue part finds the blue pairs first.
  CommandResult by_video =
      Reel("similar --job job.yaml clip.mp4 --at 1 --limit 2 --format json", dir_);
  ASSERT_EQ(by_video.exit_code, 0) << by_video.err;
  nlohmann::json near = nlohmann::json::parse(by_video.out);
  ASSERT_EQ(near.size(), 2u);
  EXPECT_LT(near[0]["sample_index"].get<int>(), 4);
  EXPECT_LT(near[1]["sample_index"].get<int>(), 4);

  // Usage errors.
  EXPECT_EQ(Reel("similar --job job.yaml clip.mp4", dir_).exit_code, 2);  // no --at
  CommandResult none = Reel("similar --job job.yaml 999999", dir_);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("frame 999999 has no features"), std::string::npos) << none.err;
}

TEST_F(VisionRunTest, MissingWeightsFailTheMediaItemsOnly) {
  WriteText(dir_ + "/job.yaml",
            "name: vis\ninputs: [clip.mp4, still.png, notes.txt]\nvision:\n  enabled: true\n"
            "  weights: no-such-dir\n");
  CommandResult run = Reel("run job.yaml --log-format json", dir_);
  EXPECT_EQ(run.exit_code, 1);
  nlohmann::json summary = LastJsonLine(run.err);
  EXPECT_EQ(summary["failed"], 2);
  EXPECT_EQ(summary["done"], 1);  // the document
  nlohmann::json errors = QueryJson(db(), "SELECT path, error FROM items WHERE status = 'failed'");
  ASSERT_EQ(errors.size(), 2u);
  for (const nlohmann::json& e : errors) {
    const std::string error = e["error"].get<std::string>();
    EXPECT_NE(error.find(e["path"].get<std::string>()), std::string::npos) << error;
    EXPECT_NE(error.find("vision.weights"), std::string::npos) << error;
    EXPECT_NE(error.find("no-such-dir"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace reel::testing
