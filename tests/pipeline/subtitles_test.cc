#include "pipeline/subtitles.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/file_util.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_environment.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

using ::testing::HasSubstr;

struct Cue {
  double start_s;
  double end_s;
  std::string text;
};

struct ParseCase {
  std::string label;
  std::string input;
  std::vector<Cue> expected;
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << c.label; }

void ExpectCues(const std::vector<TextSegment>& actual, const std::vector<Cue>& expected,
                const std::string& source) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    SCOPED_TRACE("cue " + std::to_string(k));
    EXPECT_DOUBLE_EQ(actual[k].start_s, expected[k].start_s);
    EXPECT_DOUBLE_EQ(actual[k].end_s, expected[k].end_s);
    EXPECT_EQ(actual[k].text, expected[k].text);
    EXPECT_EQ(actual[k].source, source);
  }
}

// ---------------------------------------------------------------------------------------------
// SubRip.

class SrtParseTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(SrtParseTest, ParsesCues) {
  const ParseCase& c = GetParam();
  auto result = ParseSrt(c.input, "test.srt");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ExpectCues(*result, c.expected, "test.srt");
}

INSTANTIATE_TEST_SUITE_P(
    Quirks, SrtParseTest,
    ::testing::Values(
        ParseCase{"Basic",
                  "1\n00:00:01,000 --> 00:00:02,500\nHello\n\n"
                  "2\n00:00:03,000 --> 00:00:04,000\nWorld\n",
                  {{1.0, 2.5, "Hello"}, {3.0, 4.0, "World"}}},
        ParseCase{"BomAndCrlf",
                  "\xEF\xBB\xBF"
                  "1\r\n00:00:01,000 --> 00:00:02,000\r\nHello\r\n\r\n"
                  "2\r\n00:00:03,000 --> 00:00:04,000\r\nWorld\r\n",
                  {{1.0, 2.0, "Hello"}, {3.0, 4.0, "World"}}},
        ParseCase{"LoneCr",
                  "1\r00:00:01,000 --> 00:00:02,000\rHello\rthere\r\r"
                  "2\r00:00:03,000 --> 00:00:04,000\rWorld\r",
                  {{1.0, 2.0, "Hello\nthere"}, {3.0, 4.0, "World"}}},
        ParseCase{"MissingCueNumbers",
                  "00:00:01,000 --> 00:00:02,000\nHello\n\n00:00:03,000 --> 00:00:04,000\nWorld\n",
                  {{1.0, 2.0, "Hello"}, {3.0, 4.0, "World"}}},
        ParseCase{"ExtraBlankLines",
                  "\n\n  \n1\n00:00:01,000 --> 00:00:02,000\nHello\n\n\n \t\n\n"
                  "2\n00:00:03,000 --> 00:00:04,000\nWorld\n\n\n\n",
                  {{1.0, 2.0, "Hello"}, {3.0, 4.0, "World"}}},
        ParseCase{"MissingBlankLineBetweenCues",
                  "1\n00:00:01,000 --> 00:00:02,000\nHello\n"
                  "2\n00:00:03,000 --> 00:00:04,000\nWorld\n"
                  "00:00:05,000 --> 00:00:06,000\nAgain\n",
                  {{1.0, 2.0, "Hello"}, {3.0, 4.0, "World"}, {5.0, 6.0, "Again"}}},
        ParseCase{"MultiLineText",
                  "1\n00:00:01,000 --> 00:00:02,000\n  First line  \nSecond line\nThird\n",
                  {{1.0, 2.0, "First line\nSecond line\nThird"}}},
        ParseCase{"LargeHoursDotSeparatorAndShortFractions",
                  "1\n01:02:03.004 --> 101:00:00,5\nA\n\n"
                  "2\n00:00:07 --> 00:00:08,1234\nB\n",
                  {{7.0, 8.123, "B"}, {3723.004, 363600.5, "A"}}},
        ParseCase{"MinutesSecondsOnly",
                  "1\n00:01.000 --> 00:02.000\nShort form\n",
                  {{1.0, 2.0, "Short form"}}},
        ParseCase{"CoordinatesAfterTimes",
                  "1\n00:00:01,000 --> 00:00:02,000  X1:100 X2:200 Y1:10 Y2:20\nHello\n",
                  {{1.0, 2.0, "Hello"}}},
        ParseCase{"Markup",
                  "1\n00:00:01,000 --> 00:00:02,000\n"
                  "{\\an8}<i>Italic</i> and <b>bold</b> <u>u</u>\n"
                  "<font color=\"#ffff00\" face=\"Arial\">Yellow</font>\n"
                  "<i></i>\n",
                  {{1.0, 2.0, "Italic and bold u\nYellow"}}},
        ParseCase{"Entities",
                  "1\n00:00:01,000 --> 00:00:02,000\n"
                  "Tom &amp; Jerry &lt;3 &gt;&nbsp;x &#233;&#x4E2D; &bogus; & done\n",
                  {{1.0, 2.0, "Tom & Jerry <3 > x \xC3\xA9\xE4\xB8\xAD &bogus; & done"}}},
        ParseCase{"EscapedTagsAreTextNotMarkup",
                  "1\n00:00:01,000 --> 00:00:02,000\n&lt;i&gt;literal&lt;/i&gt; a < b <3 you>\n",
                  {{1.0, 2.0, "<i>literal</i> a < b <3 you>"}}},
        ParseCase{"MalformedTimingSkipped",
                  "1\n00:00:01,000 --> 00:0x:02,000\nBroken\n\n"
                  "2\n00:00:03,000 -> 00:00:04,000\nNo arrow\n\n"
                  "3\n00:00:75,000 --> 00:00:76,000\nBad seconds\n\n"
                  "4\n00:00:05,000 --> 00:00:06,000\nGood\n",
                  {{5.0, 6.0, "Good"}}},
        ParseCase{"EndBeforeStartSkipped",
                  "1\n00:00:05,000 --> 00:00:04,000\nBackwards\n\n"
                  "2\n00:00:06,000 --> 00:00:06,000\nZero length is kept\n",
                  {{6.0, 6.0, "Zero length is kept"}}},
        ParseCase{"SortedByStart",
                  "1\n00:00:09,000 --> 00:00:10,000\nLast\n\n"
                  "2\n00:00:01,000 --> 00:00:02,000\nFirst\n\n"
                  "3\n00:00:05,000 --> 00:00:06,000\nMiddle\n",
                  {{1.0, 2.0, "First"}, {5.0, 6.0, "Middle"}, {9.0, 10.0, "Last"}}},
        ParseCase{"EmptyTextDropped",
                  "1\n00:00:01,000 --> 00:00:02,000\n\n"
                  "2\n00:00:03,000 --> 00:00:04,000\n<i> </i>\n\n"
                  "3\n00:00:05,000 --> 00:00:06,000\nText\n",
                  {{5.0, 6.0, "Text"}}},
        ParseCase{"InvalidUtf8Replaced",
                  "1\n00:00:01,000 --> 00:00:02,000\nCaf\xE9 \xC3\xA9\xFF\xC0\xAF ok\n",
                  {{1.0, 2.0, "Caf\xEF\xBF\xBD \xC3\xA9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD ok"}}},
        ParseCase{"NumericTextLineIsText",
                  "1\n00:00:01,000 --> 00:00:02,000\n42\n\n2\n00:00:03,000 --> 00:00:04,000\nB\n",
                  {{1.0, 2.0, "42"}, {3.0, 4.0, "B"}}}),
    [](const ::testing::TestParamInfo<ParseCase>& info) { return info.param.label; });

