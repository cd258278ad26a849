// Every frame Reel delivers is the picture FFmpeg's own decoder gives for that frame when it
// decodes the whole stream from its start, in presentation order: for every sampling policy, on
// one decoder or several, and where the container's keyframe flags and times mislead (keyframes a
// decoder cannot start from, decode times stored as presentation times, packed B-frames) or the
// decoder needs what only the stream's first packet says. Generated clips show their own frame
// number (tests/support/test_media.h); real files from Debian packages are compared with ffmpeg's
// decode pixel by pixel. A damaged picture is never delivered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "pipeline/frame_index.h"
#include "pipeline/frame_sampler.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_environment.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using reel::testing::CounterClipArgs;
using reel::testing::DecodeCounter;
using reel::testing::GeneratedMedia;
using reel::testing::RunCommand;
using reel::testing::ShellQuote;

struct Sampled {
  std::vector<SampledFrame> frames;  // by index
  SampleReport report;
};

struct Policy {
  std::string name;
  std::function<void(SamplingOptions&)> set;
};

const Policy kPolicies[] = {
    {"fps 1", [](SamplingOptions& s) { s.policy = SamplingPolicy::kFps; }},
    {"count 9",
     [](SamplingOptions& s) {
       s.policy = SamplingPolicy::kCount;
       s.count = 9;
     }},
    {"keyframes", [](SamplingOptions& s) { s.policy = SamplingPolicy::kKeyframes; }},
    {"timestamps",
     [](SamplingOptions& s) {
       s.policy = SamplingPolicy::kTimestamps;
       s.timestamps = {0.5, 1.7, 3.3, 5.9};
     }},
};

Sampled Sample(const std::string& path, const Policy& policy, int threads, ResizeMode resize) {
  SampleOptions options;
  policy.set(options.sampling);
  options.resize.mode = resize;
  options.limits.decoder_threads = threads;
  Sampled run;
  Result<SampleReport> report = SampleVideo(path, options, [&](SampledFrame&& f) {
    run.frames.push_back(std::move(f));
    return Status::Ok();
  });
  EXPECT_TRUE(report.ok()) << policy.name << ", threads " << threads << ": "
                           << report.status().ToString();
  if (report.ok()) run.report = *report;
  // Frames decoded a second time arrive after the others.
  std::sort(run.frames.begin(), run.frames.end(),
            [](const SampledFrame& a, const SampledFrame& b) { return a.index < b.index; });
  return run;
}

std::string FfmpegRgb(const std::string& path, const std::string& filters) {
  auto out = RunCommand("ffmpeg -nostdin -loglevel error -i " + ShellQuote(path) +
                        " -map 0:v:0 -fps_mode passthrough" +
                        (filters.empty() ? "" : " -vf " + ShellQuote(filters)) +
                        " -f rawvideo -pix_fmt rgb24 -");
  EXPECT_EQ(out.exit_code, 0) << out.err;
  return out.out;
}

// The frame number each picture FFmpeg decodes shows, in its output (presentation) order.
std::vector<int> FfmpegCounters(const std::string& path, int width, int height) {
  const std::string rgb = FfmpegRgb(path, "");
  const size_t size = static_cast<size_t>(width) * height * 3;
  std::vector<int> shown;
  for (size_t at = 0; at + size <= rgb.size(); at += size) {
    shown.push_back(DecodeCounter(reinterpret_cast<const unsigned char*>(rgb.data() + at), width,
                                  height, width * 3));
  }
  return shown;
}

struct Clip {
  std::string name;
  int frames;
  std::string encode;
  // Every frame lasts 1/25 s (libxvid in AVI starts with empty "drop frame" chunks, which hold
  // the first picture longer).
  bool constant_rate = true;
};

void PrintTo(const Clip& c, std::ostream* os) { *os << c.name; }

class DecodeOrderTest : public ::testing::TestWithParam<Clip> {};

