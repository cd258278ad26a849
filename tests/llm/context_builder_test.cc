// The context builder's token accounting against layouts computed by hand. The tokenizer here
// has one token per byte and MiniMax-M3's special tokens as added tokens, so the count of a
// layout is: bytes of its text, plus one per special token, plus the placeholders
// (tests/llm/context_test_fixture.h).
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

constexpr int64_t kPairTokens = 20 * 36;  // 1008x560: (560/28) * (1008/28)

struct Fixture : ContextFixture {
  Fixture() : ContextFixture("What happens?") {}
};

ContextFrame Frame(int64_t i, double t) {
  ContextFrame f;
  f.sample_index = i;
  f.time_s = t;
  f.width = 1008;
  f.height = 560;
  return f;
}

TEST(ContextBuilderTest, ImageLayout) {
  Fixture fx;
  ContextInput in;
  in.item_path = "cat.jpg";
  in.kind = ContextItemKind::kImage;
  in.frames = {Frame(0, 0)};
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_EQ(ctx->segments.size(), 1u);
  const TokenBreakdown& t = ctx->segments[0].tokens;
  EXPECT_EQ(t.image, kPairTokens + 2);  // an image is a pair of itself, with start and end
  EXPECT_EQ(t.video, 0);
  EXPECT_EQ(t.text, HandCount(kM3Head + "What happens?" + kM3Tail));
  EXPECT_EQ(t.total, t.text + t.image);
  EXPECT_EQ(t.margin, 256);
  EXPECT_TRUE(ctx->count_exact);
  EXPECT_FALSE(ctx->template_exact);
}

// A short video with two subtitle lines: frames at 0, 1.5, 3, 4.5 and 6 s.
ContextInput ShortVideo() {
  ContextInput in;
  in.item_path = "clip.mp4";
  in.kind = ContextItemKind::kVideo;
  for (int i = 0; i < 5; ++i) in.frames.push_back(Frame(i, 1.5 * i));
  in.source_width = 1920;
  in.source_height = 1080;
  in.duration_s = 6.5;
  in.texts.push_back({"subtitle:0", 0.5, 1.2, "Hello"});
  in.texts.push_back({"subtitle:0", 3.2, 4.0, "World"});
  return in;
}

TEST(ContextBuilderTest, ShortVideoWithSubtitlesImagesTransport) {
  Fixture fx;
  fx.options.transport = Transport::kImages;
  auto ctx = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  const TokenBreakdown& t = ctx->segments[0].tokens;
  // Each frame: its time label, then the image; each line before the first frame after it.
  std::string text = kM3Head + "Frame at 0.0 s:\n" + "[0.5-1.2 s] Hello\nFrame at 1.5 s:\n" +
                     "Frame at 3.0 s:\n" + "[3.2-4.0 s] World\nFrame at 4.5 s:\n" +
                     "Frame at 6.0 s:\n" + "What happens?" + kM3Tail;
  EXPECT_EQ(t.image, 5 * (kPairTokens + 2));
  EXPECT_EQ(t.text, HandCount(text));
  EXPECT_EQ(t.total, HandCount(text) + 5 * (kPairTokens + 2));
}

TEST(ContextBuilderTest, ShortVideoWithSubtitlesVideoTransport) {
  Fixture fx;
  fx.options.transport = Transport::kVideo;  // vLLM: made-up times, index / fps
  auto ctx = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  const TokenBreakdown& t = ctx->segments[0].tokens;
  // 5 frames = 3 pairs (the last frame repeated); each pair after its server timestamp.
  std::string text = kM3Head +
                     "[0.5-1.2 s] Hello\n[3.2-4.0 s] World\nVideo from 0.0 s to 6.0 s:\n" +
                     "What happens?" + kM3Tail;
  int64_t stamps = HandCount("]<]0.0 seconds[>[]<]2.0 seconds[>[]<]4.0 seconds[>[");
  EXPECT_EQ(t.video, 3 * (kPairTokens + 2) + stamps);
  EXPECT_EQ(t.text, HandCount(text));
  EXPECT_EQ(t.image, 0);
  // SGLang leaves the times out.
  fx.options.server_timestamps = false;
  auto sglang = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(sglang.ok());
  EXPECT_EQ(sglang->segments[0].tokens.video, 3 * (kPairTokens + 2));
}

