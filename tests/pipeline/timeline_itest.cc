// Frame timelines the container gets wrong or leaves out: AVI indexes with empty (dropped-frame)
// entries, streams whose frames are not evenly spaced (the fps rule on presentation times), files
// cut short (Matroska/WebM, AVI, MP4), and MPEG elementary and program streams without durations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "pipeline/frame_index.h"
#include "pipeline/frame_sampler.h"
#include "pipeline/internal/truncation.h"
#include "pipeline/probe.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_environment.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using reel::testing::CounterClipArgs;
using reel::testing::DebianPackageFile;
using reel::testing::DecodeCounter;
using reel::testing::GeneratedMedia;
using reel::testing::ScratchDir;

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The first `bytes` bytes of `source` in a scratch file (what `head -c` makes).
std::string Head(const std::string& source, size_t bytes, const std::string& name) {
  std::string path = ScratchDir("Head_" + name) + "/" + name;
  std::ofstream(path, std::ios::binary) << ReadFileBytes(source).substr(0, bytes);
  return path;
}

struct TimelineRun {
  SampleReport report;
  std::vector<int> painted;  // the frame number painted in each delivered frame (counter clips)
  std::vector<double> times;
};

TimelineRun Sample(const std::string& path, SamplingOptions sampling) {
  SampleOptions o;
  o.sampling = sampling;
  o.resize.mode = ResizeMode::kNone;
  TimelineRun s;
  auto r = SampleVideo(path, o, [&](SampledFrame&& f) {
    s.painted.push_back(DecodeCounter(f.image.pixels.data(), f.image.width, f.image.height,
                                      static_cast<int>(f.image.stride())));
    s.times.push_back(f.time_s);
    return Status::Ok();
  });
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (r.ok()) s.report = *r;
  return s;
}

SamplingOptions Fps(double fps, FpsTimeline timeline = FpsTimeline::kAuto) {
  SamplingOptions s;
  s.fps = fps;
  s.fps_timeline = timeline;
  return s;
}

// 30 counter frames at 10 fps; frames 3, 7, 8 and 21 dropped with their times kept, so the AVI
// muxer writes empty index entries in their slots (dropped frames, as capture software does).
std::string DroppedFrameAvi(const std::string& codec_args, const std::string& name) {
  std::string source =
      GeneratedMedia("timeline_counter.mkv", CounterClipArgs(30, 64, 64, "10") + " -c:v ffv1");
  return GeneratedMedia(name, "-i " + source +
                                  " -vf \"select='not(eq(n\\,3)+eq(n\\,7)+eq(n\\,8)+eq(n\\,21))'\" "
                                  "-fps_mode passthrough " +
                                  codec_args);
}

const std::vector<int> kKeptFrames = {0,  1,  2,  4,  5,  6,  9,  10, 11, 12, 13, 14, 15,
                                      16, 17, 18, 19, 20, 22, 23, 24, 25, 26, 27, 28, 29};

TEST(DroppedFrameAviTest, IsWholeAndEveryFrameThereIsFound) {
  for (const char* codec : {"-c:v mpeg4 -q:v 2 -g 6", "-c:v libx264 -pix_fmt yuv420p -g 6",
                            "-c:v libvpx-vp9 -lossless 1 -g 6"}) {
    SCOPED_TRACE(codec);
    std::string name = std::string("dropped_") +
                       (codec[5] == 'm'   ? "mpeg4"
                        : codec[8] == '2' ? "h264"
                                          : "vp9") +
                       ".avi";
    std::string path = DroppedFrameAvi(codec, name);
    auto index = BuildFrameIndex(path);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ(index->size(), 26);  // 30 slots, 4 of them empty
    EXPECT_FALSE(index->truncated()) << index->truncation.reason;
    EXPECT_EQ(index->truncation.reason, "");
    auto probe = Probe(path);
    ASSERT_TRUE(probe.ok());
    EXPECT_FALSE(probe->truncation.truncated) << probe->truncation.reason;
    EXPECT_EQ(probe->streams[0].frames, 26);

    SamplingOptions all;
    all.policy = SamplingPolicy::kCount;
    all.count = 100;
    TimelineRun s = Sample(path, all);
    EXPECT_FALSE(s.report.partial()) << s.report.PartialReason();
    EXPECT_EQ(s.report.PartialReason(), "");
    EXPECT_EQ(s.painted, kKeptFrames);
  }
}

