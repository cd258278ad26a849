// `reel` on files whose frame timeline the container gets wrong: dropped-frame AVI (whole, not
// "truncated"), variable-rate video (--fps-timeline, `sampling.fps_timeline`), Matroska/WebM
// cut short (truncated, with how much is missing, in report.json, `reel probe` and the runner's
// warning), and MPEG elementary streams (durations and plan estimates from the packet index).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

nlohmann::json ReadJson(const std::string& path) { return nlohmann::json::parse(ReadText(path)); }

// 3 s of VP8 at 10 fps, cut after `percent`% of its bytes.
std::string CutWebm(const std::string& dir, int percent, int64_t* whole_size = nullptr) {
  std::string whole = GeneratedMedia("cli_timeline.webm",
                                     "-f lavfi -i testsrc=s=160x120:r=10:d=3 -c:v libvpx "
                                     "-b:v 200k -g 5");
  std::string bytes = ReadText(whole);
  if (whole_size != nullptr) *whole_size = static_cast<int64_t>(bytes.size());
  std::string path = dir + "/cut" + std::to_string(percent) + ".webm";
  WriteText(path, bytes.substr(0, bytes.size() * percent / 100));
  return path;
}

// 30 frames at 10 fps with frames 3 and 7 dropped (empty AVI index entries in their slots).
std::string DroppedFrameAvi() {
  return GeneratedMedia("cli_dropped.avi",
                        "-f lavfi -i testsrc=s=160x120:r=10:d=3 "
                        "-vf \"select='not(eq(n\\,3)+eq(n\\,7))'\" -fps_mode passthrough "
                        "-c:v mpeg4 -g 6");
}

// 10 fps for 2 s, nothing until 8 s, 10 fps to 10 s (average rate 4 fps).
std::string StillStretchMp4() {
  return GeneratedMedia("cli_still.mp4",
                        "-f lavfi -i testsrc=s=160x120:r=10:d=10 "
                        "-vf \"select='lt(t\\,2)+gte(t\\,8)'\" -fps_mode vfr -c:v libx264 "
                        "-pix_fmt yuv420p");
}

std::string MpegElementaryStream() {
  return GeneratedMedia("cli_es.mpv",
                        "-f lavfi -i testsrc=s=160x120:r=25:d=4 -c:v mpeg1video -f mpeg1video");
}

