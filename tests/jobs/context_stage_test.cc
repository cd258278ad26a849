// The context stage on stored rows: a one-hour video sampled at 1 fps (3,600 frame rows, made
// directly in the database: the context builder is under test, not the decoder) fitted into the
// 1,048,576-token budget, with exact counts from a tokenizer file, checked against layouts
// counted by hand. The tokenizer has one token per byte and M3's special tokens as added tokens,
// so a layout's count is its bytes, plus one per special token, plus the placeholders.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "jobs/context/item_context.h"
#include "jobs/progress.h"
#include "jobs/run/runner.h"
#include "jobs/stages/stages.h"
#include "llm/tokenizer/byte_level.h"
#include "pipeline/image_codec.h"
#include "storage/query.h"
#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::jobs {
namespace {

using nlohmann::json;

const char* const kSpecials[] = {
    "]~!b[",       "]~b]",        "[e~[",       "]<]start of image[>[", "]<]end of image[>[",
    "]<]image[>[", "]<]video[>[", "<mm:think>", "</mm:think>"};

std::string ByteTokenizerJson() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) {
    vocab[std::string(llm::internal::ByteLevelUtf8(static_cast<uint8_t>(b)))] = b;
  }
  json added = json::array();
  int id = 256;
  for (const char* s : kSpecials) {
    added.push_back({{"id", id++},
                     {"content", s},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  json j = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}}}};
  return j.dump();
}

int64_t Hand(std::string s) {
  int64_t specials = 0;
  for (const char* sp : kSpecials) {
    size_t at;
    while ((at = s.find(sp)) != std::string::npos) {
      s.erase(at, std::string(sp).size());
      ++specials;
    }
  }
  return static_cast<int64_t>(s.size()) + specials;
}

std::string Seconds1(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", t);
  return buf;
}

const std::string kContextHead =
    "]~!b[]~b]system\nCurrent thinking mode: adaptive.[e~[\n]~b]developer\nYou are a helpful "
    "assistant.[e~[\n]~b]user\n";
const std::string kTail = "[e~[\n]~b]ai\n";

class HourContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("hour_context");
    std::ofstream(dir_ + "/bytes.json") << ByteTokenizerJson();
    auto store = storage::Store::Open(dir_ + "/hour.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_.emplace(std::move(store).value());
    auto job_id = store_->UpsertJob({0, "hour", "spec", ""});
    ASSERT_TRUE(job_id.ok());
    storage::ItemRecord item;
    item.job_id = *job_id;
    item.path = dir_ + "/hour.mp4";
    item.content_hash = std::string(64, 'a');
    item.settings_hash = std::string(64, 'b');
    auto id = store_->UpsertItem(item);
    ASSERT_TRUE(id.ok());
    item_id_ = *id;
    // 3,600 frames at 1 fps of a 1920x1080 video at the default size (1008x560); every frame
    // differs from the one before by 8 dHash bits (nothing is a near-duplicate).
    storage::ItemOutputs out;
    for (int i = 0; i < 3600; ++i) {
      storage::FrameRecord f;
      f.sample_index = i;
      f.time_seconds = i;
      f.width = 1008;
      f.height = 560;
      f.phash = (i % 2 == 0) ? 0x00000000000000FFull : 0xFF00000000000000ull;
      out.frames.push_back(f);
    }
    out.media_json = json{{"duration_seconds", 3600.0},
                          {"video", {{"width", 1920}, {"height", 1080}, {"rotation", 0}}}}
                         .dump();
    ASSERT_TRUE(store_->MarkItemDone(item_id_, out).ok());
  }

  JobSpec Job(const std::string& context) {
    std::string text = "name: hour\ninputs: [hour.mp4]\ncontext:\n  tokenizer: bytes.json\n" +
                       context + "prompts:\n  - id: what\n    question: What happens?\n";
    auto job = ParseJobText(text, dir_ + "/job.yaml", dir_);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return *job;
  }

  // Runs the stage and returns the one stored manifest and the row's counts.
  json RunStage(const JobSpec& job) {
    ItemWork work;
    work.job = &job;
    work.input.path = dir_ + "/hour.mp4";
    auto stage = MakeContextStage(dir_ + "/hour.db.frames");
    Status s = stage->Run(*store_, item_id_, 0, work);
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto setup = LoadContextSetup(job);
    EXPECT_TRUE(setup.ok());
    auto item = store_->GetItem(item_id_);
    std::string key = ContextSettingsKey(job, job.prompts[0], **setup, **item);
    auto ids = store_->FindContexts(item_id_, "what", key);
    EXPECT_TRUE(ids.ok());
    EXPECT_EQ(ids->size(), 1u);
    auto c = BuildItemContext(*store_, job, **setup, item_id_, job.prompts[0]);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    json m = json::parse(c->context.ManifestJson(c->input, 0));
    return m;
  }

  std::string dir_;
  std::optional<storage::Store> store_;
  int64_t item_id_ = 0;
};