TEST(ContextBuilderTest, ShortVideoWithSubtitlesFileTransport) {
  Fixture fx;
  fx.options.transport = Transport::kFile;  // the server samples; real times of pair starts
  auto ctx = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  const TokenBreakdown& t = ctx->segments[0].tokens;
  int64_t stamps = HandCount("]<]0.0 seconds[>[]<]3.0 seconds[>[]<]6.0 seconds[>[");
  EXPECT_EQ(t.video, 3 * (kPairTokens + 2) + stamps);
}

TEST(ContextBuilderTest, VideoLongerThanTheServerKeepsIsSplit) {
  Fixture fx;
  fx.options.transport = Transport::kVideo;
  fx.options.server_num_frames = 4;
  ContextInput in;
  in.item_path = "long.mp4";
  for (int i = 0; i < 10; ++i) in.frames.push_back(Frame(i, i));
  in.texts.push_back({"subtitle:0", 4.5, 5.0, "Line"});
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_EQ(ctx->segments.size(), 3u);
  ASSERT_EQ(ctx->fit.size(), 1u);
  EXPECT_EQ(ctx->fit[0].step, "split");
  EXPECT_NE(ctx->fit[0].detail.find("at most 4 frames per video"), std::string::npos);
  // Segment 1 holds frames 4-7 (times 4-7) and the line at 4.5; its times restart at 0.
  const ContextSegment& s1 = ctx->segments[1];
  EXPECT_EQ(s1.start_s, 4);
  EXPECT_EQ(s1.end_s, 7);
  std::string text =
      kM3Head + "[4.5-5.0 s] Line\nVideo from 4.0 s to 7.0 s:\n" + "What happens?" + kM3Tail;
  EXPECT_EQ(s1.tokens.text, HandCount(text));
  EXPECT_EQ(s1.tokens.video,
            2 * (kPairTokens + 2) + HandCount("]<]0.0 seconds[>[]<]2.0 seconds[>["));
  // The last segment: 2 frames, one pair.
  EXPECT_EQ(ctx->segments[2].tokens.video, kPairTokens + 2 + HandCount("]<]0.0 seconds[>["));
  EXPECT_NE(ctx->reduce_question.find("What happens?"), std::string::npos);
}

