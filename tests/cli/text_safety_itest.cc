// Text that is not UTF-8, end to end through the `reel` binary: Latin-1 container tags and file
// names (`reel probe --json`, `reel frames`, `reel run` + `reel results` / `reel query`), and
// subtitles and documents in legacy encodings (`reel search`).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "base/utf8.h"
#include "tests/cli/cli_test_util.h"

namespace reel {
namespace {

using testing::GeneratedMedia;
using testing::QueryInt;
using testing::QueryJson;
using testing::ReadText;
using testing::Reel;
using testing::ScratchDir;
using testing::ShellQuote;
using testing::WriteText;

const std::string kLatin1Name = "clip\xE9.mkv";  // "clipé.mkv" in ISO-8859-1
const std::string kCafeUtf8 = "caf\xC3\xA9";

// A 1-second Matroska clip whose title and stream language tags hold a raw Latin-1 byte, as an
// old tagger writes them (the ffmpeg command line passes the byte through as it is).
std::string Latin1TaggedClip() {
  return GeneratedMedia("latin1_tags.mkv", "-f lavfi -i testsrc=s=64x48:r=10:d=1 -metadata " +
                                               ShellQuote("title=caf\xE9") + " -metadata:s:v:0 " +
                                               ShellQuote("language=fr\xE9") + " -c:v mpeg4");
}

// A scratch copy of the clip under the Latin-1 file name.
std::string Latin1NamedClip(const std::string& dir) {
  const std::string path = dir + "/" + kLatin1Name;
  std::filesystem::copy_file(Latin1TaggedClip(), path);
  return path;
}

TEST(TextSafetyTest, ProbeJsonWithLatin1TagsAndFileName) {
  const std::string dir = ScratchDir("TextSafety_Probe");
  const std::string path = Latin1NamedClip(dir);
  auto r = Reel("probe --json " + ShellQuote(path));
  // Before: terminate called after throwing json type_error 316 (invalid UTF-8), exit 134.
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(IsValidUtf8(r.out));
  nlohmann::json j = nlohmann::json::parse(r.out);
  // The path is shown escaped, and the escape gives the bytes back.
  EXPECT_EQ(j["path"], dir + "/clip\\xE9.mkv");
  EXPECT_EQ(UnescapeInvalidUtf8(j["path"].get<std::string>()), path);
  // Tags that are not UTF-8 are read as Windows-1252.
  EXPECT_EQ(j["title"], kCafeUtf8);
  EXPECT_EQ(j["streams"][0]["language"], "fr\xC3\xA9");

  auto text = Reel("probe " + ShellQuote(path));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(IsValidUtf8(text.out));
  EXPECT_NE(text.out.find("clip\\xE9.mkv"), std::string::npos) << text.out;
}

TEST(TextSafetyTest, FramesWritesReportForLatin1FileName) {
  const std::string dir = ScratchDir("TextSafety_Frames");
  const std::string path = Latin1NamedClip(dir);
  auto r = Reel("frames " + ShellQuote(path) + " --count 2 -o " + ShellQuote(dir + "/out"));
  // Before: frames.json written, then an abort on report.json's "path" (exit 134, no report).
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(IsValidUtf8(r.err)) << r.err;
  const std::string report_text = ReadText(dir + "/out/report.json");
  ASSERT_FALSE(report_text.empty());
  nlohmann::json report = nlohmann::json::parse(report_text);
  EXPECT_EQ(UnescapeInvalidUtf8(report["path"].get<std::string>()), path);
  EXPECT_EQ(report["returned"], 2);
  nlohmann::json frames = nlohmann::json::parse(ReadText(dir + "/out/frames.json"));
  EXPECT_EQ(frames.size(), 2u);
}

TEST(TextSafetyTest, RunResultsQueryAndRerunWithLatin1Names) {
  const std::string dir = ScratchDir("TextSafety_Run");
  Latin1NamedClip(dir);
  // A Latin-1 side-car (clipé.srt beside clipé.mkv) and a Latin-1 document with a Latin-1 name.
  WriteText(dir + "/clip\xE9.srt", "1\n00:00:00,000 --> 00:00:01,000\nUn caf\xE9 cr\xE8me\n\n");
  WriteText(dir + "/doc\xE9.txt", "Le caf\xE9 est bon.\n");
  WriteText(dir + "/job.yaml", "name: latin\ninputs:\n  - \"*.mkv\"\n  - \"*.txt\"\n");
  auto run = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream lines(run.err);
  for (std::string line; std::getline(lines, line);) {
    ASSERT_TRUE(IsValidUtf8(line)) << line;
    EXPECT_NO_THROW(nlohmann::json::parse(line)) << line;
  }
  const std::string db = dir + "/latin.db";

  // Paths are stored in their escaped form, valid UTF-8 that unescapes to the bytes.
  nlohmann::json items = QueryJson(db, "SELECT path, media_json FROM items ORDER BY path");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0]["path"], dir + "/clip\\xE9.mkv");
  EXPECT_EQ(items[1]["path"], dir + "/doc\\xE9.txt");
  EXPECT_EQ(UnescapeInvalidUtf8(items[0]["path"].get<std::string>()), dir + "/" + kLatin1Name);
  nlohmann::json media = nlohmann::json::parse(items[0]["media_json"].get<std::string>());
  EXPECT_EQ(media["streams"][0]["language"], "fr\xC3\xA9");
  EXPECT_EQ(media["text_encodings"]["sidecar:clip\\xE9.srt"], "windows-1252");
  // No TEXT column holds invalid UTF-8.
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM segments WHERE text LIKE '%' || char(65533) || '%'"),
            0);

  auto results = Reel("results --db " + ShellQuote(db) + " --format json");
  ASSERT_EQ(results.exit_code, 0) << results.err;
  nlohmann::json rows = nlohmann::json::parse(results.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["status"], "done");
  EXPECT_EQ(rows[1]["status"], "done");

  // The encoding guess is a warning event naming the file.
  nlohmann::json warnings =
      QueryJson(db, "SELECT message FROM events WHERE level = 'warning' ORDER BY id");
  ASSERT_EQ(warnings.size(), 2u);
  std::string all;
  for (const auto& w : warnings) all += w["message"].get<std::string>() + "\n";
  EXPECT_NE(all.find("clip\\xE9.srt: not valid UTF-8; read as windows-1252"), std::string::npos)
      << all;
  EXPECT_NE(all.find("doc\\xE9.txt: not valid UTF-8; read as windows-1252"), std::string::npos)
      << all;

  // Search finds the converted text in both.
  auto search = Reel("search --db " + ShellQuote(db) + " " + kCafeUtf8 + " --format json");
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_EQ(nlohmann::json::parse(search.out).size(), 2u) << search.out;

  // A rerun finds every item up to date under its escaped path.
  auto rerun = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  nlohmann::json summary = testing::LastJsonLine(rerun.err);
  EXPECT_EQ(summary["skipped"], 2) << rerun.err;
  EXPECT_EQ(summary["done"], 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items"), 2);
  auto plan = Reel("plan job.yaml --format json", dir);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  for (const auto& row : nlohmann::json::parse(plan.out)) EXPECT_EQ(row["action"], "skip") << row;
}