// Each delivered frame shows what FFmpeg's decoder shows for that source frame; nothing is missing
// or damaged; one decoder and several give the same; times follow the frames at the clip's rate.
TEST_P(DecodeOrderTest, FramesAreWhatFfmpegDecodesThere) {
  const Clip& clip = GetParam();
  const std::string path =
      GeneratedMedia(clip.name, CounterClipArgs(clip.frames, 160, 120, "25") + " " + clip.encode);
  ASSERT_FALSE(path.empty());
  const std::vector<int> shown = FfmpegCounters(path, 160, 120);
  ASSERT_GT(shown.size(), 50u);
  for (const Policy& policy : kPolicies) {
    std::vector<std::vector<int>> chosen;
    for (int threads : {1, 3}) {
      SCOPED_TRACE(policy.name + ", threads " + std::to_string(threads));
      Sampled run = Sample(path, policy, threads, ResizeMode::kNone);
      EXPECT_TRUE(run.report.missing.empty());
      EXPECT_EQ(run.report.decode_errors, 0);
      EXPECT_EQ(run.report.source_frames, static_cast<int>(shown.size()));
      ASSERT_FALSE(run.frames.empty());
      chosen.emplace_back();
      for (const SampledFrame& f : run.frames) {
        ASSERT_LT(f.source_frame, static_cast<int>(shown.size()));
        EXPECT_EQ(DecodeCounter(f.image.pixels.data(), f.image.width, f.image.height,
                                static_cast<int>(f.image.stride())),
                  shown[f.source_frame])
            << "source frame " << f.source_frame;
        if (clip.constant_rate) {
          EXPECT_NEAR(f.time_s, f.source_frame / 25.0, 1e-6) << "source frame " << f.source_frame;
        }
        if (!chosen.back().empty()) {
          EXPECT_GT(f.time_s, run.frames[chosen.back().size() - 1].time_s);
        }
        chosen.back().push_back(f.source_frame);
      }
    }
    EXPECT_EQ(chosen[0], chosen[1]) << policy.name << ": one decoder and three choose the same";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Clips, DecodeOrderTest,
    ::testing::Values(
        // Intra refresh: keyframes are recovery points that refresh the picture over 25 frames,
        // so a decoder starting at one has nothing right to show for a while; several runs on
        // one decoder must not reuse each other's pictures either.
        Clip{"counter_h264_intra_refresh.mkv", 200,
             "-c:v libx264 -x264-params intra-refresh=1:keyint=25 -pix_fmt yuv420p"},
        // Open GOP with the recovery point SEIs removed: I-frames flagged key in the container
        // that a decoder cannot start from.
        Clip{"counter_h264_open_gop_no_sei.mkv", 200,
             "-c:v libx264 -bf 3 -g 24 -x264-params open-gop=1:scenecut=0 -pix_fmt yuv420p "
             "-bsf:v filter_units=remove_types=6"},
        // B-frames in MP4 without composition offsets (presentation times = decode times), as
        // old VLC wrote: the decoder's output order is the truth.
        Clip{"counter_h264_no_ctts.mp4", 200,
             "-c:v libx264 -bf 3 -g 50 -pix_fmt yuv420p "
             "-bsf:v setts=pts=DTS-STARTDTS:dts=DTS-STARTDTS"},
        Clip{"counter_hevc_no_ctts.mp4", 150,
             "-c:v libx265 -x265-params bframes=4:keyint=50:scenecut=0:log-level=error "
             "-tag:v hvc1 -pix_fmt yuv420p -bsf:v setts=pts=DTS-STARTDTS:dts=DTS-STARTDTS"},
        Clip{"counter_mpeg4_no_ctts.mp4", 200,
             "-c:v mpeg4 -bf 2 -g 50 -q:v 3 -bsf:v setts=pts=DTS-STARTDTS:dts=DTS-STARTDTS"},
        Clip{"counter_mpeg2_no_ctts.mp4", 200,
             "-c:v mpeg2video -bf 2 -g 25 -q:v 3 -bsf:v setts=pts=DTS-STARTDTS:dts=DTS-STARTDTS"},
        // AVI stores no presentation times; FFmpeg guesses them in decode order for H.264.
        Clip{"counter_h264_b.avi", 200, "-c:v libx264 -bf 3 -g 50 -pix_fmt yuv420p"},
        // Xvid in AVI with B-frames: packed bitstream (a B-VOP behind a P-VOP in one packet,
        // N-VOP placeholders), no presentation times.
        Clip{"counter_xvid_packed.avi", 200, "-c:v libxvid -bf 2 -g 30 -q:v 4",
             /*constant_rate=*/false}),
    [](const ::testing::TestParamInfo<Clip>& info) {
      std::string n = info.param.name;
      for (char& c : n) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return n;
    });

// The index says where those clips' pictures really are.
TEST(DecodeOrderTest, IndexTakesOrderAndStartPointsFromTheBitstream) {
  const std::string no_ctts = GeneratedMedia("counter_h264_no_ctts.mp4",
                                             CounterClipArgs(200, 160, 120, "25") +
                                                 " -c:v libx264 -bf 3 -g 50 -pix_fmt yuv420p "
                                                 "-bsf:v setts=pts=DTS-STARTDTS:dts=DTS-STARTDTS");
  auto index = BuildFrameIndex(no_ctts);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(index->order_source, "h264");
  EXPECT_EQ(index->size(), 200);
  bool reordered = false;
  for (int i = 0; i < index->size(); ++i) {
    EXPECT_EQ(index->frames[i].pts, i * 512);  // 25 fps in MP4's 1/12800
    if (i > 0 && index->frames[i].packet < index->frames[i - 1].packet) reordered = true;
  }
  EXPECT_TRUE(reordered) << "B-frames are shown before the pictures decoded ahead of them";
  EXPECT_FALSE(index->priming_packet.empty());

  const std::string packed =
      GeneratedMedia("counter_xvid_packed.avi",
                     CounterClipArgs(200, 160, 120, "25") + " -c:v libxvid -bf 2 -g 30 -q:v 4");
  index = BuildFrameIndex(packed);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_TRUE(index->packed_bframes);
  EXPECT_EQ(index->order_source, "mpeg4-packed");

  const std::string no_sei = GeneratedMedia(
      "counter_h264_open_gop_no_sei.mkv",
      CounterClipArgs(200, 160, 120, "25") +
          " -c:v libx264 -bf 3 -g 24 -x264-params open-gop=1:scenecut=0 -pix_fmt yuv420p "
          "-bsf:v filter_units=remove_types=6");
  index = BuildFrameIndex(no_sei);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  int keyframes = 0;
  for (const IndexedFrame& f : index->frames) keyframes += f.keyframe ? 1 : 0;
  EXPECT_EQ(keyframes, 1) << "only the IDR at the start is a point decoding can start from";
}

// One damaged B-frame (nothing refers to it): the decoder conceals the errors and flags the
// picture. It is decoded again from earlier start points, stays damaged, and is reported missing,
// never delivered; every other frame is delivered and shows its own number.
TEST(DecodeOrderTest, DamagedPicturesAreReportedMissingNotDelivered) {
  const std::string source = GeneratedMedia(
      "counter_h264_nonref_b.mp4", CounterClipArgs(100, 160, 120, "25") +
                                       " -c:v libx264 -bf 3 -g 50 -x264-params b-pyramid=0 "
                                       "-pix_fmt yuv420p");
  ASSERT_FALSE(source.empty());
  // A B-frame: shown before the packet decoded ahead of it.
  auto probe = RunCommand(
      "ffprobe -v error -select_streams v -show_entries packet=pts,pos,size "
      "-of csv=p=0 " +
      ShellQuote(source));
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  std::istringstream lines(probe.out);
  std::string line;
  int64_t previous_pts = 0, pos = -1, size = 0;
  int packet = -1;
  for (int i = 0; std::getline(lines, line); ++i) {
    int64_t pts = 0, at = 0, bytes = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%" SCNd64 ",%" SCNd64 ",%" SCNd64, &pts, &bytes, &at), 3)
        << line;
    if (i >= 20 && pts < previous_pts && bytes >= 20) {
      packet = i;
      pos = at;
      size = bytes;
      break;
    }
    previous_pts = pts;
  }
  ASSERT_GE(packet, 0);
  std::ifstream in(source, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), {});
  for (int64_t i = pos + 12; i < pos + size; ++i) file[i] ^= 0x5A;  // keep the slice header
  const std::string path = reel::testing::ScratchDir("DamagedPicture") + "/damaged.mp4";
  std::ofstream(path, std::ios::binary) << file;
  auto index = BuildFrameIndex(path);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  const int damaged = index->packets[packet].frame;
  ASSERT_GE(damaged, 0);

  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    SampleOptions options;
    options.sampling.policy = SamplingPolicy::kFps;
    options.sampling.fps = 25;  // every frame
    options.limits.decoder_threads = threads;
    std::vector<int> delivered;
    Result<SampleReport> report = SampleVideo(path, options, [&](SampledFrame&& f) {
      delivered.push_back(f.source_frame);
      EXPECT_EQ(DecodeCounter(f.image.pixels.data(), f.image.width, f.image.height,
                              static_cast<int>(f.image.stride())),
                f.source_frame);
      return Status::Ok();
    });
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->missing, std::vector<int>{damaged});
    EXPECT_EQ(delivered.size(), 99u);
    EXPECT_EQ(std::count(delivered.begin(), delivered.end(), damaged), 0);
    EXPECT_GT(report->decode_errors, 0);
    EXPECT_TRUE(report->partial());
  }
}