TEST(TimelineCommandTest, DroppedFrameAviIsWhole) {
  std::string dir = ScratchDir("DroppedAvi");
  CommandResult r = Reel("frames " + ShellQuote(DroppedFrameAvi()) + " -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json report = ReadJson(dir + "/out/report.json");
  EXPECT_FALSE(report["partial"].get<bool>());
  EXPECT_FALSE(report["truncated"].get<bool>());
  EXPECT_EQ(report["partial_reason"], "");
  EXPECT_EQ(report["source_frames"], 28);
  r = Reel("probe " + ShellQuote(DroppedFrameAvi()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("truncated"), std::string::npos) << r.out;
}

TEST(TimelineCommandTest, CutWebmIsTruncatedWithHowMuchIsMissing) {
  std::string dir = ScratchDir("CutWebm");
  int64_t size = 0;
  std::string cut = CutWebm(dir, 17, &size);
  const int64_t missing = size - size * 17 / 100;
  CommandResult r = Reel("frames " + cut + " -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("partial result: file truncated: "), std::string::npos) << r.err;
  nlohmann::json report = ReadJson(dir + "/out/report.json");
  EXPECT_TRUE(report["partial"].get<bool>());
  EXPECT_TRUE(report["truncated"].get<bool>());
  EXPECT_EQ(report["missing_bytes"], missing);
  EXPECT_GT(report["missing_s"].get<double>(), 2.0);
  EXPECT_NE(report["partial_reason"].get<std::string>().find("Matroska segment"),
            std::string::npos);

  r = Reel("probe " + cut);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("  truncated: the file has " + std::to_string(size * 17 / 100) + " bytes"),
            std::string::npos)
      << r.out;
  r = Reel("probe --json " + cut);
  EXPECT_EQ(r.exit_code, 3);
  nlohmann::json probe = nlohmann::json::parse(r.out);
  EXPECT_TRUE(probe["truncated"].get<bool>());
  EXPECT_EQ(probe["missing_bytes"], missing);
  EXPECT_GT(probe["missing_s"].get<double>(), 2.0);
}

TEST(TimelineCommandTest, FpsTimelineFlag) {
  std::string dir = ScratchDir("FpsTimelineFlag");
  std::string still = ShellQuote(StillStretchMp4());
  CommandResult r = Reel("frames " + still + " --fps 1 -o " + dir + "/auto");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json report = ReadJson(dir + "/auto/report.json");
  EXPECT_EQ(report["fps_timeline"], "time");
  std::vector<double> times;
  for (const auto& f : ReadJson(dir + "/auto/frames.json")) times.push_back(f["time_s"]);
  ASSERT_EQ(times.size(), 5u);
  EXPECT_NEAR(times[2], 8.0, 1e-6);

  r = Reel("frames " + still + " --fps 1 --fps-timeline index -o " + dir + "/index");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadJson(dir + "/index/report.json")["fps_timeline"], "index");
  EXPECT_EQ(ReadJson(dir + "/index/frames.json").size(), 11u);

  EXPECT_EQ(Reel("frames " + still + " --fps-timeline pts -o " + dir + "/x").exit_code, 2);
  r = Reel("frames " + still + " --count 3 --fps-timeline time -o " + dir + "/y");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--fps-timeline applies to --fps only"), std::string::npos) << r.err;
  r = Reel("frames --help");
  EXPECT_NE(r.out.find("--fps-timeline"), std::string::npos);
}

TEST(TimelineCommandTest, ElementaryStreamDurationAndPlanEstimate) {
  std::string es = MpegElementaryStream();
  CommandResult r = Reel("probe --json " + ShellQuote(es));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json probe = nlohmann::json::parse(r.out);
  EXPECT_NEAR(probe["duration_s"].get<double>(), 4.0, 0.05);
  EXPECT_EQ(probe["streams"][0]["duration_source"], "packet_index");

  std::string dir = ScratchDir("EsPlan");
  fs::create_directories(dir + "/media");
  fs::copy_file(es, dir + "/media/clip.mpv");
  WriteText(dir + "/job.yaml", "name: es\ninputs:\n  - {path: media/clip.mpv, kind: video}\n");
  r = Reel("plan job.yaml --format json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["est_frames"], 5);  // 0, 1, 2, 3 s and the last frame
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  EXPECT_EQ(QueryInt(dir + "/es.db", "SELECT COUNT(*) FROM frames"), 5);
}

TEST(TimelineRunTest, SettingReachesValidatePlanHashAndRunner) {
  std::string dir = ScratchDir("TimelineRun");
  fs::create_directories(dir + "/media");
  fs::copy_file(StillStretchMp4(), dir + "/media/still.mp4");
  CutWebm(dir + "/media", 30);
  WriteText(dir + "/job.yaml", "name: tl\ninputs: [media]\n");

  CommandResult r = Reel("validate job.yaml", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  fps_timeline: auto\n"), std::string::npos) << r.out;

  r = Reel("plan job.yaml --format json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, nlohmann::json> estimate;
  for (const auto& row : nlohmann::json::parse(r.out)) {
    estimate[fs::path(row["path"].get<std::string>()).filename().string()] = row["est_frames"];
  }
  EXPECT_EQ(estimate["still.mp4"], 11);  // the time rule's bound: 10 s at 1 fps, and the last

  // The run: the cut file is done, with a warning that says it is truncated and by how much.
  r = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("\"event\":\"warning\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cut30.webm: partial sample: file truncated: the file has"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(QueryInt(dir + "/tl.db",
                     "SELECT COUNT(*) FROM events WHERE level = 'warning' AND message LIKE "
                     "'%cut30.webm: partial sample: file truncated:%missing)%'"),
            1);
  EXPECT_EQ(QueryInt(dir + "/tl.db",
                     "SELECT COUNT(*) FROM frames JOIN items ON items.id = frames.item_id "
                     "WHERE items.path LIKE '%still.mp4'"),
            5);
  nlohmann::json media = nlohmann::json::parse(
      QueryJson(dir + "/tl.db",
                "SELECT media_json FROM items WHERE path LIKE '%cut30.webm'")[0]["media_json"]
          .get<std::string>());
  EXPECT_TRUE(media["sample"]["truncated"].get<bool>()) << media.dump();
  EXPECT_GT(media["sample"]["missing_bytes"].get<int64_t>(), 0);

  // fps_timeline: index: a settings change for the videos, and the estimate follows.
  WriteText(dir + "/job.yaml", "name: tl\ninputs: [media]\nsampling:\n  fps_timeline: index\n");
  r = Reel("validate job.yaml", dir);
  EXPECT_NE(r.out.find("  fps_timeline: index\n"), std::string::npos) << r.out;
  r = Reel("plan job.yaml --format json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& row : nlohmann::json::parse(r.out)) {
    EXPECT_EQ(row["action"], "process") << row.dump();
    EXPECT_EQ(row["reason"], "settings changed") << row.dump();
    if (row["path"].get<std::string>().ends_with("still.mp4")) {
      EXPECT_EQ(row["est_frames"], 11);
    }
  }
  r = Reel("run job.yaml", dir);
  EXPECT_EQ(QueryInt(dir + "/tl.db",
                     "SELECT COUNT(*) FROM frames JOIN items ON items.id = frames.item_id "
                     "WHERE items.path LIKE '%still.mp4'"),
            11);

  // A value that is not one of the three, and the key with another policy.
  WriteText(dir + "/bad.yaml", "name: tl\ninputs: [media]\nsampling:\n  fps_timeline: pts\n");
  r = Reel("validate bad.yaml", dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.yaml:4:17: 'sampling.fps_timeline' must be one of"), std::string::npos)
      << r.err;
  WriteText(dir + "/warn.yaml",
            "name: tl\ninputs: [media]\nsampling:\n  policy: count\n  fps_timeline: time\n");
  r = Reel("validate warn.yaml", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("'sampling.fps_timeline' has no effect with policy 'count'"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace reel::testing