TEST_F(HourContextTest, VideoTransportLowersTheResolutionToTheLargestThatFitsExactly) {
  JobSpec job =
      Job("  transport: video\n  server_num_frames: 0\n  fit_strategy: lower_resolution\n");
  json m = RunStage(job);
  // 1,800 pairs at 1008x560 (720 tokens each) do not fit 1,048,576 - 16,384 - 256; the largest
  // size that does is 868x476 (max_pixels 451,583): 31 x 17 = 527 tokens per pair (the next
  // size, 896x504, would need 1,800 x 578 = 1,040,400).
  ASSERT_EQ(m["fit"].size(), 1u) << m["fit"].dump();
  EXPECT_EQ(m["fit"][0]["step"], "lower_resolution");
  EXPECT_EQ(m["frames"]["kept"], 3600);
  EXPECT_EQ(m["frames"]["size"], "868x476");
  std::string stamps;
  for (int p = 0; p < 1800; ++p) stamps += "]<]" + Seconds1(2.0 * p) + " seconds[>[";
  const int64_t video = 1800 * (527 + 2) + Hand(stamps);
  const std::string prefix = kContextHead + "Video from 0.0 s to 3599.0 s:\n";
  // The prefix is padded to a multiple of 128 tokens: its text count rounds up.
  const int64_t prefix_tokens = m["prefix"]["tokens"];
  EXPECT_EQ(prefix_tokens % 128, 0);
  const std::string padding = m["prefix"]["padding"];
  EXPECT_EQ(prefix_tokens, Hand(prefix) + video + Hand(padding));
  EXPECT_EQ(m["tokens"]["video"], video);
  EXPECT_EQ(m["tokens"]["text"], Hand(prefix + padding + "What happens?" + kTail));
  EXPECT_EQ(m["tokens"]["total"], video + Hand(prefix + padding + "What happens?" + kTail));
  EXPECT_LE(m["tokens"]["total"].get<int64_t>() + 256 + 16384, 1048576);
  EXPECT_TRUE(m["count"]["exact"].get<bool>());
  // The stored row says the same.
  auto rows = storage::Query(dir_ + "/hour.db",
                             "SELECT total_tokens, video_tokens, count_method, transport, "
                             "segment_count FROM contexts");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->rows.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(rows->rows[0][0]), m["tokens"]["total"].get<int64_t>());
  EXPECT_EQ(std::get<int64_t>(rows->rows[0][1]), video);
  EXPECT_EQ(std::get<std::string>(rows->rows[0][2]), "exact");
  EXPECT_EQ(std::get<std::string>(rows->rows[0][3]), "video");
  EXPECT_EQ(std::get<int64_t>(rows->rows[0][4]), 1);
}