TEST(DroppedFrameAviTest, ACutAviIsTruncatedWithHowMuchIsMissing) {
  // Only the index at the end lost: every frame is there, the file is still cut.
  std::string dropped = DroppedFrameAvi("-c:v mpeg4 -q:v 2 -g 6", "dropped_mpeg4.avi");
  const auto dropped_size = static_cast<int64_t>(std::filesystem::file_size(dropped));
  auto index = BuildFrameIndex(Head(dropped, dropped_size - 100, "no_index.avi"));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(index->size(), 26);
  EXPECT_TRUE(index->truncated());
  EXPECT_EQ(index->truncation.missing_bytes, 100);
  EXPECT_NE(index->truncation.reason.find("RIFF 'AVI ' chunk declares"), std::string::npos)
      << index->truncation.reason;

  // Cut in the middle of the frames: 60 frames (6 s) listed, about 3.5 s readable.
  std::string whole = GeneratedMedia(
      "timeline_6s.avi", "-f lavfi -i testsrc=s=160x120:r=10:d=6 -c:v mpeg4 -q:v 3 -g 10");
  const auto size = static_cast<int64_t>(std::filesystem::file_size(whole));
  std::string cut = Head(whole, size * 6 / 10, "cut.avi");
  index = BuildFrameIndex(cut);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_LT(index->size(), 60);
  EXPECT_TRUE(index->truncated());
  EXPECT_EQ(index->truncation.missing_bytes, size - size * 6 / 10);
  EXPECT_NEAR(index->truncation.missing_s, 6.0 - index->duration_s(), 1e-6)
      << index->truncation.reason;
  EXPECT_GT(index->truncation.missing_s, 1.0);
  TimelineRun s = Sample(cut, Fps(1));
  EXPECT_TRUE(s.report.partial());
  EXPECT_NE(s.report.PartialReason().find("file truncated: "), std::string::npos);
}