// ---------------------------------------------------------------------------------------------
// WebVTT.

class VttParseTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(VttParseTest, ParsesCues) {
  const ParseCase& c = GetParam();
  auto result = ParseVtt(c.input, "test.vtt");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ExpectCues(*result, c.expected, "test.vtt");
}

INSTANTIATE_TEST_SUITE_P(
    Quirks, VttParseTest,
    ::testing::Values(
        ParseCase{"Basic",
                  "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nHello\n\n"
                  "00:00:03.000 --> 00:00:04.000\nWorld\n",
                  {{1.0, 2.5, "Hello"}, {3.0, 4.0, "World"}}},
        ParseCase{"HeaderWithTitleAndMetadata",
                  "\xEF\xBB\xBFWEBVTT - Some title\r\nKind: captions\r\nLanguage: en\r\n\r\n"
                  "00:01.000 --> 00:02.000\r\nHello\r\n",
                  {{1.0, 2.0, "Hello"}}},
        ParseCase{"IdentifiersAndNoHours",
                  "WEBVTT\n\nintro\n00:01.000 --> 00:02.000\nHello\n\n"
                  "2\n01:02.500 --> 01:03.000\nWorld\n\n"
                  "a --> b id\n00:00:04.000 --> 00:00:05.000\nArrow in id\n",
                  {{1.0, 2.0, "Hello"}, {4.0, 5.0, "Arrow in id"}, {62.5, 63.0, "World"}}},
        ParseCase{"CueSettings",
                  "WEBVTT\n\n00:00:01.000 --> 00:00:02.000 align:start position:10% line:0\n"
                  "Hello\n\n00:00:03.000 --> 00:00:04.000\tvertical:rl\nWorld\n",
                  {{1.0, 2.0, "Hello"}, {3.0, 4.0, "World"}}},
        ParseCase{"NoteStyleRegionSkipped",
                  "WEBVTT\n\nNOTE This is a comment\nover two lines\n\n"
                  "STYLE\n::cue { color: yellow }\n\n"
                  "REGION\nid:fred width:40%\n\n"
                  "NOTE\nanother note\n\n"
                  "00:00:01.000 --> 00:00:02.000\nHello\n\n"
                  "NOTE trailing\n\n"
                  "00:00:03.000 --> 00:00:04.000\nNOTE this is cue text\n",
                  {{1.0, 2.0, "Hello"}, {3.0, 4.0, "NOTE this is cue text"}}},
        ParseCase{"Markup",
                  "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n"
                  "<v Roger Bingham>We are in New York City</v>\n"
                  "<c.yellow.bg_blue>Yellow</c> <i>and</i> <b>bold</b> <lang en>x</lang>\n\n"
                  "00:00:03.000 --> 00:00:05.000\n"
                  "<00:00:03.000>Karaoke <00:00:04.000>style<00:00:04.500>\n"
                  "<ruby>Kanji<rt>kana</rt></ruby> {\\an8}top\n",
                  {{1.0, 2.0, "We are in New York City\nYellow and bold x"},
                   {3.0, 5.0, "Karaoke style\nKanjikana top"}}},
        ParseCase{"Entities",
                  "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n"
                  "a&nbsp;b &amp; c &lt;d&gt; &lrm;e\n",
                  {{1.0, 2.0, "a b & c <d> e"}}},
        ParseCase{"MissingHeaderTolerated",
                  "00:00:01.000 --> 00:00:02.000\nHello\n",
                  {{1.0, 2.0, "Hello"}}},
        ParseCase{"MissingBlankLineBetweenCues",
                  "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello\n"
                  "00:00:03.000 --> 00:00:04.000\nWorld\n",
                  {{1.0, 2.0, "Hello"}, {3.0, 4.0, "World"}}},
        ParseCase{"MalformedAndBackwardsSkippedAndSorted",
                  "WEBVTT\n\n00:00:09.000 --> 00:00:10.000\nLast\n\n"
                  "00:00:xx.000 --> 00:00:02.000\nBroken\n\n"
                  "00:00:05.000 --> 00:00:04.000\nBackwards\n\n"
                  "stray block without timing\nmore\n\n"
                  "00:00:01.000 --> 00:00:02.000\nFirst\n",
                  {{1.0, 2.0, "First"}, {9.0, 10.0, "Last"}}},
        ParseCase{"HeaderOnlyIsEmpty", "WEBVTT\n\nNOTE nothing here\n", {}}),
    [](const ::testing::TestParamInfo<ParseCase>& info) { return info.param.label; });

