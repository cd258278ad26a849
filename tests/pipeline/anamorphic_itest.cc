// Videos with non-square pixels: a DVD's 720x480 at sample aspect 32:27 is shown as 853x480.
// Frames come out at the shown shape by default (pixel for pixel what
// `ffmpeg -vf scale=iw*sar:ih` gives) and at the stored shape with FrameShape::kStorage (what
// vLLM's and SGLang's own decoders hand the model). Checked on generated DVD-shaped MPEG-2 and on
// a real 12:11 phone clip from a Debian package.
#include <gtest/gtest.h>

#include <cstdlib>

#include "pipeline/frame_sampler.h"
#include "pipeline/probe.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_environment.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using reel::testing::DebianPackageFile;
using reel::testing::GeneratedMedia;
using reel::testing::RunCommand;
using reel::testing::ShellQuote;

std::string Dvd(const std::string& sar) {
  std::string name = sar;
  for (char& c : name) c = c == '/' ? '_' : c;
  return GeneratedMedia("dvd_" + name + ".mpg",
                        "-f lavfi -i testsrc2=s=720x480:r=30000/1001:d=2 -vf setsar=" + sar +
                            " -c:v mpeg2video -b:v 6M -pix_fmt yuv420p");
}

std::vector<SampledFrame> Sample(const std::string& path, ResizeMode mode, FrameShape shape,
                                 SampleReport* report = nullptr) {
  SampleOptions o;
  o.sampling.policy = SamplingPolicy::kTimestamps;
  o.sampling.timestamps = {1.0};
  o.resize.mode = mode;
  o.resize.shape = shape;
  std::vector<SampledFrame> frames;
  auto r = SampleVideo(path, o, [&](SampledFrame&& f) {
    frames.push_back(std::move(f));
    return Status::Ok();
  });
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok() && report != nullptr) *report = *r;
  return frames;
}

// Mean absolute difference per sample between `frame` and FFmpeg's RGB of the same source frame
// through `filter`.
double DifferenceFromFfmpeg(const std::string& path, const SampledFrame& frame,
                            const std::string& filter) {
  auto r = RunCommand("ffmpeg -nostdin -v error -i " + ShellQuote(path) + " -vf \"select=eq(n\\," +
                      std::to_string(frame.source_frame) + ")," + filter +
                      "\" -frames:v 1 -f rawvideo -pix_fmt rgb24 -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::vector<uint8_t>& ours = frame.image.pixels;
  EXPECT_EQ(r.out.size(), ours.size()) << "FFmpeg's frame has another size";
  if (r.out.size() != ours.size() || ours.empty()) return 255;
  double sum = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    sum += std::abs(static_cast<int>(static_cast<uint8_t>(r.out[i])) - ours[i]);
  }
  return sum / static_cast<double>(ours.size());
}

// The scaler settings Reel uses, converting to RGB in the same pass.
const char kSameScaler[] = "flags=bicubic+accurate_rnd,format=rgb24";

TEST(AnamorphicTest, ProbeGivesStoredAndShownShapes) {
  auto info = Probe(Dvd("32/27"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  const StreamInfo& v = info->streams[0];
  EXPECT_EQ(v.width, 720);
  EXPECT_EQ(v.height, 480);
  EXPECT_EQ(v.sample_aspect, (SampleAspect{32, 27}));
  EXPECT_EQ(v.display_width, 853);
  EXPECT_EQ(v.display_height, 480);
  info = Probe(Dvd("8/9"));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->streams[0].display_width, 640);
}

TEST(AnamorphicTest, FramesComeOutAtTheShownShapeByDefault) {
  const std::string dvd = Dvd("32/27");
  SampleReport report;
  std::vector<SampledFrame> frames = Sample(dvd, ResizeMode::kNone, FrameShape::kDisplay, &report);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].image.width, 853);
  EXPECT_EQ(frames[0].image.height, 480);
  EXPECT_EQ(report.storage_size, (Size{720, 480}));
  EXPECT_EQ(report.display_size, (Size{853, 480}));
  EXPECT_EQ(report.sample_aspect, (SampleAspect{32, 27}));
  EXPECT_EQ(report.shape, FrameShape::kDisplay);
  EXPECT_LT(DifferenceFromFfmpeg(dvd, frames[0], std::string("scale=iw*sar:ih:") + kSameScaler),
            0.01);

  // The model's size follows the shown shape: 853x480 -> 840x476.
  frames = Sample(dvd, ResizeMode::kSmart, FrameShape::kDisplay, &report);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].image.width, 840);
  EXPECT_EQ(frames[0].image.height, 476);
  EXPECT_EQ(report.source_width, 853);
  EXPECT_LT(DifferenceFromFfmpeg(dvd, frames[0], std::string("scale=840:476:") + kSameScaler),
            0.01);

  // A 4:3 DVD is narrowed: 720x480 at 8:9 is shown as 640x480.
  frames = Sample(Dvd("8/9"), ResizeMode::kNone, FrameShape::kDisplay);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].image.width, 640);
}