// Real files. Each frame is compared with FFmpeg's decode of the frame it claims to be and of
// that frame's neighbours, at the same size: it must be close to its own and no farther from it
// than from a neighbour.
void ExpectMatchesFfmpeg(const std::string& path) {
  std::vector<std::pair<std::string, Sampled>> runs;
  std::set<int> wanted;
  // Every policy on as many decoders as there are cores, and one (sequential) for the two with
  // most frames.
  std::vector<std::pair<const Policy*, int>> cases;
  for (const Policy& policy : kPolicies) cases.emplace_back(&policy, 0);
  cases.emplace_back(&kPolicies[0], 1);
  cases.emplace_back(&kPolicies[1], 1);
  for (const auto& [policy_ptr, threads] : cases) {
    const Policy& policy = *policy_ptr;
    {
      Sampled run = Sample(path, policy, threads, ResizeMode::kSmart);
      EXPECT_TRUE(run.report.missing.empty()) << policy.name << ", threads " << threads;
      EXPECT_EQ(run.report.decode_errors, 0) << policy.name << ", threads " << threads;
      for (const SampledFrame& f : run.frames) {
        for (int k = f.source_frame - 1; k <= f.source_frame + 1; ++k) {
          if (k >= 0 && k < run.report.source_frames) wanted.insert(k);
        }
      }
      runs.emplace_back(policy.name + ", threads " + std::to_string(threads), std::move(run));
    }
  }
  ASSERT_FALSE(runs.empty());
  ASSERT_FALSE(runs.front().second.frames.empty());
  const Image& any = runs.front().second.frames.front().image;
  std::string select;
  for (int k : wanted)
    select += (select.empty() ? "" : "+") + ("eq(n\\," + std::to_string(k) + ")");
  const std::string rgb =
      FfmpegRgb(path, "select='" + select + "',scale=" + std::to_string(any.width) + ":" +
                          std::to_string(any.height) + ":flags=bicubic");
  const size_t size = any.pixels.size();
  ASSERT_EQ(rgb.size(), size * wanted.size()) << "ffmpeg decoded fewer frames";
  std::map<int, const char*> reference;
  size_t at = 0;
  for (int k : wanted) {
    reference[k] = rgb.data() + at;
    at += size;
  }
  auto difference = [&](const Image& image, int k) {
    const char* frame = reference.at(k);  // looked up once, not per pixel (test code is -O0)
    double total = 0;
    for (size_t i = 0; i < size; ++i) {
      total += std::abs(static_cast<int>(image.pixels[i]) -
                        static_cast<int>(static_cast<unsigned char>(frame[i])));
    }
    return total / size;
  };
  for (const auto& [what, run] : runs) {
    for (const SampledFrame& f : run.frames) {
      ASSERT_EQ(f.image.pixels.size(), size);
      const double own = difference(f.image, f.source_frame);
      EXPECT_LT(own, 6.0) << what << ": source frame " << f.source_frame;
      for (int k : {f.source_frame - 1, f.source_frame + 1}) {
        if (reference.count(k) == 0) continue;
        EXPECT_LE(own, difference(f.image, k) + 0.25)
            << what << ": source frame " << f.source_frame << " looks like frame " << k;
      }
    }
  }
}