// ---------------------------------------------------------------------------------------------
// Corrupt input.

struct CorruptCase {
  std::string label;
  bool vtt;
  std::string input;
  std::string message_part;  // besides the file name
};

void PrintTo(const CorruptCase& c, std::ostream* os) { *os << c.label; }

class CorruptSubtitleTest : public ::testing::TestWithParam<CorruptCase> {};

TEST_P(CorruptSubtitleTest, FailsWithCorruptDataNamingTheFile) {
  const CorruptCase& c = GetParam();
  const std::string name = c.vtt ? "bad/clip.vtt" : "bad/clip.srt";
  auto result = c.vtt ? ParseVtt(c.input, name) : ParseSrt(c.input, name);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), ErrorCode::kCorruptData);
  EXPECT_THAT(result.status().message(), HasSubstr(name + ":"));
  EXPECT_THAT(result.status().message(), HasSubstr(c.message_part));
}

INSTANTIATE_TEST_SUITE_P(
    Garbage, CorruptSubtitleTest,
    ::testing::Values(
        CorruptCase{"SrtEmpty", false, "", "no cues"},
        CorruptCase{"SrtBlankLines", false, "\xEF\xBB\xBF\r\n\r\n  \n", "no cues"},
        CorruptCase{"SrtProse", false, "This is not\na subtitle file\n", "first bad line 1"},
        CorruptCase{"SrtBinary", false, std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16),
                    "first bad line 1"},
        CorruptCase{"SrtOnlyBadTimings", false,
                    "\n\n1\n00:00:01 -> 00:00:02\nA\n\n2\n0:0:1,000 --> xx\nB\n",
                    "first bad line 4"},
        CorruptCase{"SrtOnlyBackwardsCue", false, "1\n00:00:05,000 --> 00:00:01,000\nA\n",
                    "first bad line 2"},
        CorruptCase{"VttEmpty", true, "", "no cues"},
        CorruptCase{"VttHeaderThenGarbage", true, "WEBVTT\n\nfoo\nbar\n", "first bad line 3"},
        CorruptCase{"VttNoHeaderGarbage", true, "<html><body>404</body></html>",
                    "first bad line 1"}),
    [](const ::testing::TestParamInfo<CorruptCase>& info) { return info.param.label; });

