// Probe facts on generated clips whose truth is known by construction.
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "pipeline/frame_index.h"
#include "pipeline/probe.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using reel::testing::GeneratedMedia;
using reel::testing::RunCommand;
using reel::testing::ShellQuote;

// One field of the first video stream as ffprobe prints it ("r_frame_rate" -> "1000/1").
std::string FfprobeField(const std::string& path, const std::string& field) {
  auto r = RunCommand("ffprobe -v error -select_streams v:0 -show_entries stream=" + field +
                      " -of default=nw=1:nk=1 " + ShellQuote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string value = r.out;
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
  return value;
}

// The presentation times (seconds) of the first video stream's packets, as ffprobe lists them.
std::vector<double> FfprobePacketTimes(const std::string& path) {
  auto r = RunCommand(
      "ffprobe -v error -select_streams v:0 -show_entries packet=pts_time "
      "-of default=nw=1:nk=1 " +
      ShellQuote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<double> times;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line != "N/A") times.push_back(std::stod(line));
  }
  return times;
}

const StreamInfo* FirstOf(const MediaInfo& info, StreamType type) {
  for (const StreamInfo& s : info.streams) {
    if (s.type == type) return &s;
  }
  return nullptr;
}

TEST(ProbeTest, DescribesEveryStream) {
  std::string srt = reel::testing::ScratchDir("ProbeTest") + "/subs.srt";
  FILE* f = std::fopen(srt.c_str(), "w");
  std::fputs("1\n00:00:00,500 --> 00:00:01,500\nhello\n", f);
  std::fclose(f);
  std::string path = GeneratedMedia(
      "av_subs.mp4",
      "-f lavfi -i testsrc2=s=320x240:r=25:d=3 -f lavfi -i sine=f=440:d=3:sample_rate=48000 -i " +
          srt +
          " -map 0 -map 1 -map 2 -c:v libx264 -pix_fmt yuv420p -c:a aac -c:s mov_text "
          "-metadata:s:s:0 language=eng");
  auto info = Probe(path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_NE(info->format.find("mp4"), std::string::npos);
  ASSERT_EQ(info->streams.size(), 3u);
  const StreamInfo* v = FirstOf(*info, StreamType::kVideo);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->codec, "h264");
  EXPECT_EQ(v->width, 320);
  EXPECT_EQ(v->height, 240);
  EXPECT_DOUBLE_EQ(v->fps, 25.0);
  EXPECT_EQ(v->frames, 75);
  EXPECT_EQ(v->frames_source, FactSource::kPacketIndex);
  EXPECT_NEAR(v->duration_s, 3.0, 1e-6);
  EXPECT_EQ(v->rotation, 0);
  const StreamInfo* a = FirstOf(*info, StreamType::kAudio);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->codec, "aac");
  EXPECT_EQ(a->sample_rate, 48000);
  EXPECT_EQ(a->audio_channels, 1);
  const StreamInfo* s = FirstOf(*info, StreamType::kSubtitle);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->codec, "mov_text");
  EXPECT_EQ(s->language, "eng");
  EXPECT_NEAR(info->duration_s, 3.0, 0.05);
  EXPECT_EQ(info->best_video, 0);
}

TEST(ProbeTest, CountsFramesFromPacketsWhenTheContainerDoesNotSay) {
  // Matroska keeps no frame count; 42 frames at 7 fps, with B-frames.
  std::string path = GeneratedMedia(
      "count42.mkv", "-f lavfi -i testsrc2=s=64x48:r=7 -frames:v 42 -c:v libx264 -bf 2");
  auto info = Probe(path);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->streams[0].frames, 42);
  EXPECT_EQ(info->streams[0].frames_source, FactSource::kPacketIndex);
  EXPECT_NEAR(info->streams[0].duration_s, 6.0, 0.01);
}

TEST(ProbeTest, RawStreamsGetDurationFromThePacketIndex) {
  // An MPEG-TS file has no header duration for its streams in some cases, and a raw H.264
  // elementary stream has none at all.
  std::string path = GeneratedMedia("raw.h264",
                                    "-f lavfi -i testsrc2=s=64x48:r=10 -frames:v 30 -c:v libx264 "
                                    "-bsf:v h264_mp4toannexb -f h264");
  auto info = Probe(path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->streams[0].frames, 30);
}

