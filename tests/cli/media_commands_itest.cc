// `reel probe` and `reel frames` end to end: the built binary on generated media.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel {
namespace {

using reel::testing::GeneratedMedia;
using reel::testing::RunCommand;
using reel::testing::ShellQuote;

std::string ReelCommandLine(const std::string& args) {
  return std::string(REEL_BINARY) + " " + args;
}

std::string Clip() {
  return GeneratedMedia("cli_clip.mp4",
                        "-f lavfi -i testsrc2=s=640x360:r=30:d=4 -c:v libx264 -pix_fmt yuv420p");
}

TEST(ProbeCommandTest, JsonHasTheDocumentedFields) {
  auto r = RunCommand(ReelCommandLine("probe --json " + ShellQuote(Clip())));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"path", "format", "duration_s", "start_s", "streams"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  ASSERT_EQ(j["streams"].size(), 1u);
  const auto& v = j["streams"][0];
  EXPECT_EQ(v["index"], 0);
  EXPECT_EQ(v["type"], "video");
  EXPECT_EQ(v["codec"], "h264");
  EXPECT_EQ(v["width"], 640);
  EXPECT_EQ(v["height"], 360);
  EXPECT_DOUBLE_EQ(v["fps"].get<double>(), 30.0);
  EXPECT_EQ(v["rotation"], 0);
  EXPECT_EQ(v["frames"], 120);
  EXPECT_NEAR(j["duration_s"].get<double>(), 4.0, 0.01);
}

std::string DvdClip() {
  return GeneratedMedia("cli_dvd.mpg",
                        "-f lavfi -i testsrc2=s=720x480:r=30000/1001:d=2 -vf setsar=32/27 "
                        "-c:v mpeg2video -pix_fmt yuv420p");
}

TEST(ProbeCommandTest, AnamorphicVideoShowsStoredAndShownShapes) {
  auto r = RunCommand(ReelCommandLine("probe --json " + ShellQuote(DvdClip())));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = nlohmann::json::parse(r.out)["streams"][0];
  EXPECT_EQ(v["width"], 720);
  EXPECT_EQ(v["height"], 480);
  EXPECT_EQ(v["sample_aspect_ratio"], "32:27");
  EXPECT_EQ(v["display_width"], 853);
  EXPECT_EQ(v["display_height"], 480);
  r = RunCommand(ReelCommandLine("probe " + ShellQuote(DvdClip())));
  EXPECT_NE(r.out.find("720x480 (SAR 32:27, shown 853x480)"), std::string::npos) << r.out;
  r = RunCommand(ReelCommandLine("probe " + ShellQuote(Clip())));
  EXPECT_NE(r.out.find(" 640x360 30.000 fps"), std::string::npos) << "square pixels: one size\n"
                                                                  << r.out;
}

TEST(FramesCommandTest, AnamorphicFramesAtTheShownShapeUnlessStorageShape) {
  std::string base = reel::testing::ScratchDir("FramesAnamorphic");
  struct Case {
    std::string flags, shape;
    int source_width, width;
  };
  for (const Case& c :
       {Case{"", "display", 853, 840}, Case{"--storage-shape", "storage", 720, 728}}) {
    std::string dir = base + "/" + c.shape;
    auto r = RunCommand(ReelCommandLine("frames " + ShellQuote(DvdClip()) + " --count 1 " +
                                        c.flags + " -o " + ShellQuote(dir)));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(dir + "/report.json");
    auto report = nlohmann::json::parse(in);
    EXPECT_EQ(report["shape"], c.shape);
    EXPECT_EQ(report["storage_width"], 720);
    EXPECT_EQ(report["storage_height"], 480);
    EXPECT_EQ(report["sample_aspect_ratio"], "32:27");
    EXPECT_EQ(report["display_width"], 853);
    EXPECT_EQ(report["display_height"], 480);
    EXPECT_EQ(report["source_width"], c.source_width);
    EXPECT_EQ(report["width"], c.width);
    EXPECT_EQ(report["height"], 476);
    std::ifstream frames_in(dir + "/frames.json");
    EXPECT_EQ(nlohmann::json::parse(frames_in)[0]["width"], c.width);
  }
}

TEST(ProbeCommandTest, OneLinePerBadFileAndTheRestGoOn) {
  std::string dir = reel::testing::ScratchDir("ProbeCommand");
  std::ofstream(dir + "/notes.mp4") << "not a video";
  auto r = RunCommand(ReelCommandLine("probe --json " + ShellQuote(dir + "/notes.mp4") + " " +
                                      ShellQuote(Clip()) + " " + ShellQuote(dir + "/missing.mkv")));
  EXPECT_EQ(r.exit_code, 1);
  std::istringstream out(r.out);
  std::string line;
  int objects = 0;
  while (std::getline(out, line)) {
    EXPECT_NO_THROW(nlohmann::json::parse(line));
    ++objects;
  }
  EXPECT_EQ(objects, 1);
  EXPECT_NE(r.err.find(dir + "/notes.mp4: not a readable media file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir + "/missing.mkv: no such file"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2);
}

TEST(FramesCommandTest, WritesFramesAndFramesJson) {
  std::string dir = reel::testing::ScratchDir("FramesCommand") + "/out";
  auto r = RunCommand(
      ReelCommandLine("frames " + ShellQuote(Clip()) + " --count 5 -o " + ShellQuote(dir)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir + "/frames.json");
  auto frames = nlohmann::json::parse(in);
  ASSERT_EQ(frames.size(), 5u);
  std::vector<int> source;
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& f = frames[i];
    EXPECT_EQ(f["index"], static_cast<int>(i));
    // smart_resize(360, 640): 364 x 644 rounds to 13 and 23 patches: 364x644.
    EXPECT_EQ(f["width"], 644);
    EXPECT_EQ(f["height"], 364);
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f["file"].get<std::string>()));
    source.push_back(f["source_frame"]);
    EXPECT_NEAR(f["pts_s"].get<double>(), f["source_frame"].get<int>() / 30.0, 1e-6);
  }
  EXPECT_EQ(source, (std::vector<int>{0, 29, 59, 89, 119}));
}

TEST(FramesCommandTest, PolicyOptionsAndFormats) {
  std::string base = reel::testing::ScratchDir("FramesPolicies");
  struct Case {
    std::string args;
    size_t frames;
  };
  for (const Case& c :
       {Case{"--fps 2", 9}, Case{"--keyframes", 1}, Case{"--timestamps 0.5,1.5,3.9", 3},
        Case{"--scene 0.3", 1}, Case{"--fps 30 --start 1 --end 2", 30},
        Case{"--fps 30 --max-frames 4", 4}, Case{"--count 2 --format png --long-side 336", 2},
        Case{"--count 2 --max-pixels 50176", 2}}) {
    std::string dir = base + "/" + std::to_string(std::hash<std::string>()(c.args));
    auto r =
        RunCommand(ReelCommandLine("frames " + ShellQuote(Clip()) + " " + c.args + " -o " + dir));
    ASSERT_EQ(r.exit_code, 0) << c.args << ": " << r.err;
    std::ifstream in(dir + "/frames.json");
    auto frames = nlohmann::json::parse(in);
    EXPECT_EQ(frames.size(), c.frames) << c.args;
    if (c.args.find("png") != std::string::npos) {
      EXPECT_NE(frames[0]["file"].get<std::string>().find(".png"), std::string::npos);
      EXPECT_EQ(frames[0]["width"], 336);
      EXPECT_EQ(frames[0]["height"], 196);  // round(360 * 336 / 640) = 189 -> 196
    }
    if (c.args.find("max-pixels") != std::string::npos) {
      EXPECT_LE(frames[0]["width"].get<int>() * frames[0]["height"].get<int>(), 50176);
    }
  }
}

TEST(FramesCommandTest, ErrorsAndExitCodes) {
  std::string dir = reel::testing::ScratchDir("FramesErrors");
  auto r = RunCommand(ReelCommandLine("frames " + dir + "/missing.mp4 -o " + dir + "/out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "reel frames: " + dir + "/missing.mp4: no such file\n");

  r = RunCommand(
      ReelCommandLine("frames " + ShellQuote(Clip()) + " --fps 1 --count 3 -o " + dir + "/o2"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("choose one of"), std::string::npos);

  r = RunCommand(ReelCommandLine("frames " + ShellQuote(Clip()) + " --fps -1 -o " + dir + "/o3"));
  EXPECT_EQ(r.exit_code, 2);

  // A truncated file: a partial result, clearly marked, exit 3.
  std::ifstream in(GeneratedMedia("cli_faststart.mp4",
                                  "-f lavfi -i testsrc2=s=320x240:r=25:d=4 -c:v libx264 -pix_fmt "
                                  "yuv420p -movflags +faststart"),
                   std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(dir + "/half.mp4", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  r = RunCommand(ReelCommandLine("frames " + dir + "/half.mp4 --count 4 -o " + dir + "/o4"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("partial result"), std::string::npos);
  std::ifstream report(dir + "/o4/report.json");
  EXPECT_TRUE(nlohmann::json::parse(report)["partial"].get<bool>());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(FramesCommandTest, OutOfRangeRequestsSayWhatAndFailWhenNothingIsLeft) {
  std::string dir = reel::testing::ScratchDir("FramesOutOfRange");
  // Clip() is 4 s long: 99 s is past its end; the frame at 3 s is still taken.
  auto r = RunCommand(
      ReelCommandLine("frames " + ShellQuote(Clip()) + " --timestamps 3,99 -o " + dir + "/a"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("timestamp 99 s is past the end of the video (4 s long)"), std::string::npos)
      << r.err;
  auto report = nlohmann::json::parse(ReadFile(dir + "/a/report.json"));
  EXPECT_EQ(report["returned"], 1);
  ASSERT_EQ(report["warnings"].size(), 1u);
  EXPECT_NE(report["warnings"][0].get<std::string>().find("99 s"), std::string::npos);

  // Nothing left to sample: exit 1, saying why.
  r = RunCommand(ReelCommandLine("frames " + ShellQuote(Clip()) + " --start 20 -o " + dir + "/b"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nothing to sample: start 20 s is after the last frame"), std::string::npos)
      << r.err;
  r = RunCommand(
      ReelCommandLine("frames " + ShellQuote(Clip()) + " --timestamps 7,8 -o " + dir + "/c"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nothing to sample: timestamps 7 s, 8 s are past the end"),
            std::string::npos)
      << r.err;
  r = RunCommand(ReelCommandLine("frames " + ShellQuote(Clip()) +
                                 " --keyframes --start 1 --end 2 -o " + dir + "/d"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nothing to sample: no keyframe between start 1 s and end 2 s"),
            std::string::npos)
      << r.err;
}

TEST(FramesCommandTest, AFolderWithFilesIsRefusedUnlessOverwriteWhichClearsOnlyReelsFiles) {
  std::string dir = reel::testing::ScratchDir("FramesOverwrite") + "/out";
  auto r = RunCommand(
      ReelCommandLine("frames " + ShellQuote(Clip()) + " --count 5 -o " + ShellQuote(dir)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCommand(
      ReelCommandLine("frames " + ShellQuote(Clip()) + " --count 2 -o " + ShellQuote(dir)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir + " is not empty (5 frames and frames.json/report.json from an earlier "
                             "run): add --overwrite"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/frame_000004.jpg")) << "a refusal changes nothing";

  // Files that are not Reel's stay, whatever their names.
  std::ofstream(dir + "/notes.txt") << "mine";
  std::ofstream(dir + "/frame_cover.jpg") << "mine";
  std::filesystem::create_directories(dir + "/sub");
  std::ofstream(dir + "/sub/frame_000009.jpg") << "mine";
  r = RunCommand(ReelCommandLine("frames " + ShellQuote(Clip()) +
                                 " --count 2 --format png --overwrite -o " + ShellQuote(dir)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.insert(entry.path().filename().string());
  }
  EXPECT_EQ(names, (std::set<std::string>{"frame_000000.png", "frame_000001.png", "frames.json",
                                          "report.json", "notes.txt", "frame_cover.jpg", "sub"}));
  EXPECT_TRUE(std::filesystem::exists(dir + "/sub/frame_000009.jpg"));
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir + "/frames.json")).size(), 2u);

  // A run that fails before any frame leaves the earlier result alone.
  r = RunCommand(ReelCommandLine("frames " + ShellQuote(Clip()) + " --start 30 --overwrite -o " +
                                 ShellQuote(dir)));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(std::filesystem::exists(dir + "/frame_000001.png"));
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir + "/frames.json")).size(), 2u);
}

TEST(FramesCommandTest, OptionMessagesNameTheRealProblem) {
  std::string dir = reel::testing::ScratchDir("FramesMessages");
  struct Case {
    std::string args;
    int exit_code;
    std::string message;
    std::string absent;  // must not appear
  };
  std::string two_streams = GeneratedMedia(
      "cli_two_streams.mp4",
      "-f lavfi -i testsrc2=s=160x120:r=10:d=1 -f lavfi -i sine=d=1 -c:v libx264 -pix_fmt yuv420p "
      "-c:a aac -shortest");
  const Case cases[] = {
      {"--fps 0", 2, "--fps: must be greater than 0, got 0", "179769"},
      {"--count 0", 2, "--count: must be at least 1, got 0", "179769"},
      {"--max-pixels 100", 2, "--max-pixels 100 is smaller than one 28x28 patch (784 pixels)",
       "--min-pixels"},
      {"--max-pixels 1000", 2,
       "--max-pixels 1000 is smaller than the default --min-pixels (3136): give a smaller "
       "--min-pixels too",
       ""},
      {"--min-pixels 5000 --max-pixels 4000", 2,
       "--min-pixels 5000 is larger than --max-pixels 4000", ""},
      {"--long-side 10", 2, "--long-side 10 is smaller than one 28-pixel patch", ""},
      {"--long-side 336 --max-pixels 50176", 2, "choose one way to size frames", ""},
  };
  for (const Case& c : cases) {
    auto r = RunCommand(
        ReelCommandLine("frames " + ShellQuote(Clip()) + " " + c.args + " -o " + dir + "/o"));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    if (!c.absent.empty()) {
      EXPECT_EQ(r.err.find(c.absent), std::string::npos) << r.err;
    }
    EXPECT_LT(r.err.size(), 300u) << r.err;
  }
  auto r = RunCommand(
      ReelCommandLine("frames " + ShellQuote(two_streams) + " --stream 5 -o " + dir + "/s"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(two_streams + ": there is no stream 5: the file has 2 streams (0-1); its "
                                     "video streams: 0"),
            std::string::npos)
      << r.err;
  r = RunCommand(
      ReelCommandLine("frames " + ShellQuote(two_streams) + " --stream 1 -o " + dir + "/t"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("stream 1 is audio, not video; its video streams: 0"), std::string::npos)
      << r.err;
}

TEST(FramesCommandTest, HelpListsEveryOption) {
  auto r = RunCommand(ReelCommandLine("frames --help"));
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option :
       {"--fps", "--count", "--keyframes", "--scene", "--timestamps", "--start", "--end",
        "--max-frames", "--max-pixels", "--min-pixels", "--format", "-o", "--long-side",
        "--time-limit", "--max-error-rate", "--storage-shape", "--overwrite", "Exit status"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  }
  r = RunCommand(ReelCommandLine("probe --help"));
  EXPECT_NE(r.out.find("--json"), std::string::npos);
}

}  // namespace
}  // namespace reel