// ---------------------------------------------------------------------------------------------
// Side-car files.

TEST(ReadSubtitleFileTest, ReadsByExtensionWithLanguageFromName) {
  const std::string dir = testing::ScratchDir("ReadSubtitleFileTest_Languages");
  const std::string srt = "1\n00:00:01,000 --> 00:00:02,000\nHello\n";
  const std::string vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\nHello\n";
  struct FileCase {
    std::string file;
    std::string contents;
    std::string language;
  };
  const std::vector<FileCase> cases = {
      {"clip.en.srt", srt, "en"},
      {"clip.pt-BR.vtt", vtt, "pt-BR"},
      {"clip.srt", srt, ""},
      {"clip.eng.SRT", srt, "eng"},
      {"clip.zh-Hant.vtt", vtt, "zh-Hant"},
      {"clip.en.forced.srt", srt, "en"},
      {"my.clip.srt", srt, ""},
      {"clip.final2.vtt", vtt, ""},
  };
  for (const FileCase& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = dir + "/" + c.file;
    ASSERT_TRUE(WriteFileAtomically(path, c.contents).ok());
    auto result = ReadSubtitleFile(path);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_EQ(result->size(), 1u);
    EXPECT_EQ((*result)[0].text, "Hello");
    EXPECT_DOUBLE_EQ((*result)[0].start_s, 1.0);
    EXPECT_EQ((*result)[0].source, path);
    EXPECT_EQ((*result)[0].language, c.language);
  }
}

TEST(ReadSubtitleFileTest, ErrorsNameTheFile) {
  const std::string dir = testing::ScratchDir("ReadSubtitleFileTest_Errors");

  auto missing = ReadSubtitleFile(dir + "/missing.srt");
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);

  const std::string text_path = dir + "/notes.txt";
  ASSERT_TRUE(WriteFileAtomically(text_path, "1\n00:00:01,000 --> 00:00:02,000\nA\n").ok());
  auto unknown = ReadSubtitleFile(text_path);
  EXPECT_EQ(unknown.status().code(), ErrorCode::kUnsupported);
  EXPECT_THAT(unknown.status().message(), HasSubstr(text_path));

  const std::string garbage_path = dir + "/garbage.vtt";
  ASSERT_TRUE(WriteFileAtomically(garbage_path, std::string(1000, '\xFF')).ok());
  auto garbage = ReadSubtitleFile(garbage_path);
  EXPECT_EQ(garbage.status().code(), ErrorCode::kCorruptData);
  EXPECT_THAT(garbage.status().message(), HasSubstr(garbage_path));

  // A sparse file: large on paper, no disk space used.
  const std::string huge_path = dir + "/huge.srt";
  ASSERT_TRUE(WriteFileAtomically(huge_path, "").ok());
  std::filesystem::resize_file(huge_path, (64ull << 20) + 1);
  auto huge = ReadSubtitleFile(huge_path);
  EXPECT_EQ(huge.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_THAT(huge.status().message(), HasSubstr(huge_path));
}