// Images transport, a video too long for the token limit: consecutive segments, each counted.
TEST(ContextBuilderTest, ImagesVideoOverTheTokenLimitIsSplitIntoCountedSegments) {
  Fixture fx;
  fx.options.transport = Transport::kImages;
  fx.options.fit_steps = {FitStep::kSplit};
  ContextInput in;
  in.item_path = "long.mp4";
  for (int i = 0; i < 10; ++i) in.frames.push_back(Frame(i, i));
  in.texts.push_back({"subtitle:0", 4.5, 5.0, "Line"});
  const int64_t frame = kPairTokens + 2 + HandCount("Frame at 0.0 s:\n");  // 738
  const int64_t fixed = HandCount(kM3Head) + HandCount("What happens?" + kM3Tail);
  // Room for four frames (and the planning allowance), not five.
  const int64_t limit = fixed + 72 + 4 * frame + HandCount("[4.5-5.0 s] Line\n") + 200;
  fx.options.token_budget = limit + 16384 + 256;
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_EQ(ctx->segments.size(), 3u);
  EXPECT_EQ(ctx->fit.back().step, "split");
  EXPECT_NE(ctx->fit.back().detail.find("3 consecutive segments (token limit)"), std::string::npos)
      << ctx->fit.back().detail;
  const std::string labels[3] = {
      "Frame at 0.0 s:\nFrame at 1.0 s:\nFrame at 2.0 s:\nFrame at 3.0 s:\n",
      "Frame at 4.0 s:\n[4.5-5.0 s] Line\nFrame at 5.0 s:\nFrame at 6.0 s:\nFrame at 7.0 s:\n",
      "Frame at 8.0 s:\nFrame at 9.0 s:\n"};
  const int frames[3] = {4, 4, 2};
  for (int s = 0; s < 3; ++s) {
    const ContextSegment& seg = ctx->segments[s];
    EXPECT_EQ(seg.tokens.image, frames[s] * (kPairTokens + 2)) << s;
    EXPECT_EQ(seg.tokens.text, HandCount(kM3Head + labels[s] + "What happens?" + kM3Tail)) << s;
    EXPECT_LE(seg.tokens.total, ctx->limit) << s;
  }
  EXPECT_EQ(ctx->segments[1].start_s, 4);
  EXPECT_EQ(ctx->segments[2].end_s, 9);
  EXPECT_NE(ctx->reduce_question.find("3 consecutive parts"), std::string::npos);
  // Each segment's manifest says which it is.
  json m = json::parse(ctx->ManifestJson(in, 1));
  EXPECT_EQ(m["segment"]["index"], 1);
  EXPECT_EQ(m["segment"]["count"], 3);
  // The last step asks again over the three answers, each under its time range.
  auto reduce = BuildReduceMessages(*ctx, {"A", "B", "C"});
  ASSERT_TRUE(reduce.ok()) << reduce.status().ToString();
  json r = json::parse(ReadAll(**reduce).value());
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0]["content"], "You are a helpful assistant.");
  EXPECT_EQ(r[1]["content"], ctx->reduce_question +
                                 "\n\nPart 1 of 3 (0.0-3.0 s):\nA\n\nPart 2 of 3 (4.0-7.0 s):\nB"
                                 "\n\nPart 3 of 3 (8.0-9.0 s):\nC");
  EXPECT_FALSE(BuildReduceMessages(*ctx, {"A"}).ok());
}

// The file transport sends the whole file: it cannot be split, and says so.
TEST(ContextBuilderTest, FileTransportTooLongIsRefusedWithTheNumbers) {
  Fixture fx;
  fx.options.transport = Transport::kFile;
  fx.options.token_budget = 16384 + 256 + 1000;
  ContextInput in = ShortVideo();
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_FALSE(ctx.ok());
  EXPECT_EQ(ctx.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(ctx.status().message().find("clip.mp4: needs "), std::string::npos)
      << ctx.status().message();
  EXPECT_NE(ctx.status().message().find("the limit is 1000"), std::string::npos)
      << ctx.status().message();
}

TEST(ContextBuilderTest, OneHourVideoAtOneFpsFitsTheMillionTokenBudget) {
  Fixture fx;
  fx.options.transport = Transport::kVideo;
  fx.options.server_num_frames = 0;  // the server keeps every frame
  ContextInput in;
  in.item_path = "hour.mp4";
  for (int i = 0; i < 3600; ++i) in.frames.push_back(Frame(i, i));
  in.source_width = 1920;
  in.source_height = 1080;
  in.duration_s = 3600;
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_EQ(ctx->segments.size(), 1u);
  // 1,800 pairs of 720 tokens do not fit 1,048,576 - 16,384 - 256 = 1,031,936. The largest
  // smart-resize size of 1920x1080 that fits: max_pixels 451,583 gives 868x476 (31 x 17 = 527
  // tokens per pair); one more pixel gives 896x504 (32 x 18 = 576 per pair), and
  // 1,800 x (576 + 2) = 1,040,400 alone is over the limit.
  ASSERT_EQ(ctx->fit.size(), 1u) << ctx->fit[0].step;
  EXPECT_EQ(ctx->fit[0].step, "lower_resolution");
  EXPECT_EQ(ctx->frame_width, 868);
  EXPECT_EQ(ctx->frame_height, 476);
  EXPECT_EQ(ctx->frame_max_pixels, 451583);
  pipeline::SmartResizeOptions next;
  next.max_pixels = 451584;
  auto bigger = pipeline::SmartResize({1920, 1080}, next);
  ASSERT_TRUE(bigger.ok());
  EXPECT_EQ(bigger->width, 896);
  EXPECT_EQ(bigger->height, 504);
  std::string stamps;
  for (int p = 0; p < 1800; ++p) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "]<]%.1f seconds[>[", 2.0 * p);
    stamps += buf;
  }
  const TokenBreakdown& t = ctx->segments[0].tokens;
  EXPECT_EQ(t.video, 1800 * (527 + 2) + HandCount(stamps));
  EXPECT_EQ(t.text,
            HandCount(kM3Head + "Video from 0.0 s to 3599.0 s:\n" + "What happens?" + kM3Tail));
  EXPECT_LE(t.total + t.margin + fx.options.reserve_output_tokens, 1048576);
  EXPECT_GT(1800 * (576 + 2) + HandCount(stamps), 1048576 - 16384 - 256);
  EXPECT_EQ(ctx->kept_frames.size(), 3600u);
}