TEST(ProbeTest, NonZeroStartAndRotation) {
  std::string base =
      GeneratedMedia("plain.mp4", "-f lavfi -i testsrc2=s=64x48:r=10 -frames:v 20 -c:v libx264");
  std::string path =
      GeneratedMedia("shifted_rotated.mp4",
                     "-i " + base + " -c copy -output_ts_offset 8.5 -metadata:s:v:0 rotate=90");
  auto info = Probe(path);
  ASSERT_TRUE(info.ok());
  const StreamInfo& v = info->streams[0];
  EXPECT_NEAR(v.start_s, 8.5, 0.01);
  EXPECT_NE(v.rotation, 0);
  EXPECT_EQ(v.display_width, 48);
  EXPECT_EQ(v.display_height, 64);
}

TEST(ProbeTest, RateOfAFewFramesComesFromThePacketsWhenFfmpegHasNoAverage) {
  // Two WMV frames one second apart over 2 s: ffprobe says r_frame_rate 1000/1 (the ASF time
  // base's tick) and avg_frame_rate 0/0. The packets say 1 fps.
  std::string path =
      GeneratedMedia("two_frames.wmv", "-f lavfi -i testsrc=s=160x120:r=1:d=2 -c:v wmv2");
  ASSERT_EQ(FfprobeField(path, "r_frame_rate"), "1000/1");
  ASSERT_EQ(FfprobeField(path, "avg_frame_rate"), "0/0");
  std::vector<double> times = FfprobePacketTimes(path);
  ASSERT_EQ(times.size(), 2u);
  const double measured = 1.0 / (times[1] - times[0]);
  auto info = Probe(path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_TRUE(info->best_video.has_value());
  const StreamInfo& v = info->streams[*info->best_video];
  EXPECT_EQ(v.frames, 2);
  EXPECT_NEAR(v.fps, measured, 1e-9);
  EXPECT_NEAR(v.fps, 1.0, 1e-9);
  auto index = BuildFrameIndex(path);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_NEAR(index->avg_fps, 1.0, 1e-9);
  EXPECT_NEAR(index->duration_s(), 2.0, 1e-9);  // the last frame lasts one frame of the rate
}

TEST(ProbeTest, APacketWithoutAPictureIsNotAFrame) {
  // Eleven MPEG-4 pictures and a 5-byte twelfth packet: a VOP that is not coded (vop_coded 0),
  // for which FFmpeg's decoder outputs nothing. ffprobe: 12 packets, 11 frames read.
  std::string coded =
      GeneratedMedia("eleven.m4v", "-f lavfi -i testsrc=s=64x48:r=2:d=5.5 -c:v mpeg4 -bf 0 -f m4v");
  ASSERT_FALSE(coded.empty());
  const std::string dir = reel::testing::ScratchDir("ProbeTestNotCoded");
  const std::string raw = dir + "/twelve.m4v";
  ASSERT_EQ(RunCommand("cp " + ShellQuote(coded) + " " + ShellQuote(raw) +
                       " && printf '\\000\\000\\001\\266\\134' >> " + ShellQuote(raw))
                .exit_code,
            0);
  for (const char* container : {"avi", "mp4"}) {
    SCOPED_TRACE(container);
    const std::string path = dir + "/twelve." + container;
    auto made = RunCommand("ffmpeg -v error -y -r 2 -i " + ShellQuote(raw) + " -c copy " +
                           ShellQuote(path));
    ASSERT_EQ(made.exit_code, 0) << made.err;
    ASSERT_EQ(FfprobeField(path, "nb_read_packets -count_packets"), "12");
    const std::string decoded = FfprobeField(path, "nb_read_frames -count_frames");
    ASSERT_EQ(decoded, "11");
    auto info = Probe(path);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->streams[0].frames, std::stoi(decoded));
    auto index = BuildFrameIndex(path);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ(index->size(), std::stoi(decoded));
    EXPECT_EQ(index->packets.size(), 12u);
  }
}

TEST(ProbeTest, AudioOnlyFileHasNoBestVideo) {
  std::string path = GeneratedMedia("tone.m4a", "-f lavfi -i sine=d=1 -c:a aac");
  auto info = Probe(path);
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->best_video.has_value());
}

}  // namespace
}  // namespace reel::pipeline