TEST(AnamorphicTest, StorageShapeKeepsTheStoredGrid) {
  const std::string dvd = Dvd("32/27");
  SampleReport report;
  std::vector<SampledFrame> frames = Sample(dvd, ResizeMode::kNone, FrameShape::kStorage, &report);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].image.width, 720);
  EXPECT_EQ(frames[0].image.height, 480);
  EXPECT_EQ(report.display_size, (Size{853, 480}));  // still reported
  EXPECT_EQ(report.shape, FrameShape::kStorage);
  EXPECT_LT(DifferenceFromFfmpeg(dvd, frames[0], std::string("scale=iw:ih:") + kSameScaler), 0.01);
  frames = Sample(dvd, ResizeMode::kSmart, FrameShape::kStorage);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].image.width, 728);
  EXPECT_EQ(frames[0].image.height, 476);
}

TEST(AnamorphicTest, SampleAspectAppliesBeforeRotation) {
  // Stored 320x180 at 2:1 (shown 640x180), turned a quarter: upright 180x640.
  std::string plain =
      GeneratedMedia("sar2_plain.mp4",
                     "-f lavfi -i testsrc2=s=320x180:r=10:d=2 -vf setsar=2/1 -c:v libx264 "
                     "-pix_fmt yuv420p");
  std::string rotated = GeneratedMedia(
      "sar2_rot90.mp4", "-i " + ShellQuote(plain) + " -c copy -metadata:s:v:0 rotate=90");
  auto info = Probe(rotated);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->streams[0].display_width, 180);
  EXPECT_EQ(info->streams[0].display_height, 640);
  std::vector<SampledFrame> frames = Sample(rotated, ResizeMode::kNone, FrameShape::kDisplay);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].image.width, 180);
  EXPECT_EQ(frames[0].image.height, 640);
}

TEST(AnamorphicTest, ImplausibleRatiosAreIgnoredAndWideShapesStayWithinLimits) {
  // 9:1 pixels are no real camera's: damage, treated as square.
  std::string nine = GeneratedMedia(
      "sar9.mp4",
      "-f lavfi -i testsrc2=s=64x64:r=10:d=1 -vf setsar=9/1 -c:v libx264 -pix_fmt yuv420p");
  auto info = Probe(nine);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->streams[0].sample_aspect, (SampleAspect{1, 1}));
  EXPECT_EQ(info->streams[0].display_width, 64);
  // 8:1 on 2100 stored pixels is 16800 wide: over the 16384 side limit when not resized.
  std::string wide = GeneratedMedia(
      "sar8_wide.mp4",
      "-f lavfi -i testsrc2=s=2100x128:r=10:d=1 -vf setsar=8/1 -c:v libx264 -pix_fmt yuv420p");
  SampleOptions o;
  o.sampling.policy = SamplingPolicy::kCount;
  o.sampling.count = 1;
  o.resize.mode = ResizeMode::kNone;
  auto r = SampleVideo(wide, o, [](SampledFrame&&) { return Status::Ok(); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(r.status().message().find("frames would be 16800x128 (stored 2100x128, sample aspect "
                                      "8:1), over the size limit"),
            std::string::npos)
      << r.status().message();
  o.resize.mode = ResizeMode::kSmart;  // resized to the model's size: fine
  r = SampleVideo(wide, o, [](SampledFrame&&) { return Status::Ok(); });
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

TEST(AnamorphicTest, RealPhoneClipAt12To11) {
  // CIF H.263 from a 3GP phone recording: 352x288 stored, 12:11 pixels, shown 384x288.
  std::string clip = DebianPackageFile(
      "golang-github-gabriel-vasile-mimetype-dev",
      "usr/share/gocode/src/github.com/gabriel-vasile/mimetype/testdata/3gp.3gp", "mimetype.3gp");
  if (clip.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage)
        << "golang-github-gabriel-vasile-mimetype-dev cannot be fetched";
  auto info = Probe(clip);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_TRUE(info->best_video.has_value());
  const StreamInfo& v = info->streams[*info->best_video];
  EXPECT_EQ(v.sample_aspect, (SampleAspect{12, 11}));
  EXPECT_EQ(v.display_width, 384);
  EXPECT_EQ(v.display_height, 288);
  std::vector<SampledFrame> frames = Sample(clip, ResizeMode::kNone, FrameShape::kDisplay);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].image.width, 384);
  EXPECT_LT(DifferenceFromFfmpeg(clip, frames[0], std::string("scale=iw*sar:ih:") + kSameScaler),
            0.01);
  frames = Sample(clip, ResizeMode::kSmart, FrameShape::kDisplay);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].image.width, 392);  // smart resize of 384x288
  EXPECT_EQ(frames[0].image.height, 280);
  frames = Sample(clip, ResizeMode::kSmart, FrameShape::kStorage);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].image.width, 364);  // smart resize of 352x288
}

}  // namespace
}  // namespace reel::pipeline