// ---------------------------------------------------------------------------------------------
// Container streams.

constexpr char kStreamSrt[] =
    "1\n00:00:00,500 --> 00:00:01,250\nFirst <i>line</i>\n\n"
    "2\n00:00:02,000 --> 00:00:03,000\nTwo\nlines &amp; more\n\n"
    "3\n00:00:03,500 --> 00:00:04,750\nLast\n";

constexpr char kStreamAss[] =
    "[Script Info]\nScriptType: v4.00+\nPlayResX: 384\nPlayResY: 288\n\n"
    "[V4+ Styles]\n"
    "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, "
    "BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, "
    "BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding\n"
    "Style: Default,Arial,16,&Hffffff,&Hffffff,&H0,&H0,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,0\n\n"
    "[Events]\n"
    "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    "Dialogue: 0,0:00:00.50,0:00:01.25,Default,Bob,0,0,0,,{\\an8}Hello, {\\i1}world{\\i0}\n"
    "Dialogue: 0,0:00:02.00,0:00:03.00,Default,,0,0,0,,Two\\Nlines\\nhere\n"
    "Dialogue: 0,0:00:03.50,0:00:04.75,Default,,0,0,0,,Commas, kept, in text\n";

// Writes `contents` to a scratch file and muxes it with a short lavfi video into the media
// cache. The cache name carries a version: bump it when the subtitle text changes.
std::string MuxSubtitles(const std::string& media_name, const std::string& sub_file,
                         const std::string& contents, const std::string& codec_args) {
  const std::string dir = testing::ScratchDir("SubtitleSource_" + media_name);
  const std::string sub_path = dir + "/" + sub_file;
  EXPECT_TRUE(WriteFileAtomically(sub_path, contents).ok());
  return testing::GeneratedMedia(media_name, "-f lavfi -i testsrc2=s=64x48:d=5:r=10 -i " +
                                                 testing::ShellQuote(sub_path) +
                                                 " -map 0:v -map 1:s -c:v mpeg4 " + codec_args);
}

struct StreamCase {
  std::string label;
  std::string media_name;
  std::string sub_file;
  const char* contents;
  std::string codec_args;
  std::string language;
  std::vector<Cue> expected;
};

void PrintTo(const StreamCase& c, std::ostream* os) { *os << c.label; }

class ExtractSubtitleStreamsTest : public ::testing::TestWithParam<StreamCase> {};

TEST_P(ExtractSubtitleStreamsTest, DecodesExactTimesAndText) {
  const StreamCase& c = GetParam();
  const std::string path = MuxSubtitles(c.media_name, c.sub_file, c.contents, c.codec_args);
  ASSERT_FALSE(path.empty());
  auto result = ExtractSubtitleStreams(path);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const std::vector<TextSegment>& segments = *result;
  ASSERT_EQ(segments.size(), c.expected.size());
  for (size_t k = 0; k < segments.size(); ++k) {
    SCOPED_TRACE("segment " + std::to_string(k));
    EXPECT_NEAR(segments[k].start_s, c.expected[k].start_s, 1e-6);
    EXPECT_NEAR(segments[k].end_s, c.expected[k].end_s, 1e-6);
    EXPECT_EQ(segments[k].text, c.expected[k].text);
    EXPECT_EQ(segments[k].source, "stream:1");
    EXPECT_EQ(segments[k].language, c.language);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Containers, ExtractSubtitleStreamsTest,
    ::testing::Values(
        StreamCase{
            "Mp4MovText",
            "subs_mov_text_v1.mp4",
            "subs.srt",
            kStreamSrt,
            "-c:s mov_text -metadata:s:s:0 language=fre",
            "fre",
            {{0.5, 1.25, "First line"}, {2.0, 3.0, "Two\nlines & more"}, {3.5, 4.75, "Last"}}},
        StreamCase{
            "MkvSubRip",
            "subs_subrip_v1.mkv",
            "subs.srt",
            kStreamSrt,
            "-c:s srt -metadata:s:s:0 language=ger",
            "ger",
            {{0.5, 1.25, "First line"}, {2.0, 3.0, "Two\nlines & more"}, {3.5, 4.75, "Last"}}},
        StreamCase{
            "MkvWebVtt",
            "subs_webvtt_v1.mkv",
            "subs.srt",
            kStreamSrt,
            "-c:s webvtt",
            "",
            {{0.5, 1.25, "First line"}, {2.0, 3.0, "Two\nlines & more"}, {3.5, 4.75, "Last"}}},
        StreamCase{"MkvAss",
                   "subs_ass_v1.mkv",
                   "subs.ass",
                   kStreamAss,
                   "-c:s ass",
                   "",
                   {{0.5, 1.25, "Hello, world"},
                    {2.0, 3.0, "Two\nlines\nhere"},
                    {3.5, 4.75, "Commas, kept, in text"}}}),
    [](const ::testing::TestParamInfo<StreamCase>& info) { return info.param.label; });

TEST(ExtractSubtitleStreamsErrorsTest, NoSubtitleStreamIsAnEmptyList) {
  const std::string path =
      testing::GeneratedMedia("no_subs_v1.mp4", "-f lavfi -i testsrc2=s=64x48:d=1:r=10 -c:v mpeg4");
  ASSERT_FALSE(path.empty());
  auto result = ExtractSubtitleStreams(path);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->empty());
}