// The real file of the issue: 68 frames in 444 index slots (opencv-doc's tree.avi).
TEST(DroppedFrameAviTest, OpencvTreeAvi) {
  std::string path = DebianPackageFile(
      "opencv-doc", "usr/share/doc/opencv-doc/examples/data/tree.avi", "tree.avi");
  if (path.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "opencv-doc cannot be fetched (offline?)";
  auto index = BuildFrameIndex(path);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->size(), 68);  // ffprobe -count_frames: nb_read_frames=68
  EXPECT_FALSE(index->truncated()) << index->truncation.reason;
  EXPECT_FALSE(index->constant_rate());
  SampleOptions o;
  o.sampling = Fps(1);
  std::vector<double> times;
  auto r = SampleVideo(path, o, [&](SampledFrame&& f) {
    times.push_back(f.time_s);
    return Status::Ok();
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->partial()) << r->PartialReason();
  EXPECT_EQ(r->fps_timeline, "time");
  // One frame a second or so over 29.6 s, not one every 15 frames (about 6 s).
  ASSERT_GE(times.size(), 20u);
  for (size_t i = 1; i + 1 < times.size(); ++i) {
    EXPECT_GE(times[i] - times[i - 1], 1.0 - 1e-4);
    EXPECT_LT(times[i] - times[i - 1], 1.0 + 0.75);  // the longest gap is 11 slots, 0.73 s
  }
}

// A variable-rate MP4 with a long still stretch: 10 fps for 2 s, then nothing until 8 s (the
// last frame stays on screen), then 10 fps again. The container's average rate is 4 fps.
std::string StillStretchMp4() {
  std::string source =
      GeneratedMedia("timeline_counter100.mkv", CounterClipArgs(100, 64, 64, "10") + " -c:v ffv1");
  return GeneratedMedia("still_stretch.mp4",
                        "-i " + source +
                            " -vf \"select='lt(n\\,20)+gte(n\\,80)'\" -fps_mode passthrough "
                            "-c:v libx264 -qp 0 -pix_fmt yuv420p");
}

TEST(FpsTimelineTest, VariableRateStillStretchUsesPresentationTimes) {
  std::string path = StillStretchMp4();
  auto index = BuildFrameIndex(path);
  ASSERT_TRUE(index.ok());
  ASSERT_EQ(index->size(), 40);
  EXPECT_NEAR(index->avg_fps, 4.0, 1e-9);
  EXPECT_FALSE(index->constant_rate());
  auto probe = Probe(path);
  ASSERT_TRUE(probe.ok());
  EXPECT_FALSE(probe->streams[0].constant_rate);

  TimelineRun automatic = Sample(path, Fps(1));
  EXPECT_EQ(automatic.report.fps_timeline, "time");
  // 0, 1 s, then the first frame after the still (8 s), 9 s and the last frame (9.9 s).
  EXPECT_EQ(automatic.painted, (std::vector<int>{0, 10, 80, 90, 99}));
  TimelineRun by_time = Sample(path, Fps(1, FpsTimeline::kTime));
  EXPECT_EQ(by_time.painted, automatic.painted);
  // What the servers do: every 4th frame (the average rate), 0.4 s apart.
  TimelineRun by_index = Sample(path, Fps(1, FpsTimeline::kIndex));
  EXPECT_EQ(by_index.report.fps_timeline, "index");
  EXPECT_EQ(by_index.painted, (std::vector<int>{0, 4, 8, 12, 16, 80, 84, 88, 92, 96, 99}));
}

TEST(CountPolicyTest, TwoStepsInOneHeldFrameStillGiveTheCountAskedFor) {
  // 99 counter frames of variable-rate Theora: 10 fps, but frame 49 is held 1.1 s. With
  // --count 16 the steps are 0.72 s, and the targets at 5.04 s and 5.76 s both fall in frame 49:
  // the second takes the next frame, 50, so 16 frames come back, as asked.
  std::string source =
      GeneratedMedia("timeline_counter99.mkv", CounterClipArgs(99, 64, 64, "10") + " -c:v ffv1");
  std::string path = GeneratedMedia(
      "held_frame_theora.mkv",
      "-i " + source +
          " -vf \"setpts='if(gte(N,50),N/10+1,N/10)/TB'\" -fps_mode passthrough -c:v libtheora "
          "-q:v 10");
  auto frames = reel::testing::RunCommand(
      "ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of default=nw=1:nk=1 " +
      reel::testing::ShellQuote(path));
  ASSERT_EQ(frames.out, "99\n") << frames.err;
  SamplingOptions count;
  count.policy = SamplingPolicy::kCount;
  count.count = 16;
  TimelineRun s = Sample(path, count);
  EXPECT_EQ(s.painted,
            (std::vector<int>{0, 7, 14, 21, 28, 36, 43, 49, 50, 54, 62, 69, 76, 83, 90, 98}));
  EXPECT_TRUE(s.report.warnings.empty());
  // Seven targets fall in the held frame of a 20-frame range (frames 40-49, then 50-59 from
  // 6.0 s): 19 asked, 19 given, in order.
  count.count = 19;
  count.start_s = 4.0;
  count.end_s = 6.95;
  TimelineRun range = Sample(path, count);
  ASSERT_EQ(range.painted.size(), 19u);
  EXPECT_EQ(range.painted.front(), 40);
  EXPECT_EQ(range.painted.back(), 59);
  EXPECT_TRUE(std::is_sorted(range.painted.begin(), range.painted.end()));
}

TEST(FpsTimelineTest, ConstantRateStreamsKeepTheServersIndexRule) {
  std::string path =
      GeneratedMedia("timeline_counter.mkv", CounterClipArgs(30, 64, 64, "10") + " -c:v ffv1");
  auto index = BuildFrameIndex(path);
  ASSERT_TRUE(index.ok());
  EXPECT_TRUE(index->constant_rate());
  TimelineRun s = Sample(path, Fps(2));
  EXPECT_EQ(s.report.fps_timeline, "index");
  EXPECT_EQ(s.painted, (std::vector<int>{0, 5, 10, 15, 20, 25, 29}));
}

std::string Webm() {
  return GeneratedMedia("timeline.webm",
                        "-f lavfi -i testsrc=s=160x120:r=10:d=3 -c:v libvpx -b:v 200k -g 5");
}

TEST(TruncatedMatroskaTest, AWebmCutShortIsTruncatedWithHowMuchIsMissing) {
  std::string whole = Webm();
  const auto size = static_cast<int64_t>(std::filesystem::file_size(whole));
  auto full = BuildFrameIndex(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_FALSE(full->truncated()) << full->truncation.reason;
  auto whole_probe = Probe(whole);
  ASSERT_TRUE(whole_probe.ok());
  EXPECT_FALSE(whole_probe->truncation.truncated) << whole_probe->truncation.reason;

  for (int percent : {17, 30, 60}) {
    SCOPED_TRACE(percent);
    const int64_t kept = size * percent / 100;
    std::string cut = Head(whole, kept, "cut" + std::to_string(percent) + ".webm");
    auto index = BuildFrameIndex(cut);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_LT(index->size(), 30);
    EXPECT_TRUE(index->truncated());
    EXPECT_EQ(index->truncation.missing_bytes, size - kept);
    // The video read ends where its last frame ends; the container says 3 s.
    EXPECT_NEAR(index->truncation.missing_s, 3.0 - index->duration_s(), 1e-6);
    EXPECT_GT(index->truncation.missing_s, 0.5);
    EXPECT_NE(index->truncation.reason.find("Matroska segment"), std::string::npos);

    TimelineRun s = Sample(cut, Fps(1));
    EXPECT_TRUE(s.report.truncated);
    EXPECT_TRUE(s.report.partial());
    EXPECT_EQ(s.report.missing_bytes, size - kept);
    EXPECT_GT(s.report.missing_s, 0.5);
    EXPECT_NE(s.report.PartialReason().find("file truncated: "), std::string::npos);

    auto probe = Probe(cut);
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    EXPECT_TRUE(probe->truncation.truncated);
    EXPECT_EQ(probe->truncation.missing_bytes, size - kept);
    EXPECT_GT(probe->truncation.missing_s, 0.5);
  }
  // Only the index at the end lost (cues, tags): every frame is there, but the file is cut.
  std::string tail_cut = Head(whole, size - 20, "tail_cut.webm");
  auto index = BuildFrameIndex(tail_cut);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->size(), 30);
  EXPECT_TRUE(index->truncated());
  EXPECT_EQ(index->truncation.missing_bytes, 20);
}

TEST(TruncatedMatroskaTest, LiveWrittenWebmDeclaresNoSize) {
  // Written as a live stream: the segment size is "unknown" and there is no duration, so nothing
  // says the file should be longer. Not truncated, whole or cut.
  std::string path = GeneratedMedia(
      "timeline_live.webm", "-f lavfi -i testsrc=s=160x120:r=10:d=1 -c:v libvpx -live 1 -f webm");
  auto index = BuildFrameIndex(path);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->size(), 10);
  EXPECT_FALSE(index->truncated()) << index->truncation.reason;
  auto cut = BuildFrameIndex(Head(path, std::filesystem::file_size(path) / 2, "live_cut.webm"));
  ASSERT_TRUE(cut.ok());
  EXPECT_FALSE(cut->truncated()) << cut->truncation.reason;
}