TEST(ContextBuilderTest, PrefixEndsOnABlockBoundary) {
  Fixture fx;
  fx.options.prefix_block = 128;
  auto ctx = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  const ContextSegment& s = ctx->segments[0];
  EXPECT_TRUE(s.prefix_aligned);
  EXPECT_EQ(s.prefix_tokens % 128, 0);
  // The question and the template's tail are all that follow the prefix.
  EXPECT_EQ(s.tokens.total - s.prefix_tokens, HandCount("What happens?" + kM3Tail));
  // Other questions keep the same prefix.
  fx.options.question = "Who is there?";
  auto other = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->segments[0].prefix_tokens, s.prefix_tokens);
  EXPECT_EQ(other->segments[0].padding, s.padding);
}

TEST(ContextBuilderTest, TooLargeWithoutFitStepsIsAnError) {
  Fixture fx;
  fx.options.token_budget = 20000;
  fx.options.fit_steps = {};
  auto ctx = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  ASSERT_FALSE(ctx.ok());
  EXPECT_EQ(ctx.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(ctx.status().message().find("clip.mp4"), std::string::npos);
}

TEST(ContextBuilderTest, ThinningKeepsFirstAndLastAndIsRecorded) {
  Fixture fx;
  fx.options.token_budget = 16384 + 256 + 3 * (kPairTokens + 2) + 400;
  fx.options.fit_steps = {FitStep::kThinFrames};
  auto ctx = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  EXPECT_EQ(ctx->kept_frames, (std::vector<size_t>{0, 2, 4}));
  ASSERT_EQ(ctx->fit.size(), 1u);
  EXPECT_EQ(ctx->fit[0].step, "thin_frames");
}

TEST(ContextBuilderTest, DedupeDropsMarkedAndNearIdenticalFramesFirst) {
  Fixture fx;
  ContextInput in = ShortVideo();  // frames 0..4
  in.frames[0].phash = 0x0F;
  in.frames[1].phash = 0x1F;  // 1 bit from frame 0: a near-duplicate
  in.frames[2].phash = 0xFFFF0000;
  in.frames[3].phash = 0x0000FFFF;
  in.frames[3].duplicate = true;    // the vision encoder's mark
  in.frames[4].phash = 0xFFFF0000;  // the last frame is always kept
  in.frames[4].duplicate = true;
  // Room for three frames, not four.
  fx.options.token_budget = 16384 + 256 + 3 * (kPairTokens + 2) + 400;
  fx.options.fit_steps = {FitStep::kDedupe, FitStep::kThinFrames};
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  EXPECT_EQ(ctx->kept_frames, (std::vector<size_t>{0, 2, 4}));
  ASSERT_EQ(ctx->fit.size(), 1u);
  EXPECT_EQ(ctx->fit[0].step, "dedupe");
  EXPECT_EQ(ctx->fit[0].detail,
            "dropped 2 near-duplicate frames (1 marked by the vision encoder, 1 within 4 dHash "
            "bits of the frame kept before them)");
  EXPECT_EQ(ctx->fit[0].tokens_before - ctx->fit[0].tokens_after,
            2 * (kPairTokens + 2) + HandCount("Frame at 1.5 s:\nFrame at 4.5 s:\n"));
}

TEST(ContextBuilderTest, ManifestIsDeterministic) {
  Fixture fx;
  auto a = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  auto b = BuildContext(ShortVideo(), fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->ManifestJson(ShortVideo(), 0), b->ManifestJson(ShortVideo(), 0));
  json m = json::parse(a->ManifestJson(ShortVideo(), 0));
  EXPECT_EQ(m["count"]["method"], "tokenizer bytes");
  EXPECT_EQ(m["tokens"]["total"], a->segments[0].tokens.total);
}

TEST(ContextBuilderTest, EstimateWhenNoTokenizerIsNamed) {
  Fixture fx;
  TokenCounter estimate(fx.tmpl.special_tokens);
  ContextInput in;
  in.item_path = "notes.txt";
  in.kind = ContextItemKind::kDocument;
  in.texts.push_back({"document", std::nullopt, std::nullopt, std::string(1000, 'a')});
  auto ctx = BuildContext(in, fx.options, fx.tmpl, estimate);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  EXPECT_FALSE(ctx->count_exact);
  // Never below the exact count of a byte-level tokenizer... of ASCII at 0.6 per byte, + 5%.
  EXPECT_GE(ctx->segments[0].tokens.total, TokenCounter::Estimate(std::string(1000, 'a')));
  json m = json::parse(ctx->ManifestJson(in, 0));
  EXPECT_NE(m["count"]["method"].get<std::string>().find("estimate"), std::string::npos);
}

// Writes `bytes` to a file in the test's temporary directory; returns its path.
std::string TempFile(const std::string& name, const std::string& bytes) {
  std::string path = ::testing::TempDir() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return path;
}

// --- paged documents -----------------------------------------------------------------------
// Three pages: 1 and 2 with a text layer (page 1 labelled "i"), 3 scanned (its text by OCR).
constexpr int64_t kPagePlaceholders = 20 * 26;  // 560x728

ContextInput ThreePages(const std::string& body = "") {
  ContextInput in;
  in.item_path = "paper.pdf";
  in.kind = ContextItemKind::kDocument;
  in.paged = true;
  for (int i = 0; i < 3; ++i) {
    ContextFrame f;
    f.sample_index = i;
    f.time_s = i + 1;
    f.width = 560;
    f.height = 728;
    f.page_has_text = i < 2;
    in.frames.push_back(f);
  }
  in.source_width = 560;
  in.source_height = 728;
  in.texts.push_back({"pdf", 1.0, 1.0, "First page text.\n" + body, "i"});
  in.texts.push_back({"pdf", 2.0, 2.0, "Second page text.\n" + body, "2"});
  in.texts.push_back({"ocr", 3.0, 3.0, "Scanned words.\n" + body});
  return in;
}

TEST(ContextBuilderTest, PagesInOrderWithMarkersTextThenPicture) {
  Fixture fx;
  fx.options.fit_steps = {};
  const ContextInput in = ThreePages();
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  ASSERT_EQ(ctx->segments.size(), 1u);
  const std::vector<ContextPart>& parts = ctx->segments[0].parts;
  ASSERT_EQ(parts.size(), 7u);
  EXPECT_EQ(parts[0].text, "Page 1 (label i):\nFirst page text.\n\n");
  EXPECT_EQ(parts[2].text, "Page 2:\nSecond page text.\n\n") << "a label equal to the number";
  EXPECT_EQ(parts[4].text, "Page 3:\nScanned words.\n\n");
  for (size_t i : {1u, 3u, 5u}) {
    EXPECT_EQ(parts[i].kind, ContextPart::Kind::kImage) << i;
    EXPECT_EQ(parts[i].frames, std::vector<size_t>{(i - 1) / 2}) << i;
    EXPECT_EQ(parts[i].width, 560);
    EXPECT_EQ(parts[i].height, 728);
  }
  EXPECT_EQ(parts[6].text, "What happens?");
  const TokenBreakdown& t = ctx->segments[0].tokens;
  EXPECT_EQ(t.image, 3 * (kPagePlaceholders + 2));
  EXPECT_EQ(t.text, HandCount(kM3Head + parts[0].text + parts[2].text + parts[4].text +
                              "What happens?" + kM3Tail));
  // A page with a picture and no text still gets its marker; the transport is always images.
  ContextInput blank = ThreePages();
  blank.texts.erase(blank.texts.begin() + 1);
  blank.texts.push_back({"page", 2.0, 2.0, ""});
  fx.options.transport = Transport::kVideo;
  auto blank_ctx = BuildContext(blank, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(blank_ctx.ok()) << blank_ctx.status().ToString();
  EXPECT_EQ(blank_ctx->segments[0].parts[2].text, "Page 2:\n\n");
  EXPECT_EQ(blank_ctx->segments[0].parts[3].kind, ContextPart::Kind::kImage);
  json m = json::parse(ctx->ManifestJson(in, 0));
  EXPECT_EQ(m["page_range"], json::array({1, 3}));
}

TEST(ContextBuilderTest, PagesFitByDroppingTextPagePicturesThenResolutionThenPageRanges) {
  Fixture fx;
  fx.options.fit_steps = {FitStep::kDropPagePictures, FitStep::kLowerResolution, FitStep::kSplit};
  const ContextInput in = ThreePages();
  const int64_t picture = kPagePlaceholders + 2;
  auto full = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(full.ok());
  const int64_t all = full->segments[0].tokens.total;
  auto build = [&](int64_t limit) {
    fx.options.token_budget = limit + fx.options.reserve_output_tokens + fx.tmpl.margin_tokens;
    return BuildContext(in, fx.options, fx.tmpl, fx.counter);
  };
  // Room for two pictures: one picture of a text page goes, the scanned page's stays.
  auto one_dropped = build(all - picture + 20);
  ASSERT_TRUE(one_dropped.ok()) << one_dropped.status().ToString();
  ASSERT_EQ(one_dropped->fit.size(), 1u);
  EXPECT_EQ(one_dropped->fit[0].step, "drop_page_pictures");
  EXPECT_EQ(one_dropped->kept_frames, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(one_dropped->segments[0].tokens.image, 2 * picture);
  EXPECT_EQ(one_dropped->segments[0].parts[2].text,
            "Page 2:\nSecond page text.\n\nPage 3:\nScanned words.\n\n")
      << "page 2's text stays";
  // Not even the scanned page's picture at full size: all text-page pictures go, then its size.
  auto lowered = build(all - 2 * picture - 200);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  ASSERT_EQ(lowered->fit.size(), 2u);
  EXPECT_EQ(lowered->fit[0].step, "drop_page_pictures");
  EXPECT_EQ(lowered->fit[1].step, "lower_resolution");
  EXPECT_EQ(lowered->kept_frames, (std::vector<size_t>{2}));
  EXPECT_LT(lowered->segments[0].tokens.image, picture - 200 + 2);
  EXPECT_EQ(lowered->frame_sizes[2].first % 28, 0);
  EXPECT_LT(lowered->frame_sizes[2].first, 560);
  // Long pages: split into consecutive page ranges, each counted and within the limit.
  const ContextInput long_pages = ThreePages(std::string(3000, 'x') + "\n");
  fx.options.token_budget = 7000 + fx.options.reserve_output_tokens + fx.tmpl.margin_tokens;
  auto split = BuildContext(long_pages, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  ASSERT_EQ(split->fit.size(), 3u);
  EXPECT_EQ(split->fit[0].step, "drop_page_pictures");
  EXPECT_EQ(split->fit[1].step, "lower_resolution");
  ASSERT_GE(split->segments.size(), 2u);
  EXPECT_EQ(split->fit.back().step, "split");
  EXPECT_NE(split->fit.back().detail.find("consecutive page ranges"), std::string::npos);
  double next = 1;
  for (const ContextSegment& seg : split->segments) {
    EXPECT_EQ(seg.start_s, next);
    EXPECT_GE(seg.end_s, seg.start_s);
    next = seg.end_s + 1;
    EXPECT_LE(seg.tokens.total, split->limit);
    EXPECT_EQ(seg.parts[0].text.rfind("Page " + std::to_string(static_cast<int>(seg.start_s)), 0),
              0u)
        << seg.parts[0].text;
  }
  EXPECT_EQ(next, 4) << "every page in one segment";
  EXPECT_NE(split->reduce_question.find("consecutive parts by pages"), std::string::npos);
  std::vector<std::string> answers(split->segments.size(), "A");
  auto reduce = BuildReduceMessages(*split, answers);
  ASSERT_TRUE(reduce.ok());
  const std::string reduce_body = ReadAll(**reduce).value();
  EXPECT_NE(reduce_body.find("Part 1 of " + std::to_string(answers.size()) + " (pages 1-"),
            std::string::npos)
      << reduce_body;
}

TEST(RequestBodyTest, ImagesTransportMessages) {
  Fixture fx;
  ContextInput in = ShortVideo();
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok());
  ASSERT_EQ(FramesNeeded(*ctx, 0), (std::vector<size_t>{0, 1, 2, 3, 4}));
  std::vector<std::string> files;
  for (int i = 0; i < 5; ++i)
    files.push_back(TempFile("f" + std::to_string(i), "ab" + std::to_string(i)));
  auto messages = BuildMessages(*ctx, 0, files);
  ASSERT_TRUE(messages.ok()) << messages.status().ToString();
  auto text = ReadAll(**messages);
  ASSERT_TRUE(text.ok());
  json j = json::parse(*text);
  EXPECT_EQ(j[0]["role"], "system");
  EXPECT_EQ(j[0]["content"], "You are a helpful assistant.");
  const json& parts = j[1]["content"];
  EXPECT_EQ(j[1]["role"], "user");
  EXPECT_EQ(parts[0]["type"], "text");
  EXPECT_EQ(parts[0]["text"], "Frame at 0.0 s:\n");
  EXPECT_EQ(parts[1]["image_url"]["url"], "data:image/jpeg;base64," + Base64Encode("ab0"));
  EXPECT_EQ(parts.back()["text"], "What happens?");
  // Deterministic, and the same when read again.
  auto again = BuildMessages(*ctx, 0, files);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ReadAll(**again).value(), *text);
  EXPECT_EQ(ReadAll(**messages).value(), *text);
  // A needed frame without a file is an error, not a silent gap.
  files[3].clear();
  EXPECT_FALSE(BuildMessages(*ctx, 0, files).ok());
}

TEST(RequestBodyTest, VideoTransportSendsTheFramesAsOneList) {
  Fixture fx;
  fx.options.transport = Transport::kVideo;
  ContextInput in = ShortVideo();
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok());
  std::vector<std::string> files;
  for (int i = 0; i < 5; ++i)
    files.push_back(TempFile("v" + std::to_string(i), "xyz" + std::to_string(i)));
  auto messages = BuildMessages(*ctx, 0, files);
  ASSERT_TRUE(messages.ok());
  json j = json::parse(ReadAll(**messages).value());
  const json& parts = j[1]["content"];
  std::string url;
  for (const json& p : parts) {
    if (p["type"] == "video_url") url = p["video_url"]["url"];
  }
  std::string want = "data:video/jpeg;base64,";
  for (int i = 0; i < 5; ++i) want += (i ? "," : "") + Base64Encode("xyz" + std::to_string(i));
  EXPECT_EQ(url, want);
}

TEST(RequestBodyTest, FileTransportSendsTheUrl) {
  Fixture fx;
  fx.options.transport = Transport::kFile;
  ContextInput in = ShortVideo();
  auto ctx = BuildContext(in, fx.options, fx.tmpl, fx.counter);
  ASSERT_TRUE(ctx.ok());
  EXPECT_TRUE(FramesNeeded(*ctx, 0).empty());
  auto messages = BuildMessages(*ctx, 0, {}, "file:///media/clip.mp4");
  ASSERT_TRUE(messages.ok());
  json j = json::parse(ReadAll(**messages).value());
  bool found = false;
  for (const json& p : j[1]["content"]) {
    if (p["type"] == "video_url") {
      EXPECT_EQ(p["video_url"]["url"], "file:///media/clip.mp4");
      found = true;
    }
  }
  EXPECT_TRUE(found);
  EXPECT_FALSE(BuildMessages(*ctx, 0, {}).ok());  // the URL is required
}

}  // namespace
}  // namespace reel::llm
