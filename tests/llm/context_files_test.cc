// The context builder over several files (ContextInput::sources: `reel ask a.mp4 b.mp4 d.png
// "question"`): the layout counted against a hand count, and the fit steps sharing the budget
// over the files. The tokenizer has one token per byte and MiniMax-M3's special tokens as added
// tokens (tests/llm/context_test_fixture.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llm/client/body_source.h"
#include "llm/context/chat_template.h"
#include "llm/context/context_builder.h"
#include "llm/context/request_body.h"
#include "llm/context/token_counter.h"
#include "pipeline/smart_resize.h"
#include "tests/llm/context_test_fixture.h"

namespace reel::llm {
namespace {

using nlohmann::json;

using namespace context_test;  // NOLINT(google-build-using-namespace): the shared fixture

struct FilesFixture : ContextFixture {
  FilesFixture() : ContextFixture("Which clip?") {}
};

// Placeholders + start + end of one image at w x h.
int64_t ImageTokens(int w, int h) { return static_cast<int64_t>(w / 28) * (h / 28) + 2; }

// a.mp4 (`a_frames` frames, one a second, 1008x560 from 1920x1080), b.mp4 (`b_frames`, 560x308
// from 640x352, a subtitle at 0.5 s), d.png (448x448): in that order.
ContextInput ThreeFiles(int a_frames = 2, int b_frames = 3) {
  ContextInput in;
  in.item_path = "/m/a.mp4";
  in.kind = ContextItemKind::kVideo;
  in.sources = {{"/m/a.mp4", ContextItemKind::kVideo, 1920, 1080, a_frames + 0.0, "a"},
                {"/m/b.mp4", ContextItemKind::kVideo, 640, 352, b_frames + 0.0, "b"},
                {"/m/d.png", ContextItemKind::kImage, 448, 448, 0, "d"}};
  auto frame = [&](size_t file, int64_t i, int w, int h) {
    ContextFrame f;
    f.sample_index = i;
    f.time_s = static_cast<double>(i);
    f.width = w;
    f.height = h;
    f.source = file;
    in.frames.push_back(f);
  };
  for (int i = 0; i < a_frames; ++i) frame(0, i, 1008, 560);
  for (int i = 0; i < b_frames; ++i) frame(1, i, 644, 364);
  frame(2, 0, 448, 448);
  ContextText line{"subtitle:0", 0.5, 1.0, "Hi"};
  line.file = 1;
  in.texts.push_back(line);
  in.texts.push_back({"attached:notes.md", std::nullopt, std::nullopt, "Notes."});
  return in;
}

TEST(ContextFilesTest, EachFileIsHeadedAndTimedFromItsOwnStart) {
  FilesFixture fx;
  const ContextInput in = ThreeFiles();
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_EQ(ctx->segments.size(), 1u);
  const std::string text =
      kM3Head + "Document (attached:notes.md):\nNotes.\n\n" +
      "Video 1: a.mp4 (2.0 s; its frame times are from its start)\nFrame at 0.0 s:\n" +
      "Frame at 1.0 s:\n" + "Video 2: b.mp4 (3.0 s; its frame times are from its start)\n" +
      "Frame at 0.0 s:\n" + "[0.5-1.0 s] Hi\nFrame at 1.0 s:\n" + "Frame at 2.0 s:\n" +
      "Image 1: d.png\n" + "Which clip?" + kM3Tail;
  const TokenBreakdown& t = ctx->segments[0].tokens;
  EXPECT_EQ(t.text, HandCount(text));
  EXPECT_EQ(t.image,
            2 * ImageTokens(1008, 560) + 3 * ImageTokens(644, 364) + ImageTokens(448, 448));
  EXPECT_EQ(t.total, t.text + t.image);
  // Each image part at its file's size; the parts in file order.
  std::vector<std::pair<int, int>> sizes;
  for (const ContextPart& p : ctx->segments[0].parts) {
    if (p.kind == ContextPart::Kind::kImage) sizes.emplace_back(p.width, p.height);
  }
  EXPECT_EQ(sizes, (std::vector<std::pair<int, int>>{
                       {1008, 560}, {1008, 560}, {644, 364}, {644, 364}, {644, 364}, {448, 448}}));
  // The manifest names the files and each frame's file.
  json m = json::parse(ctx->ManifestJson(in, 0));
  ASSERT_EQ(m["sources"].size(), 3u);
  EXPECT_EQ(m["sources"][1]["path"], "/m/b.mp4");
  EXPECT_EQ(m["sources"][2]["kind"], "image");
  EXPECT_EQ(m["sources"][1]["size"], "644x364");
  bool saw_b = false;
  for (const json& p : m["parts"]) {
    if (p.contains("frames") && p["frames"][0]["source"] == 1) saw_b = true;
  }
  EXPECT_TRUE(saw_b);
}

TEST(ContextFilesTest, OtherTransportsAreRefused) {
  FilesFixture fx;
  fx.options.transport = Transport::kVideo;
  auto ctx = BuildContext(ThreeFiles(), fx.options, fx.tmpl, fx.counter);
  ASSERT_FALSE(ctx.ok());
  EXPECT_NE(ctx.status().message().find("images"), std::string::npos);
}

TEST(ContextFilesTest, LowerResolutionGivesEveryFileOneMaxPixels) {
  FilesFixture fx;
  fx.options.fit_steps = {FitStep::kLowerResolution};
  const ContextInput in = ThreeFiles(4, 4);
  auto whole = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(whole.ok());
  // Room for a bit more than half the images' tokens.
  fx.options.token_budget =
      16384 + 256 + whole->segments[0].tokens.total - whole->segments[0].tokens.image / 3;
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_EQ(ctx->fit.size(), 1u);
  EXPECT_EQ(ctx->fit[0].step, "lower_resolution");
  EXPECT_EQ(ctx->kept_frames.size(), in.frames.size());
  ASSERT_GT(ctx->frame_max_pixels, 0);
  ASSERT_EQ(ctx->source_sizes.size(), 3u);
  // Every file resized from its own shape with the one max_pixels (none enlarged).
  const int current[3][2] = {{1008, 560}, {644, 364}, {448, 448}};
  for (size_t s = 0; s < 3; ++s) {
    pipeline::SmartResizeOptions r;
    r.min_pixels = 3136;
    r.max_pixels = ctx->frame_max_pixels;
    auto want = pipeline::SmartResize({in.sources[s].source_width, in.sources[s].source_height}, r);
    ASSERT_TRUE(want.ok());
    int w = want->width, h = want->height;
    if (static_cast<int64_t>(w) * h >= static_cast<int64_t>(current[s][0]) * current[s][1]) {
      w = current[s][0];
      h = current[s][1];
    }
    EXPECT_EQ(ctx->source_sizes[s].width, w) << s;
    EXPECT_EQ(ctx->source_sizes[s].height, h) << s;
  }
  EXPECT_LT(ctx->source_sizes[0].width, 1008);
  EXPECT_LE(ctx->segments[0].tokens.total, ctx->limit);
}

TEST(ContextFilesTest, ThinFramesKeepsTheSameShareOfEachVideo) {
  FilesFixture fx;
  fx.options.fit_steps = {FitStep::kThinFrames};
  fx.options.min_fps = 0.1;
  const ContextInput in = ThreeFiles(10, 20);
  auto whole = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(whole.ok());
  fx.options.token_budget =
      16384 + 256 + whole->segments[0].tokens.total - whole->segments[0].tokens.image / 2;
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_EQ(ctx->fit.size(), 1u);
  EXPECT_EQ(ctx->fit[0].step, "thin_frames");
  std::vector<size_t> kept[3];
  for (size_t f : ctx->kept_frames) kept[in.frames[f].source].push_back(f);
  ASSERT_GE(kept[0].size(), 2u);
  EXPECT_LT(kept[0].size(), 10u);
  // The same share: b (twice as many frames) keeps twice as many, within rounding.
  EXPECT_NEAR(static_cast<double>(kept[1].size()), 2.0 * static_cast<double>(kept[0].size()), 1.0);
  EXPECT_EQ(kept[2].size(), 1u);  // the image stays
  // First and last of each video.
  EXPECT_EQ(kept[0].front(), 0u);
  EXPECT_EQ(kept[0].back(), 9u);
  EXPECT_EQ(kept[1].front(), 10u);
  EXPECT_EQ(kept[1].back(), 29u);
  EXPECT_LE(ctx->segments[0].tokens.total, ctx->limit);
}

TEST(ContextFilesTest, DedupeComparesFramesWithinAFileOnly) {
  FilesFixture fx;
  fx.options.fit_steps = {FitStep::kDedupe};
  ContextInput in = ThreeFiles(3, 3);
  for (ContextFrame& f : in.frames) f.phash = 0x1234;  // every frame alike
  auto whole = BuildContext(in, FilesFixture().options, fx.tmpl, fx.counter);
  ASSERT_TRUE(whole.ok());
  fx.options.token_budget = 16384 + 256 + whole->segments[0].tokens.total - 100;
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  // Each file's first and last stay (a's 0 and 2, b's 3 and 5, the image 6): only the middles go.
  EXPECT_EQ(ctx->kept_frames, (std::vector<size_t>{0, 2, 3, 5, 6}));
}

TEST(ContextFilesTest, ASplitHeadsEachPartsFramesWithTheirFile) {
  FilesFixture fx;
  fx.options.fit_steps = {FitStep::kSplit};
  const ContextInput in = ThreeFiles(4, 4);
  // Room for two of a's frames.
  const int64_t fixed = HandCount(kM3Head) + HandCount("Which clip?" + kM3Tail);
  fx.options.token_budget = 16384 + 256 + fixed + 72 + 2 * (ImageTokens(1008, 560) + 40) + 100;
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_GT(ctx->segments.size(), 2u);
  size_t images = 0;
  for (size_t s = 0; s < ctx->segments.size(); ++s) {
    const ContextSegment& seg = ctx->segments[s];
    EXPECT_LE(seg.tokens.total, ctx->limit) << s;
    // The first part before the first image names a file.
    ASSERT_EQ(seg.parts[0].kind, ContextPart::Kind::kText) << s;
    const std::string& head = seg.parts[0].text;
    EXPECT_TRUE(head.find("Video 1: a.mp4") != std::string::npos ||
                head.find("Video 2: b.mp4") != std::string::npos ||
                head.find("Image 1: d.png") != std::string::npos)
        << s << ": " << head;
    EXPECT_FALSE(seg.first_label.empty());
    for (const ContextPart& p : seg.parts) images += p.kind == ContextPart::Kind::kImage ? 1 : 0;
  }
  EXPECT_EQ(images, in.frames.size());  // every frame in one part
  // A part that starts inside a video says it continues.
  bool continued = false;
  for (const ContextSegment& seg : ctx->segments) {
    continued = continued || seg.parts[0].text.find("(continued)") != std::string::npos;
  }
  EXPECT_TRUE(continued);
  EXPECT_EQ(ctx->segments[0].first_label, "a.mp4 0.0 s");
  EXPECT_EQ(ctx->segments.back().last_label, "d.png");
  // The reduce heads each part with the files it covers.
  std::vector<std::string> answers(ctx->segments.size(), "x");
  auto reduce = BuildReduceMessages(*ctx, answers);
  ASSERT_TRUE(reduce.ok());
  const std::string body = ReadAll(**reduce).value();
  EXPECT_NE(body.find("Part 1 of " + std::to_string(answers.size()) + " (a.mp4 0.0 s to a.mp4"),
            std::string::npos)
      << body;
  EXPECT_NE(ctx->reduce_question.find("each with the files it covers"), std::string::npos);
}

}  // namespace
}  // namespace reel::llm
