// Unit tests of the runner's parts: sharding, the run lock, document chunks, frame features,
// frame estimates and the output formats.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <map>
#include <sstream>
#include <string_view>
#include <vector>

#include "jobs/cli/table_output.h"
#include "jobs/run/item_plan.h"
#include "jobs/run/shard.h"
#include "jobs/run_lock.h"
#include "jobs/stages/document_chunks.h"
#include "jobs/stages/frame_features.h"
#include "pipeline/image_codec.h"
#include "tests/support/test_media.h"

namespace reel::jobs {
namespace {

using Env = std::map<std::string, std::string>;

std::function<std::optional<std::string>(const std::string&)> Lookup(const Env& env) {
  return [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ShardTest, ParsesFlagsAndEnvironment) {
  struct Case {
    std::optional<std::string> flag;
    std::optional<int> count;
    Env env;
    std::optional<std::pair<int, int>> expected;  // nullopt: an error
  } cases[] = {
      {std::nullopt, std::nullopt, {}, std::pair{0, 1}},
      {"1/4", std::nullopt, {}, std::pair{1, 4}},
      {"0/1", std::nullopt, {}, std::pair{0, 1}},
      {"4/4", std::nullopt, {}, std::nullopt},
      {"1-4", std::nullopt, {}, std::nullopt},
      {"a/4", std::nullopt, {}, std::nullopt},
      {"1/0", std::nullopt, {}, std::nullopt},
      // The flag wins over the environment.
      {"0/2", std::nullopt, {{"SLURM_ARRAY_TASK_ID", "3"}}, std::pair{0, 2}},
      {std::nullopt,
       std::nullopt,
       {{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "8"}},
       std::pair{3, 8}},
      // Arrays that start at 1 (#SBATCH --array=1-4).
      {std::nullopt,
       std::nullopt,
       {{"SLURM_ARRAY_TASK_ID", "4"},
        {"SLURM_ARRAY_TASK_COUNT", "4"},
        {"SLURM_ARRAY_TASK_MIN", "1"}},
       std::pair{3, 4}},
      {std::nullopt, std::nullopt, {{"SLURM_ARRAY_TASK_ID", "3"}}, std::nullopt},
      {std::nullopt, 5, {{"JOB_COMPLETION_INDEX", "2"}}, std::pair{2, 5}},
      {std::nullopt,
       std::nullopt,
       {{"JOB_COMPLETION_INDEX", "2"}, {"REEL_SHARD_COUNT", "3"}},
       std::pair{2, 3}},
      {std::nullopt, std::nullopt, {{"JOB_COMPLETION_INDEX", "2"}}, std::nullopt},
      {std::nullopt, 2, {{"JOB_COMPLETION_INDEX", "2"}}, std::nullopt},
      {std::nullopt, std::nullopt, {{"JOB_COMPLETION_INDEX", "x"}}, std::nullopt},
      {std::nullopt, 3, {}, std::nullopt},  // a count without an index
  };
  for (const Case& c : cases) {
    Result<ShardSpec> shard = ResolveShard(c.flag, c.count, Lookup(c.env));
    SCOPED_TRACE(c.flag.value_or("(no flag)"));
    if (!c.expected) {
      EXPECT_FALSE(shard.ok());
      if (!shard.ok()) {
        EXPECT_EQ(shard.status().code(), ErrorCode::kInvalidArgument);
      }
      continue;
    }
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    EXPECT_EQ(shard->index, c.expected->first);
    EXPECT_EQ(shard->count, c.expected->second);
  }
}

TEST(ShardTest, EveryPathBelongsToExactlyOneShardWhateverTheBaseDirectory) {
  for (int count : {1, 2, 3, 7}) {
    int total = 0;
    for (int i = 0; i < 200; ++i) {
      const std::string relative = "media/clip" + std::to_string(i) + ".mp4";
      int owners = 0;
      for (int index = 0; index < count; ++index) {
        ShardSpec shard{index, count};
        bool here = InShard(shard, "/data/a", "/data/a/" + relative);
        EXPECT_EQ(here, InShard(shard, "/mnt/b", "/mnt/b/" + relative))
            << "the split must not depend on where the tree is mounted";
        owners += here;
      }
      EXPECT_EQ(owners, 1);
      total += owners;
    }
    EXPECT_EQ(total, 200);
  }
  EXPECT_EQ(ShardDatabasePath("out/lectures.db", {2, 8}), "out/lectures.shard-2-of-8.db");
  EXPECT_EQ(ShardDatabasePath("lectures.db", {0, 1}), "lectures.db");
}

// The documented rule (jobs/run/shard.h): shard FNV-1a-64(path relative to the base) mod N. A split
// that ignored the path (every file in one shard, or by position) fails here.
TEST(ShardTest, ShardIsTheHashOfTheRelativePathAndTheSplitIsEven) {
  auto fnv1a64 = [](std::string_view text) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
    return h;
  };
  constexpr int kPaths = 600;
  for (int count : {2, 3, 7}) {
    std::vector<int> per_shard(count, 0);
    for (int i = 0; i < kPaths; ++i) {
      const std::string relative =
          "media/day" + std::to_string(i % 9) + "/clip" + std::to_string(i) + ".mp4";
      const int expected = static_cast<int>(fnv1a64(relative) % static_cast<uint64_t>(count));
      for (int index = 0; index < count; ++index) {
        EXPECT_EQ(InShard({index, count}, "/data/a", "/data/a/" + relative), index == expected)
            << relative << " shard " << index << "/" << count;
      }
      ++per_shard[expected];
    }
    for (int index = 0; index < count; ++index) {
      // Within a third of the even share (a hash's spread over 600 paths is far smaller).
      EXPECT_GT(per_shard[index], kPaths / count * 2 / 3) << "shard " << index << "/" << count;
      EXPECT_LT(per_shard[index], kPaths / count * 4 / 3) << "shard " << index << "/" << count;
    }
  }
  // A path outside the base directory is hashed whole.
  const std::string outside = "/elsewhere/x.mp4";
  EXPECT_TRUE(InShard({static_cast<int>(fnv1a64(outside) % 5), 5}, "/data/a", outside));
}

TEST(RunLockTest, SecondHolderIsRefusedAndToldWho) {
  const std::string db = testing::ScratchDir("run_lock") + "/x.db";
  Result<RunLock> first = RunLock::TryAcquire(db);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(RunLock::IsHeld(db));
  LockOwner owner;
  Result<RunLock> second = RunLock::TryAcquire(db, &owner);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(owner.pid, getpid());
  EXPECT_NE(second.status().message().find("pid " + std::to_string(getpid())), std::string::npos);
  {
    RunLock moved = std::move(first).value();  // ownership moves; still locked
    EXPECT_TRUE(RunLock::IsHeld(db));
  }
  EXPECT_FALSE(RunLock::IsHeld(db)) << "released when its owner is destroyed";
  EXPECT_TRUE(RunLock::TryAcquire(db).ok());
}

TEST(DocumentChunksTest, SplitsParagraphsHeadingsAndLongText) {
  EXPECT_TRUE(SplitDocument("").empty());
  EXPECT_TRUE(SplitDocument("\xEF\xBB\xBF \n\r\n\t\n").empty());
  EXPECT_EQ(SplitDocument("one\r\ntwo\r\n\r\nthree"),
            (std::vector<std::string>{"one\ntwo\n\nthree"}));
  EXPECT_EQ(SplitDocument("intro\n# A\ntext a\n\n## B\ntext b\n"),
            (std::vector<std::string>{"intro", "# A\ntext a", "## B\ntext b"}));
  ChunkOptions small{.target_chars = 10, .max_chars = 20};
  EXPECT_EQ(SplitDocument("aaaa\n\nbbbb\n\ncccc", small),
            (std::vector<std::string>{"aaaa\n\nbbbb", "cccc"}));
  std::string words;
  for (int i = 0; i < 50; ++i) words += "word" + std::to_string(i) + " ";
  for (const std::string& chunk : SplitDocument(words, small)) {
    EXPECT_LE(chunk.size(), 20u) << chunk;
    EXPECT_FALSE(chunk.empty());
  }
  std::string long_word(100, 'x');
  size_t total = 0;
  for (const std::string& chunk : SplitDocument(long_word, small)) total += chunk.size();
  EXPECT_EQ(total, 100u) << "a word longer than max_chars is cut, not lost";
}

pipeline::Image Gradient(int width, int height, bool flip) {
  pipeline::Image image = pipeline::MakeImage(width, height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t v = static_cast<uint8_t>(255 * (flip ? width - 1 - x : x) / (width - 1));
      uint8_t* p = image.row(y) + 3 * x;
      p[0] = p[1] = p[2] = v;
    }
  }
  return image;
}

TEST(FrameFeaturesTest, DifferenceHashIsStableUnderScalingAndSeesChange) {
  uint64_t a = DifferenceHash(Gradient(320, 180, false));
  uint64_t a_small = DifferenceHash(Gradient(64, 36, false));
  uint64_t b = DifferenceHash(Gradient(320, 180, true));
  EXPECT_EQ(a, 0u) << "brightness rises left to right: no left pixel is brighter";
  EXPECT_EQ(b, ~uint64_t{0});
  EXPECT_LE(std::popcount(a ^ a_small), 2);
  EXPECT_EQ(DifferenceHash(pipeline::Image{}), 0u);
}

TEST(FrameFeaturesTest, ThumbnailIsAJpegWithLongSide320) {
  Result<std::string> jpeg = MakeThumbnailJpeg(Gradient(640, 360, false));
  ASSERT_TRUE(jpeg.ok()) << jpeg.status().ToString();
  Result<pipeline::Image> decoded =
      pipeline::DecodeImage(reinterpret_cast<const uint8_t*>(jpeg->data()), jpeg->size(), "thumb");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->width, 320);
  EXPECT_EQ(decoded->height, 180);
  Result<std::string> tiny = MakeThumbnailJpeg(Gradient(100, 50, false));
  ASSERT_TRUE(tiny.ok());
  EXPECT_FALSE(MakeThumbnailJpeg(pipeline::Image{}).ok());
}

