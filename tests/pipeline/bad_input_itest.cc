// Hostile input: every case ends in a clear error naming the file, or a partial result clearly
// marked; never a crash, a hang or unbounded memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "pipeline/frame_sampler.h"
#include "pipeline/probe.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using reel::testing::GeneratedMedia;
using reel::testing::ScratchDir;

std::string Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Result<SampleReport> SampleCount(const std::string& path, int count, int* delivered = nullptr,
                                 MediaLimits limits = {}) {
  SampleOptions o;
  o.sampling.policy = SamplingPolicy::kCount;
  o.sampling.count = count;
  o.limits = limits;
  int n = 0;
  auto r = SampleVideo(path, o, [&](SampledFrame&&) {
    ++n;
    return Status::Ok();
  });
  if (delivered) *delivered = n;
  return r;
}

struct BadCase {
  std::string name;
  ErrorCode probe_code;
};

TEST(BadInputTest, UnreadableFilesFailWithTheFileNameAndReason) {
  std::string dir = ScratchDir("BadInput");
  std::mt19937 rng(42);
  std::string random_bytes(64 * 1024, '\0');
  for (char& c : random_bytes) c = static_cast<char>(rng());
  std::string good = ReadAll(GeneratedMedia(
      "bad_source.mp4", "-f lavfi -i testsrc2=s=160x120:r=25:d=4 -c:v libx264 -pix_fmt yuv420p"));
  struct Case {
    std::string path;
    ErrorCode code;
    std::string reason;
  };
  std::vector<Case> cases = {
      {Write(dir, "empty.mp4", ""), ErrorCode::kCorruptData, "empty file"},
      {Write(dir, "random.mp4", random_bytes), ErrorCode::kCorruptData, "not a readable media"},
      {Write(dir, "notes.mp4", "These are my notes, not a video.\n"), ErrorCode::kCorruptData,
       "not a readable media"},
      {Write(dir, "header_only.mp4", good.substr(0, 40)), ErrorCode::kCorruptData, ""},
      {dir + "/missing.mp4", ErrorCode::kNotFound, "no such file"},
      {dir, ErrorCode::kInvalidArgument, "is a directory"},
  };
  for (const Case& c : cases) {
    auto info = Probe(c.path);
    ASSERT_FALSE(info.ok()) << c.path;
    EXPECT_EQ(info.status().code(), c.code) << info.status().ToString();
    EXPECT_EQ(info.status().message().rfind(c.path, 0), 0u) << info.status().message();
    EXPECT_NE(info.status().message().find(c.reason), std::string::npos) << info.status().message();
    auto sampled = SampleCount(c.path, 4);
    ASSERT_FALSE(sampled.ok()) << c.path;
    EXPECT_EQ(sampled.status().message().rfind(c.path, 0), 0u) << sampled.status().message();
  }
}

TEST(BadInputTest, NoVideoStreamIsAClearError) {
  std::string path = GeneratedMedia("only_audio.m4a", "-f lavfi -i sine=d=1 -c:a aac");
  auto r = SampleCount(path, 3);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no video stream"), std::string::npos);
}

TEST(BadInputTest, TruncatedFileGivesWhatCanBeDecoded) {
  // moov at the front so the index survives; the media data is cut in half.
  std::string good = ReadAll(
      GeneratedMedia("trunc_source.mp4",
                     "-f lavfi -i testsrc2=s=160x120:r=25:d=4 -c:v libx264 -pix_fmt yuv420p "
                     "-movflags +faststart"));
  std::string path = Write(ScratchDir("Truncated"), "half.mp4", good.substr(0, good.size() / 2));
  int delivered = 0;
  auto r = SampleCount(path, 10, &delivered);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(delivered, 10);  // spread over what is readable
  EXPECT_TRUE(r->truncated);
  EXPECT_TRUE(r->partial());
  EXPECT_LT(r->source_frames, 100);
  EXPECT_NE(r->truncation.find("50 of the 100 frames listed are in the file"), std::string::npos)
      << r->truncation;
}