// One subtitle item per encoding; each must be found by `reel search café`.
TEST(TextSafetyTest, SubtitleEncodingsAreDetectedConvertedAndReported) {
  const std::string dir = ScratchDir("TextSafety_Encodings");
  const std::string cue = "1\r\n00:00:01,000 --> 00:00:02,500\r\nUn caf\xC3\xA9 cr\xC3\xA8me\r\n";
  auto utf16 = [&](bool little_endian) {
    std::u16string units = u"1\r\n00:00:01,000 --> 00:00:02,500\r\nUn caf\u00e9 cr\u00e8me\r\n";
    std::string out = little_endian ? "\xFF\xFE" : "\xFE\xFF";
    for (char16_t u : units) {
      char lo = static_cast<char>(u & 0xFF), hi = static_cast<char>(u >> 8);
      out += little_endian ? std::string{lo, hi} : std::string{hi, lo};
    }
    return out;
  };
  WriteText(dir + "/utf8.srt", cue);
  WriteText(dir + "/utf8bom.srt", "\xEF\xBB\xBF" + cue);
  WriteText(dir + "/utf16le.srt", utf16(true));
  WriteText(dir + "/utf16be.srt", utf16(false));
  WriteText(dir + "/cp1252.srt", "1\n00:00:01,000 --> 00:00:02,500\nUn caf\xE9 cr\xE8me \x80\n");
  WriteText(dir + "/job.yaml", "name: enc\ninputs:\n  - \"*.srt\"\n");
  auto run = Reel("run job.yaml", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string db = dir + "/enc.db";

  auto search = Reel("search --db " + ShellQuote(db) + " " + kCafeUtf8 + " --format json");
  ASSERT_EQ(search.exit_code, 0) << search.err;
  nlohmann::json hits = nlohmann::json::parse(search.out);
  std::set<std::string> found;
  for (const auto& hit : hits) {
    found.insert(std::filesystem::path(hit["path"].get<std::string>()).filename().string());
  }
  EXPECT_EQ(found, (std::set<std::string>{"cp1252.srt", "utf16be.srt", "utf16le.srt", "utf8.srt",
                                          "utf8bom.srt"}))
      << search.out;
  // Windows-1252's 0x80 is the euro sign.
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM segments WHERE text = 'Un caf\xC3\xA9 cr\xC3\xA8me "
                     "\xE2\x82\xAC'"),
            1);

  // What was detected: UTF-16 by its byte-order mark as info, the guess as a warning.
  nlohmann::json events =
      QueryJson(db,
                "SELECT i.path, e.level, e.message FROM events e JOIN items i ON i.id = e.item_id "
                "ORDER BY i.path");
  std::map<std::string, std::pair<std::string, std::string>> by_file;
  for (const auto& e : events) {
    by_file[std::filesystem::path(e["path"].get<std::string>()).filename().string()] = {
        e["level"], e["message"]};
  }
  EXPECT_EQ(by_file.count("utf8.srt"), 0u);
  EXPECT_EQ(by_file.count("utf8bom.srt"), 0u);
  EXPECT_EQ(by_file["utf16le.srt"].first, "info");
  EXPECT_NE(by_file["utf16le.srt"].second.find("UTF-16LE (byte-order mark)"), std::string::npos);
  EXPECT_NE(by_file["utf16be.srt"].second.find("UTF-16BE (byte-order mark)"), std::string::npos);
  EXPECT_EQ(by_file["cp1252.srt"].first, "warning");
  EXPECT_NE(by_file["cp1252.srt"].second.find("read as windows-1252"), std::string::npos);
  nlohmann::json media =
      QueryJson(db, "SELECT media_json FROM items WHERE path LIKE '%cp1252.srt'");
  ASSERT_EQ(media.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(media[0]["media_json"].get<std::string>())["text_encodings"],
            nlohmann::json({{"subtitles", "windows-1252"}}));
}