TEST_F(HourContextTest, ImagesTransportThinsFramesToTheMostThatFit) {
  JobSpec job = Job("");  // images, fit_strategy thin_frames
  json m = RunStage(job);
  ASSERT_EQ(m["fit"].size(), 1u) << m["fit"].dump();
  EXPECT_EQ(m["fit"][0]["step"], "thin_frames");
  const int64_t kept = m["frames"]["kept"];
  // Each image costs 720 + 2 (a pair of itself) plus its label ("Frame at 1234.0 s:\n", 16-19
  // tokens): about 1,031,936 / 741 = 1,393 frames fit. (Before block padding was made optional,
  // the padding pushed this request 19 tokens over the limit and no context was stored.)
  EXPECT_GE(kept, 1385);
  EXPECT_LE(kept, 1400);
  std::string text = kContextHead;
  int64_t images = 0;
  double first = -1, last = -1;
  for (const json& part : m["parts"]) {
    if (part["type"] != "image") continue;
    double t = part["frames"][0]["time_s"];
    if (first < 0) first = t;
    last = t;
    text += "Frame at " + Seconds1(t) + " s:\n";
    ++images;
  }
  EXPECT_EQ(images, kept);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(last, 3599) << "the first and the last frame are kept";
  text += std::string(m["prefix"]["padding"]) + "What happens?" + kTail;
  EXPECT_EQ(m["tokens"]["image"], kept * (720 + 2));
  EXPECT_EQ(m["tokens"]["text"], Hand(text));
  const int64_t total = m["tokens"]["total"];
  EXPECT_EQ(total, kept * (720 + 2) + Hand(text));
  EXPECT_LE(total, 1048576 - 16384 - 256);
  // Thinning kept the most that fit: less than two frames' room (and the padding) is left.
  EXPECT_GT(total, 1048576 - 16384 - 256 - 2 * (722 + 20) - 128);
}

TEST_F(HourContextTest, ATokenizerWithoutTheTemplatesTokensIsRefused) {
  JobSpec job = Job("  template: chatml\n");  // bytes.json has M3's special tokens, not ChatML's
  auto setup = LoadContextSetup(job);
  ASSERT_FALSE(setup.ok());
  EXPECT_EQ(setup.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(setup.status().message().find("bytes.json: has no token '<|im_start|>'"),
            std::string::npos)
      << setup.status().message();
  // The stage says so for the item, and stores nothing.
  ItemWork work;
  work.job = &job;
  work.input.path = dir_ + "/hour.mp4";
  Status s = MakeContextStage(dir_ + "/hour.db.frames")->Run(*store_, item_id_, 0, work);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("of different models"), std::string::npos) << s.message();
}

// A split context is stored whole or not at all: a process killed with -9 while it stores the
// segments of split contexts (113 segments each: 3,600 frames, 32 per video) leaves only
// complete ones, each with every segment.
TEST_F(HourContextTest, KilledWhileStoringASplitContextLeavesNoHalfContext) {
  JobSpec job = Job("  transport: video\n  server_num_frames: 32\n  fit_strategy: split\n");
  auto setup = LoadContextSetup(job);
  ASSERT_TRUE(setup.ok()) << setup.status().ToString();
  auto built = BuildItemContext(*store_, job, **setup, item_id_, job.prompts[0]);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const size_t segments = built->context.segments.size();
  ASSERT_GT(segments, 100u);
  const std::string db = dir_ + "/hour.db";
  std::mt19937 random(7);
  for (int round = 0; round < 6; ++round) {
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // stores contexts of new prompts until it is killed
      close(ready[0]);
      auto store = storage::Store::Open(db);
      if (!store.ok()) _exit(1);
      PromptSpec prompt = job.prompts[0];
      for (int i = 0;; ++i) {
        prompt.id = "r" + std::to_string(round) + "-" + std::to_string(i);
        if (!StoreContext(*store, built->item, prompt, built->context, built->input, "key").ok()) {
          _exit(2);
        }
        if (i == 0 && write(ready[1], "x", 1) != 1) _exit(3);
      }
    }
    close(ready[1]);
    char c = 0;
    ASSERT_EQ(read(ready[0], &c, 1), 1) << "the child stored its first context";
    close(ready[0]);
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 30000));
    kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child failed by itself: " << status;
  }
  auto groups = storage::Query(db,
                               "SELECT prompt_id, count(*), min(segment_index), "
                               "max(segment_index), min(segment_count), max(segment_count) "
                               "FROM contexts GROUP BY prompt_id, settings_key");
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  ASSERT_GE(groups->rows.size(), 6u);
  for (const auto& row : groups->rows) {
    SCOPED_TRACE(std::get<std::string>(row[0]));
    EXPECT_EQ(std::get<int64_t>(row[1]), static_cast<int64_t>(segments));
    EXPECT_EQ(std::get<int64_t>(row[2]), 0);
    EXPECT_EQ(std::get<int64_t>(row[3]), static_cast<int64_t>(segments) - 1);
    EXPECT_EQ(std::get<int64_t>(row[4]), static_cast<int64_t>(segments));
    EXPECT_EQ(std::get<int64_t>(row[5]), static_cast<int64_t>(segments));
  }
}