TEST(BadInputTest, DamagedMiddleIsDecodedAroundAndReported) {
  // An MPEG-TS stream with garbage written over a stretch in the middle.
  std::string source = GeneratedMedia(
      "damage_source.ts",
      "-f lavfi -i testsrc2=s=320x240:r=25:d=8 -c:v libx264 -g 25 -pix_fmt yuv420p -f mpegts");
  std::string bytes = ReadAll(source);
  std::mt19937 rng(7);
  for (size_t i = bytes.size() * 45 / 100; i < bytes.size() * 55 / 100; ++i) {
    if (i % 188 > 4) bytes[i] = static_cast<char>(rng());  // keep TS sync bytes and headers
  }
  std::string path = Write(ScratchDir("Damaged"), "damaged.ts", bytes);
  int delivered = 0;
  SampleOptions o;
  o.sampling.policy = SamplingPolicy::kFps;
  o.sampling.fps = 25;
  auto r = SampleVideo(path, o, [&](SampledFrame&&) {
    ++delivered;
    return Status::Ok();
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(delivered, 100);
  EXPECT_TRUE(r->partial());
  EXPECT_GT(r->decode_errors + static_cast<int>(r->missing.size()), 0);
}

TEST(BadInputTest, ErrorRateCapFailsBadlyDamagedFiles) {
  std::string source = GeneratedMedia(
      "damage_source.ts",
      "-f lavfi -i testsrc2=s=320x240:r=25:d=8 -c:v libx264 -g 25 -pix_fmt yuv420p -f mpegts");
  std::string bytes = ReadAll(source);
  std::mt19937 rng(9);
  for (size_t i = 4096; i < bytes.size(); ++i) {
    if (i % 188 > 4 && rng() % 8 == 0) bytes[i] = static_cast<char>(rng());
  }
  std::string path = Write(ScratchDir("Shredded"), "shredded.ts", bytes);
  MediaLimits limits;
  limits.max_error_rate = 0.05;
  limits.min_errors_for_rate = 3;
  SampleOptions o;
  o.sampling.fps = 25;
  o.limits = limits;
  auto r = SampleVideo(path, o, [](SampledFrame&&) { return Status::Ok(); });
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().code() == ErrorCode::kLimitExceeded ||
              r.status().code() == ErrorCode::kCorruptData)
      << r.status().ToString();
  EXPECT_EQ(r.status().message().rfind(path, 0), 0u);
}

TEST(BadInputTest, AbsurdDimensionsAreRefusedBeforeDecoding) {
  std::string path =
      GeneratedMedia("wide.mkv", "-f lavfi -i color=s=17000x16:r=1 -frames:v 1 -c:v ffv1");
  auto info = Probe(path);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), ErrorCode::kLimitExceeded);
  auto r = SampleCount(path, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kLimitExceeded);
}

TEST(BadInputTest, TimeLimitStopsWork) {
  std::string path =
      GeneratedMedia("long_for_limit.mp4",
                     "-f lavfi -i testsrc2=s=320x240:r=25:d=20 -c:v libx264 -pix_fmt yuv420p");
  MediaLimits limits;
  limits.time_limit_s = 1e-4;
  auto r = SampleCount(path, 50, nullptr, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(r.status().message().find("time limit"), std::string::npos);
}

TEST(BadInputTest, RandomMutationsNeverCrash) {
  std::string good = ReadAll(GeneratedMedia(
      "fuzz_source.mp4", "-f lavfi -i testsrc2=s=96x64:r=10:d=3 -c:v libx264 -pix_fmt yuv420p"));
  std::string dir = ScratchDir("Mutations");
  std::mt19937 rng(1234);
  for (int round = 0; round < 40; ++round) {
    std::string bytes = good;
    int flips = 1 + static_cast<int>(rng() % 64);
    for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    if (round % 5 == 0) bytes.resize(rng() % bytes.size());
    std::string path = Write(dir, "m" + std::to_string(round) + ".mp4", bytes);
    MediaLimits limits;
    limits.time_limit_s = 10;
    auto info = Probe(path, limits);
    if (!info.ok()) {
      EXPECT_EQ(info.status().message().rfind(path, 0), 0u);
    }
    auto r = SampleCount(path, 5, nullptr, limits);
    if (!r.ok()) {
      EXPECT_EQ(r.status().message().rfind(path, 0), 0u) << r.status().message();
    }
  }
}

}  // namespace
}  // namespace reel::pipeline
