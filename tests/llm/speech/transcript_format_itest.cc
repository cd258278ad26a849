// SRT and VTT as players read them: FFmpeg reads Reel's files back (as a subtitle file, and
// muxed into a video) with the same cues, times and text; Reel's own subtitle reader agrees.
#include <gtest/gtest.h>

#include <fstream>

#include "llm/speech/transcript_format.h"
#include "pipeline/subtitles.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::llm {
namespace {

using reel::testing::GeneratedMedia;
using reel::testing::RunCommand;
using reel::testing::ScratchDir;
using reel::testing::ShellQuote;

std::vector<TranscriptSegment> Segments() {
  std::vector<TranscriptSegment> out;
  const char* texts[] = {"The birch canoe slid on the smooth planks.",
                         "caf\xc3\xa9 <i>not markup</i> & more", "an arrow --> in the text",
                         "three\nlines\nfolded", "after an hour"};
  const double starts[] = {0.5, 2.0004, 3.9996, 61.25, 3600.125};
  for (int i = 0; i < 5; ++i) {
    TranscriptSegment s;
    s.start_s = starts[i];
    s.end_s = starts[i] + 1.5;
    s.text = texts[i];
    out.push_back(s);
  }
  return out;
}

std::string Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The cues FFmpeg reads from `path`, written back by FFmpeg in `format` (srt or webvtt).
std::string FfmpegRoundTrip(const std::string& path, const std::string& format) {
  reel::testing::CommandResult r = RunCommand("ffmpeg -hide_banner -loglevel error -i " +
                                              ShellQuote(path) + " -f " + format + " -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

void ExpectSameCues(const std::vector<pipeline::TextSegment>& got,
                    const std::vector<TranscriptSegment>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i].start_s, want[i].start_s, 0.0006) << what << " cue " << i;
    EXPECT_NEAR(got[i].end_s, want[i].end_s, 0.0006) << what << " cue " << i;
    std::string text = want[i].text;
    for (char& c : text) c = c == '\n' ? ' ' : c;
    if (what.find("srt") != std::string::npos || what == "ffmpeg vtt") {
      // SubRip text is read as markup by players: <i> is italics, not text. FFmpeg reads our
      // escaped "&lt;i&gt;" in VTT as the text "<i>" but writes it back unescaped (markup).
      const size_t tag = text.find("<i>not markup</i>");
      if (tag != std::string::npos) text.replace(tag, 17, "not markup");
    }
    EXPECT_EQ(got[i].text, text) << what << " cue " << i;
  }
}

TEST(TranscriptFormatFfmpegTest, FfmpegReadsOurSrtAndVttWithTheSameCues) {
  const std::string dir = ScratchDir("TranscriptFormat");
  const std::vector<TranscriptSegment> segments = Segments();
  const std::string srt = Write(dir + "/t.srt", FormatSrt(segments));
  const std::string vtt = Write(dir + "/t.vtt", FormatVtt(segments));

  // FFmpeg reads each file and writes it again: the same cues come out.
  Result<std::vector<pipeline::TextSegment>> srt_back =
      pipeline::ParseSrt(FfmpegRoundTrip(srt, "srt"), "ffmpeg srt");
  ASSERT_TRUE(srt_back.ok()) << srt_back.status().message();
  ExpectSameCues(*srt_back, segments, "ffmpeg srt");
  Result<std::vector<pipeline::TextSegment>> vtt_back =
      pipeline::ParseVtt(FfmpegRoundTrip(vtt, "webvtt"), "ffmpeg vtt");
  ASSERT_TRUE(vtt_back.ok()) << vtt_back.status().message();
  ExpectSameCues(*vtt_back, segments, "ffmpeg vtt");

  // ffprobe counts one packet per cue.
  for (const std::string& path : {srt, vtt}) {
    reel::testing::CommandResult probe = RunCommand(
        "ffprobe -v error -show_entries packet=pts_time -of csv=p=0 " + ShellQuote(path));
    ASSERT_EQ(probe.exit_code, 0) << probe.err;
    EXPECT_EQ(std::count(probe.out.begin(), probe.out.end(), '\n'), 5) << path;
  }

  // Muxed into a video as a subtitle stream, as a player gets it.
  const std::string video =
      GeneratedMedia("subtitle_host.mp4", "-f lavfi -i testsrc2=s=160x120:r=5:d=2 -c:v mpeg4");
  const std::string mkv = dir + "/with_subs.mkv";
  reel::testing::CommandResult mux =
      RunCommand("ffmpeg -hide_banner -loglevel error -i " + ShellQuote(video) + " -i " +
                 ShellQuote(srt) + " -map 0 -map 1 -c:v copy -c:s srt " + ShellQuote(mkv));
  ASSERT_EQ(mux.exit_code, 0) << mux.err;
  Result<std::vector<pipeline::TextSegment>> muxed = pipeline::ExtractSubtitleStreams(mkv);
  ASSERT_TRUE(muxed.ok()) << muxed.status().message();
  ExpectSameCues(*muxed, segments, "srt in mkv");

  // And Reel's own reader.
  Result<std::vector<pipeline::TextSegment>> ours = pipeline::ReadSubtitleFile(vtt);
  ASSERT_TRUE(ours.ok());
  ExpectSameCues(*ours, segments, "reel vtt");
}

}  // namespace
}  // namespace reel::llm