// H.264 High 4:4:4 from x264 core 142: FFmpeg works around that build's 4:4:4 bugs only after
// seeing its version SEI in the first access unit, so a decoder starting at a later IDR without
// it conceals errors everywhere.
TEST(RealFileDecodeOrderTest, X264VersionFromTheFirstPacketReachesEveryDecoder) {
  const std::string path = reel::testing::DebianPackageFile(
      "python3-imageio", "usr/lib/python3/dist-packages/imageio/resources/images/cockatoo.mp4",
      "cockatoo.mp4");
  if (path.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "cannot fetch python3-imageio (offline?)";
  ExpectMatchesFfmpeg(path);
}

// Xvid with packed B-frames in AVI.
TEST(RealFileDecodeOrderTest, PackedBFramesAreUnpacked) {
  const std::string path = reel::testing::DebianPackageFile(
      "opencv-doc", "usr/share/doc/opencv-doc/examples/data/Megamind.avi", "Megamind.avi");
  if (path.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "cannot fetch opencv-doc (offline?)";
  ExpectMatchesFfmpeg(path);
}

// H.264 with B-frames in MP4 without composition offsets (VLC 2.1.4).
TEST(RealFileDecodeOrderTest, DecodeTimesStoredAsPresentationTimes) {
  const std::string path = reel::testing::DebianPackageFile(
      "opencv-doc", "usr/share/doc/opencv-doc/opencv4/html/box.mp4.gz", "box.mp4");
  if (path.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "cannot fetch opencv-doc (offline?)";
  ExpectMatchesFfmpeg(path);
}

}  // namespace
}  // namespace reel::pipeline