TEST(ExtractSubtitleStreamsErrorsTest, NotMediaOrMissingFails) {
  const std::string dir = testing::ScratchDir("ExtractSubtitleStreamsErrorsTest");
  const std::string garbage = dir + "/garbage.mkv";
  ASSERT_TRUE(WriteFileAtomically(garbage, std::string(4096, '\x17')).ok());
  auto corrupt = ExtractSubtitleStreams(garbage);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().code(), ErrorCode::kCorruptData);
  EXPECT_THAT(corrupt.status().message(), HasSubstr(garbage));

  auto missing = ExtractSubtitleStreams(dir + "/missing.mp4");
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
}

TEST(ExtractSubtitleStreamsRealMediaTest, NasaClipHasTwoMovTextStreams) {
  const std::string dir = testing::SharedMediaDir();
  if (dir.empty()) REEL_SKIP_WITHOUT_REFERENCE(kSharedMedia) << "shared media corpus not present";
  const std::string path = dir + "/nasa_13013.mp4";
  if (!std::filesystem::exists(path))
    REEL_SKIP_WITHOUT_REFERENCE(kSharedMedia) << path << " not present";
  auto result = ExtractSubtitleStreams(path);
  ASSERT_TRUE(result.ok()) << result.status().ToString();

  std::map<std::string, std::vector<TextSegment>> by_stream;
  for (const TextSegment& segment : *result) by_stream[segment.source].push_back(segment);
  ASSERT_EQ(by_stream.size(), 2u);
  EXPECT_TRUE(by_stream.count("stream:2"));
  EXPECT_TRUE(by_stream.count("stream:5"));
  for (const auto& [source, segments] : by_stream) {
    SCOPED_TRACE(source);
    EXPECT_EQ(segments.size(), 4u);  // as `ffmpeg -i nasa_13013.mp4 -map 0:s:N -f srt -` shows
    double previous_start = -1;
    for (const TextSegment& segment : segments) {
      EXPECT_FALSE(segment.text.empty());
      EXPECT_EQ(segment.language, "eng");
      EXPECT_GE(segment.start_s, 0);
      EXPECT_GT(segment.start_s, previous_start);
      EXPECT_GT(segment.end_s, segment.start_s);
      EXPECT_LT(segment.end_s - segment.start_s, 30.0);
      previous_start = segment.start_s;
    }
  }
  // The first line of narration, as `ffmpeg -i nasa_13013.mp4 -f srt -` prints it.
  const TextSegment& first = by_stream["stream:2"][0];
  EXPECT_NEAR(first.start_s, 0.21, 1e-6);
  EXPECT_NEAR(first.end_s, 4.26, 1e-6);
  EXPECT_EQ(first.text, "NAR: This is the optical and science segment of the Webb");
  const TextSegment& last = by_stream["stream:5"].back();
  EXPECT_NEAR(last.start_s, 12.47, 1e-6);
  EXPECT_NEAR(last.end_s, 16.57, 1e-6);
  EXPECT_EQ(last.text, "This half of the observatory element successfully");
  // The whole result is in timeline order.
  for (size_t k = 1; k < result->size(); ++k) {
    EXPECT_LE((*result)[k - 1].start_s, (*result)[k].start_s);
  }
}

}  // namespace
}  // namespace reel::pipeline