TEST(TextSafetyTest, FallbackEncodingFromTheJobOrTheCommandLine) {
  const std::string dir = ScratchDir("TextSafety_Fallback");
  // "привет" in Windows-1251, and "5 €" in ISO-8859-15 (0xA4 is the euro sign there).
  WriteText(dir + "/ru.srt", "1\n00:00:01,000 --> 00:00:02,000\n\xEF\xF0\xE8\xE2\xE5\xF2\n");
  WriteText(dir + "/job.yaml", "name: ru\ninputs: [ru.srt]\n");
  const std::string privet = "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82";
  auto run = Reel("run job.yaml --fallback-encoding windows-1251", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(QueryInt(dir + "/ru.db", "SELECT count(*) FROM segments WHERE text = '" + privet + "'"),
            1);
  auto search = Reel("search --db ru.db " + privet + " --format json", dir);
  EXPECT_EQ(nlohmann::json::parse(search.out).size(), 1u) << search.out;
  // A different fallback is a different setting: the item is redone with it.
  auto rerun = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  EXPECT_EQ(testing::LastJsonLine(rerun.err)["done"], 1) << rerun.err;
  // An unknown encoding is a usage error naming it.
  auto bad = Reel("run job.yaml --fallback-encoding klingon-9", dir);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("klingon-9"), std::string::npos) << bad.err;

  WriteText(dir + "/eu.srt", "1\n00:00:01,000 --> 00:00:02,000\n5 \xA4\n");
  WriteText(dir + "/eu.yaml",
            "name: eu\ninputs: [eu.srt]\ntext:\n  fallback_encoding: iso-8859-15\n");
  ASSERT_EQ(Reel("run eu.yaml", dir).exit_code, 0);
  EXPECT_EQ(QueryInt(dir + "/eu.db", "SELECT count(*) FROM segments WHERE text = '5 \xE2\x82\xAC'"),
            1);
  WriteText(dir + "/bad.yaml", "name: bad\ninputs: [eu.srt]\ntext:\n  fallback_encoding: nope\n");
  auto invalid = Reel("validate bad.yaml", dir);
  EXPECT_EQ(invalid.exit_code, 2);
  EXPECT_NE(invalid.err.find("bad.yaml:4:22: 'text.fallback_encoding': unknown text encoding "
                             "'nope'"),
            std::string::npos)
      << invalid.err;
}

// A Latin-1 .srt muxed into Matroska keeps its bytes; FFmpeg's decoder used to drop every cue
// ("Invalid UTF-8 in decoded subtitles text") and the stream was skipped.
TEST(TextSafetyTest, LegacySubtitleStreamInAContainer) {
  const std::string dir = ScratchDir("TextSafety_Stream");
  WriteText(dir + "/latin.srt", "1\n00:00:00,000 --> 00:00:01,000\nUn caf\xE9 cr\xE8me\n\n");
  std::filesystem::create_directories(dir + "/media");
  auto made = testing::RunCommand(
      "ffmpeg -y -hide_banner -loglevel error -f lavfi -i testsrc=s=64x48:r=10:d=2 -i " +
      ShellQuote(dir + "/latin.srt") + " -map 0 -map 1 -c:v mpeg4 -c:s copy " +
      ShellQuote(dir + "/media/muxed.mkv"));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  WriteText(dir + "/job.yaml", "name: mux\ninputs: [media/muxed.mkv]\n");
  auto run = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("subtitle stream 1 (1 cue): not valid UTF-8; read as windows-1252"),
            std::string::npos)
      << run.err;
  auto search = Reel("search --db mux.db " + kCafeUtf8 + " --format json", dir);
  nlohmann::json hits = nlohmann::json::parse(search.out);
  ASSERT_EQ(hits.size(), 1u) << search.out;
  EXPECT_EQ(hits[0]["source"], "subtitle:1");
}

}  // namespace
}  // namespace reel