// The frames a request sends are decoded again from the file: they must be the frames the run
// stored (the clip paints each frame's number into its pixels), at the context's size, decoded in
// one pass and then read from the cache.
TEST(ContextFramesTest, RequestFramesAreTheStoredFramesDecodedOnce) {
  std::string dir = testing::ScratchDir("context_frames");
  std::filesystem::copy_file(testing::GeneratedMedia("context_frames_counter_640x360_6s.mp4",
                                                     testing::CounterClipArgs(150, 640, 360, "25") +
                                                         " -c:v libx264 -pix_fmt yuv420p"),
                             dir + "/clip.mp4");
  auto job = ParseJobText(
      "name: f\ninputs: [clip.mp4]\nsampling:\n  fps: 1\n"
      "prompts:\n  - id: q\n    question: What?\n",
      dir + "/job.yaml", dir);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ProgressReporter progress(ProgressStyle::kQuiet, stderr);
  RunOptions options;
  options.database = dir + "/f.db";
  options.progress = &progress;
  ASSERT_EQ(RunJob(*job, options).result, RunResult::kSucceeded);

  auto store = storage::Store::Open(dir + "/f.db");
  ASSERT_TRUE(store.ok());
  auto setup = LoadContextSetup(*job);
  ASSERT_TRUE(setup.ok());
  auto c = BuildItemContext(*store, *job, **setup, 1, job->prompts[0]);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->input.frames.size(), 7u);  // 0..5 s and the last frame
  ContextFramesReport first;
  const std::string cache = FrameCacheDir(*job, dir + "/f.db");
  EXPECT_EQ(cache, dir + "/f.db.frames");
  auto request = ContextChatRequest(*job, *c, 0, cache, &first);
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(first.decoded, 7);
  EXPECT_EQ(first.passes, 1);
  std::vector<size_t> all = {0, 1, 2, 3, 4, 5, 6};
  auto files = ContextFrameFiles(*job, c->item, c->input, c->context, all, cache);
  ASSERT_TRUE(files.ok());
  for (size_t f = 0; f < all.size(); ++f) {
    auto image = pipeline::ReadImageFile((*files)[f]);
    ASSERT_TRUE(image.ok());
    EXPECT_EQ(image->width, c->input.frames[f].width);
    EXPECT_EQ(image->height, c->input.frames[f].height);
    // The M3 rule at 1 fps on 25 fps: frames 0, 25, 50, ..., 125 and the last, 149.
    const int expected = f + 1 < all.size() ? 25 * static_cast<int>(f) : 149;
    EXPECT_EQ(testing::DecodeCounter(image->pixels.data(), image->width, image->height,
                                     static_cast<int>(image->stride())),
              expected)
        << f;
  }
  ContextFramesReport second;
  ASSERT_TRUE(ContextChatRequest(*job, *c, 0, cache, &second).ok());
  EXPECT_EQ(second.cached, 7);
  EXPECT_EQ(second.decoded, 0);
  EXPECT_EQ(second.passes, 0);

  // A smaller frame size (lower_resolution) gives other files, at that size.
  c->context.frame_width = 308;
  c->context.frame_height = 168;
  c->context.frame_max_pixels = 308 * 168;
  ContextFramesReport smaller;
  auto small = ContextFrameFiles(*job, c->item, c->input, c->context, {0, 6}, cache, &smaller);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(smaller.decoded, 2);
  auto image = pipeline::ReadImageFile((*small)[6]);
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->width, 308);
  EXPECT_EQ(image->height, 168);
}

}  // namespace
}  // namespace reel::jobs