TEST(EstimateFramesTest, FollowsThePolicy) {
  pipeline::MediaInfo media;
  media.duration_s = 10;
  pipeline::StreamInfo video;
  video.type = pipeline::StreamType::kVideo;
  video.duration_s = 10;
  video.fps = 25;
  video.frames = 250;
  media.streams.push_back(video);
  media.best_video = 0;
  pipeline::SamplingOptions s;
  s.fps = 1;
  EXPECT_EQ(EstimateFrames(s, media), 11);  // 0..9 s plus the last frame
  s.fps_keep_last = false;
  EXPECT_EQ(EstimateFrames(s, media), 10);
  s.start_s = 2;
  s.end_s = 6;
  EXPECT_EQ(EstimateFrames(s, media), 4);
  s.max_frames = 3;
  EXPECT_EQ(EstimateFrames(s, media), 3);
  pipeline::SamplingOptions count;
  count.policy = pipeline::SamplingPolicy::kCount;
  count.count = 8;
  EXPECT_EQ(EstimateFrames(count, media), 8);
  pipeline::SamplingOptions stamps;
  stamps.policy = pipeline::SamplingPolicy::kTimestamps;
  stamps.timestamps = {1, 5, 12};
  EXPECT_EQ(EstimateFrames(stamps, media), 2);
  pipeline::SamplingOptions scene;
  scene.policy = pipeline::SamplingPolicy::kScene;
  EXPECT_EQ(EstimateFrames(scene, media), std::nullopt);
  media.best_video.reset();
  EXPECT_EQ(EstimateFrames(count, media), std::nullopt);
}