// The duration ffprobe gives a file, and its exit status (a cut Ogg file opens without complaint).
double FfprobeDuration(const std::string& path) {
  auto r = reel::testing::RunCommand(
      "ffprobe -v error -show_entries format=duration -of "
      "default=nw=1:nk=1 " +
      reel::testing::ShellQuote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return std::atof(r.out.c_str());
}

// Checks a whole Ogg file and cuts of it: the first 60% (mid-page: the last page declares bytes
// the file lacks), and the same cut moved back to the page boundary before it (whole pages, but
// the streams' last pages, flagged end-of-stream, are missing).
void ExpectOggCutsTruncated(const std::string& whole, const std::string& name) {
  const std::string bytes = ReadFileBytes(whole);
  const int64_t size = static_cast<int64_t>(bytes.size());
  ASSERT_GT(size, 1000);
  auto full = Probe(whole);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_FALSE(full->truncation.truncated) << full->truncation.reason;
  auto full_index = BuildFrameIndex(whole);
  ASSERT_TRUE(full_index.ok());
  EXPECT_FALSE(full_index->truncated()) << full_index->truncation.reason;

  const size_t sixty = static_cast<size_t>(size * 6 / 10);
  const size_t boundary = bytes.rfind("OggS", sixty);
  ASSERT_NE(boundary, std::string::npos);
  ASSERT_GT(boundary, 0u);
  for (size_t kept : {sixty, boundary}) {
    SCOPED_TRACE(kept);
    std::string cut = Head(whole, kept, name + std::to_string(kept) + ".ogv");
    // FFmpeg opens it without an error and times it by what is there.
    const double ffprobe_s = FfprobeDuration(cut);
    EXPECT_LT(ffprobe_s, full->duration_s * 0.8);
    auto probe = Probe(cut);
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    EXPECT_TRUE(probe->truncation.truncated);
    EXPECT_NE(probe->truncation.reason.find("Ogg"), std::string::npos) << probe->truncation.reason;
    if (kept == sixty) {
      EXPECT_GT(probe->truncation.missing_bytes, 0);
    } else {
      EXPECT_NE(probe->truncation.reason.find("end-of-stream"), std::string::npos)
          << probe->truncation.reason;
    }
    auto index = BuildFrameIndex(cut);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_TRUE(index->truncated());
    TimelineRun sampled = Sample(cut, Fps(1));
    EXPECT_TRUE(sampled.report.truncated);
    EXPECT_TRUE(sampled.report.partial());
  }
}

TEST(TruncatedOggTest, ACutTheoraFileIsTruncated) {
  // 24 s of Theora and Vorbis; ffprobe times the first 60% at about 14 s and says nothing else.
  std::string whole = GeneratedMedia(
      "theora24.ogv",
      "-f lavfi -i testsrc2=s=96x64:r=10:d=24 -f lavfi -i sine=d=24 -c:v libtheora -q:v 4 "
      "-c:a libvorbis");
  ASSERT_FALSE(whole.empty());
  ExpectOggCutsTruncated(whole, "theora");
}

TEST(TruncatedOggTest, ARealOgvCutShortIsTruncated) {
  std::string whole = DebianPackageFile(
      "golang-github-gabriel-vasile-mimetype-dev",
      "usr/share/gocode/src/github.com/gabriel-vasile/mimetype/testdata/ogg.ogv", "mimetype.ogv");
  if (whole.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage)
        << "golang-github-gabriel-vasile-mimetype-dev cannot be fetched";
  ExpectOggCutsTruncated(whole, "mimetype");
}

TEST(DeclaredSizeTest, ReadsMatroskaAviAndMp4Headers) {
  using internal::ContainerFamily;
  auto parse = [](ContainerFamily family, const std::string& bytes, int64_t file_size) {
    return internal::ParseDeclaredSize(
        family, file_size, [&](int64_t offset, size_t n, uint8_t* out) {
          if (offset < 0 || offset + static_cast<int64_t>(n) > static_cast<int64_t>(bytes.size()))
            return false;
          std::memcpy(out, bytes.data() + offset, n);
          return true;
        });
  };
  // EBML header (4 bytes of body), then a Segment of 0x1000 bytes: ends at 8 + 4 + 5 + 0x1000.
  std::string mkv("\x1A\x45\xDF\xA3\x84\x42\x86\x81\x01\x18\x53\x80\x67\x10\x00\x10\x00", 17);
  auto d = parse(ContainerFamily::kMatroska, mkv, 100);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->bytes, 17 + 0x1000);
  // An unknown segment size (all ones) declares nothing.
  std::string live("\x1A\x45\xDF\xA3\x80\x18\x53\x80\x67\x01\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 17);
  EXPECT_FALSE(parse(ContainerFamily::kMatroska, live, 100).has_value());
  // AVI: RIFF of 1000 bytes, then an AVIX of 500; file of 1516 bytes is whole, 1400 is cut.
  std::string avi(1516, '\0');
  avi.replace(0, 12,
              std::string("RIFF\xE8\x03\x00\x00"
                          "AVI ",
                          12));
  avi.replace(1008, 12,
              std::string("RIFF\xF4\x01\x00\x00"
                          "AVIX",
                          12));
  EXPECT_EQ(parse(ContainerFamily::kAvi, avi, 1516)->bytes, 1516);
  EXPECT_EQ(parse(ContainerFamily::kAvi, avi, 1400)->bytes, 1516);
  EXPECT_EQ(parse(ContainerFamily::kAvi, avi.substr(0, 900), 900)->bytes, 1008);
  // Bytes after the last chunk that are no RIFF header are not counted.
  EXPECT_EQ(parse(ContainerFamily::kAvi, avi.substr(0, 1012), 1012)->bytes, 1008);
  // MP4: ftyp (16), moov (24), mdat (large size 1000); trailing zeros after a whole file are
  // not boxes.
  std::string mp4(std::string("\0\0\0\x10"
                              "ftypisom\0\0\0\0",
                              16) +
                  std::string("\0\0\0\x18"
                              "moov",
                              8) +
                  std::string(16, '\0') +
                  std::string("\0\0\0\x01"
                              "mdat\0\0\0\0\0\0\x03\xE8",
                              16));
  EXPECT_EQ(parse(ContainerFamily::kMp4, mp4, static_cast<int64_t>(mp4.size()))->bytes, 40 + 1000);
  std::string whole_mp4 = mp4 + std::string(1000 - 16, 'x') + std::string(6, '\0');
  EXPECT_EQ(parse(ContainerFamily::kMp4, whole_mp4, static_cast<int64_t>(whole_mp4.size()))->bytes,
            40 + 1000);
  // Ogg: a page of `body` bytes in one segment, with `flags` (2 first page, 4 last page).
  auto page = [](uint8_t flags, uint32_t serial, int body) {
    std::string p("OggS\0", 5);
    p += static_cast<char>(flags);
    p += std::string(8, '\0');  // granule position
    for (int i = 0; i < 4; ++i) p += static_cast<char>((serial >> (8 * i)) & 0xFF);
    p += std::string(8, '\0');  // sequence number, CRC
    p += static_cast<char>(1);  // one segment
    p += static_cast<char>(body);
    return p + std::string(body, 'x');
  };
  const std::string ogg =
      page(2, 7, 30) + page(2, 9, 20) + page(0, 7, 100) + page(4, 9, 0) + page(4, 7, 10);
  const auto ogg_size = static_cast<int64_t>(ogg.size());
  auto whole_ogg = parse(ContainerFamily::kOgg, ogg, ogg_size);
  ASSERT_TRUE(whole_ogg.has_value());
  EXPECT_EQ(whole_ogg->bytes, ogg_size);
  EXPECT_EQ(whole_ogg->open_streams, 0);
  // Cut at the last page: stream 7 never ends. Cut inside it: its header declares the rest.
  const int64_t last_page = ogg_size - 38;
  auto at_page = parse(ContainerFamily::kOgg, ogg.substr(0, last_page), last_page);
  EXPECT_EQ(at_page->bytes, last_page);
  EXPECT_EQ(at_page->open_streams, 1);
  auto mid_page = parse(ContainerFamily::kOgg, ogg.substr(0, ogg_size - 4), ogg_size - 4);
  EXPECT_EQ(mid_page->bytes, ogg_size);
  // Junk between pages is skipped to the next page; junk at the end is trailing bytes.
  const std::string junk_inside = ogg.substr(0, 58) + "junk" + ogg.substr(58);
  auto resynced = parse(ContainerFamily::kOgg, junk_inside, ogg_size + 4);
  EXPECT_EQ(resynced->bytes, ogg_size + 4);
  EXPECT_EQ(resynced->open_streams, 0);
  EXPECT_EQ(parse(ContainerFamily::kOgg, ogg + "tail", ogg_size + 4)->bytes, ogg_size);
  EXPECT_FALSE(parse(ContainerFamily::kOgg, "not an ogg file at all", 22).has_value());
  // Garbage is no header at all.
  EXPECT_FALSE(parse(ContainerFamily::kMp4, std::string(64, '\xff'), 64).has_value());
  EXPECT_FALSE(parse(ContainerFamily::kAvi, std::string(64, 'x'), 64).has_value());
  EXPECT_FALSE(parse(ContainerFamily::kOther, mp4, 64).has_value());
}

// MPEG video elementary streams (.m2v, .mpv) and program streams (.mpg): the probe's duration
// comes from the packet index, not FFmpeg's bit-rate guess or a single timestamp.
TEST(ProbeDurationTest, MpegElementaryAndProgramStreams) {
  struct Case {
    const char* name;
    const char* args;
    FactSource source;
  };
  const std::string src = "-f lavfi -i testsrc=s=160x120:r=25:d=4 ";
  for (const Case& c : {
           Case{"es.m2v", "-c:v mpeg2video -f mpeg2video", FactSource::kPacketIndex},
           Case{"es.mpv", "-c:v mpeg1video -f mpeg1video", FactSource::kPacketIndex},
           Case{"ps.mpg", "-c:v mpeg2video -f vob", FactSource::kPacketIndex},
           Case{"ps.mpeg", "-c:v mpeg1video -f mpeg", FactSource::kPacketIndex},
       }) {
    SCOPED_TRACE(c.name);
    std::string path = GeneratedMedia(std::string("timeline_") + c.name, src + c.args);
    auto info = Probe(path);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    const StreamInfo& v = info->streams[*info->best_video];
    EXPECT_EQ(v.frames, 100);
    EXPECT_NEAR(v.duration_s, 4.0, 0.05);
    EXPECT_EQ(v.duration_source, c.source);
    EXPECT_NEAR(info->duration_s, 4.0, 0.05);
    EXPECT_TRUE(v.constant_rate);
    EXPECT_FALSE(info->truncation.truncated) << info->truncation.reason;
  }
}

// The real file of the issue: an MPEG-1 elementary stream of 162 frames at 30 fps that FFmpeg
// says lasts 0.018 s (gem-doc's alea.mpg).
TEST(ProbeDurationTest, GemAleaMpg) {
  std::string path =
      DebianPackageFile("gem-doc", "usr/share/gem/examples/data/alea.mpg", "alea.mpg");
  if (path.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "gem-doc cannot be fetched (offline?)";
  auto info = Probe(path);
  ASSERT_TRUE(info.ok());
  const StreamInfo& v = info->streams[*info->best_video];
  EXPECT_EQ(v.frames, 162);
  EXPECT_NEAR(v.duration_s, 162 / 30.0, 0.05);
  EXPECT_EQ(v.duration_source, FactSource::kPacketIndex);
}

TEST(TruncatedMp4Test, CutBeforeItsIndexFailsSayingItIsCutShort) {
  // moov at the end: half the file has no index and cannot be read; the error says why.
  std::string whole =
      GeneratedMedia("timeline_moov_last.mp4",
                     "-f lavfi -i testsrc=s=160x120:r=10:d=3 -c:v libx264 -pix_fmt yuv420p");
  const auto size = static_cast<int64_t>(std::filesystem::file_size(whole));
  std::string cut = Head(whole, size / 2, "moov_last.mp4");
  auto probe = Probe(cut);
  ASSERT_FALSE(probe.ok());
  EXPECT_EQ(probe.status().code(), ErrorCode::kCorruptData);
  // The 'mdat' box runs past the end (the 'moov' after it is gone entirely).
  const std::string expected = cut + ": file truncated: the file has " + std::to_string(size / 2) +
                               " bytes, its MP4 box " + "'mdat' declares ";
  EXPECT_EQ(probe.status().message().rfind(expected, 0), 0u) << probe.status().message();
  auto index = BuildFrameIndex(cut);
  ASSERT_FALSE(index.ok());
  EXPECT_NE(index.status().message().find("file truncated"), std::string::npos);
}

TEST(PartialReasonTest, EveryPartialResultSaysWhy) {
  SampleReport r;
  r.requested = 10;
  EXPECT_FALSE(r.partial());
  EXPECT_EQ(r.PartialReason(), "");
  r.truncated = true;
  r.truncation = "the file has 10 bytes, its Matroska segment declares 20 (10 missing)";
  EXPECT_EQ(r.PartialReason(),
            "file truncated: the file has 10 bytes, its Matroska segment declares 20 (10 missing)");
  r = {};
  r.requested = 10;
  r.missing = {3, 4};
  EXPECT_EQ(r.PartialReason(), "2 of 10 chosen frames could not be decoded");
  r.decode_errors = 5;
  EXPECT_EQ(r.PartialReason(), "2 of 10 chosen frames could not be decoded; 5 decoding errors");
  r.missing.clear();
  EXPECT_TRUE(r.partial());
  EXPECT_EQ(r.PartialReason(), "5 decoding errors");
}

}  // namespace
}  // namespace reel::pipeline