TEST(EstimateFramesTest, FollowsTheFpsTimeline) {
  // tree.avi: 68 frames over 29.6 s, 15 fps on average, not evenly spaced.
  pipeline::MediaInfo media;
  media.duration_s = 29.6;
  pipeline::StreamInfo video;
  video.type = pipeline::StreamType::kVideo;
  video.duration_s = 29.6;
  video.fps = 15;
  video.frames = 68;
  video.constant_rate = false;
  media.streams.push_back(video);
  media.best_video = 0;
  pipeline::SamplingOptions s;
  EXPECT_EQ(EstimateFrames(s, media), 30);  // auto: time, 0..29 s and the last frame
  s.fps_timeline = pipeline::FpsTimeline::kTime;
  EXPECT_EQ(EstimateFrames(s, media), 30);
  s.fps_timeline = pipeline::FpsTimeline::kIndex;
  EXPECT_EQ(EstimateFrames(s, media), 6);  // frames 0, 15, 30, 45, 60 and 67
  s.start_s = 14.8;                        // half the frames, assumed spread evenly
  EXPECT_EQ(EstimateFrames(s, media), 4);
  s.fps_timeline = pipeline::FpsTimeline::kAuto;
  EXPECT_EQ(EstimateFrames(s, media), 15);
  // The same stream, evenly spaced: auto is the index rule.
  media.streams[0].constant_rate = true;
  media.streams[0].frames = 444;
  s.start_s.reset();
  EXPECT_EQ(EstimateFrames(s, media), 31);  // ceil(444 / 15) and the last
}

TEST(TableOutputTest, EveryFormat) {
  storage::Table table;
  table.columns = {"id", "text", "blob"};
  table.rows.push_back({int64_t{1}, cli::Text("a,\"b\"\nc"), storage::Blob{"hi!"}});
  table.rows.push_back({int64_t{22}, storage::Value(), storage::Value(0.5)});
  auto render = [&](cli::OutputFormat format) {
    std::ostringstream out;
    cli::WriteTable(out, table, format);
    return out.str();
  };
  EXPECT_EQ(render(cli::OutputFormat::kCsv),
            "id,text,blob\r\n1,\"a,\"\"b\"\"\nc\",aGkh\r\n22,,0.5\r\n");
  EXPECT_EQ(render(cli::OutputFormat::kJson),
            "[{\"blob\":\"aGkh\",\"id\":1,\"text\":\"a,\\\"b\\\"\\nc\"},"
            "{\"blob\":0.5,\"id\":22,\"text\":null}]\n");
  EXPECT_EQ(render(cli::OutputFormat::kJsonl),
            "{\"blob\":\"aGkh\",\"id\":1,\"text\":\"a,\\\"b\\\"\\nc\"}\n"
            "{\"blob\":0.5,\"id\":22,\"text\":null}\n");
  EXPECT_EQ(render(cli::OutputFormat::kTable),
            "id  text     blob\n"
            "--  -------  --------------\n"
            " 1  a,\"b\"\xE2\x8F\x8E"
            "c  <blob 3 bytes>\n"
            "22           0.5\n"  // an empty value is an empty cell
            "(2 rows)\n");
  EXPECT_FALSE(cli::ParseOutputFormat("xml").ok());
}

}  // namespace
}  // namespace reel::jobs
