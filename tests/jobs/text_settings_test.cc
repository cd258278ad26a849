// Outside text in the jobs layer: DumpJson never throws, the text.fallback_encoding setting, and
// its place in the settings hash.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "base/utf8.h"
#include "jobs/json_output.h"
#include "jobs/run/item_plan.h"
#include "jobs/spec/job_spec.h"
#include "tests/support/test_media.h"

namespace reel::jobs {
namespace {

TEST(DumpJsonTest, InvalidUtf8IsEscapedNotThrown) {
  nlohmann::json j = {{"path", "clip\xE9.mkv"}, {"ok", "caf\xC3\xA9"}, {"n", 1}};
  j["nested"] = nlohmann::json::array({"\xFF", nlohmann::json{{"k\xE9", "v"}}});
  EXPECT_THROW(j.dump(), nlohmann::json::type_error);  // what used to abort `reel probe --json`
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(j));
  ASSERT_TRUE(IsValidUtf8(text));
  nlohmann::json back = nlohmann::json::parse(text);
  EXPECT_EQ(back["path"], "clip\\xE9.mkv");
  EXPECT_EQ(back["ok"], "caf\xC3\xA9");
  EXPECT_EQ(back["nested"][0], "\\xFF");
  EXPECT_EQ(back["nested"][1]["k\\xE9"], "v");
  // Valid documents are written exactly as dump() writes them.
  nlohmann::json valid = {{"a", "caf\xC3\xA9"}, {"b", {1, 2}}};
  EXPECT_EQ(DumpJson(valid), valid.dump());
  EXPECT_EQ(DumpJson(valid, 2), valid.dump(2));
}

JobSpec ParseTextJob(const std::string& text) {
  auto job = ParseJobText(text, "job.yaml", "/base");
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? *job : JobSpec{};
}

TEST(TextSettingsTest, FallbackEncodingDefaultsToWindows1252AndRoundTrips) {
  JobSpec job = ParseTextJob("name: t\ninputs: [a.srt]\n");
  EXPECT_EQ(job.text.fallback_encoding, "windows-1252");
  job = ParseTextJob("name: t\ninputs: [a.srt]\ntext:\n  fallback_encoding: windows-1251\n");
  EXPECT_EQ(job.text.fallback_encoding, "windows-1251");
  JobSpec again = ParseTextJob(RenderResolvedJob(job));
  EXPECT_EQ(again.text.fallback_encoding, "windows-1251");

  auto bad = ParseJobText("name: t\ninputs: [a.srt]\ntext:\n  fallback_encoding: nope\n  x: 1\n",
                          "job.yaml", "/base");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("job.yaml:4:22: 'text.fallback_encoding': unknown text "
                                        "encoding 'nope'"),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("unknown key 'x' in 'text'"), std::string::npos);
}

TEST(TextSettingsTest, FallbackEncodingIsPartOfTheSettingsOfTextItems) {
  const std::string dir = reel::testing::ScratchDir("TextSettingsTest");
  std::ofstream(dir + "/clip.mp4") << "x";
  JobSpec a = ParseTextJob("name: t\ninputs: [a]\n");
  JobSpec b = a;
  b.text.fallback_encoding = "windows-1251";
  for (InputKind kind : {InputKind::kDocument, InputKind::kSubtitle}) {
    InputFile input{.path = dir + "/a.txt", .kind = kind};
    EXPECT_NE(ItemSettingsHash(a, input), ItemSettingsHash(b, input)) << InputKindName(kind);
  }
  // A video without side-car subtitles does not read text files: unchanged.
  InputFile video{.path = dir + "/clip.mp4", .kind = InputKind::kVideo};
  EXPECT_EQ(ItemSettingsHash(a, video), ItemSettingsHash(b, video));
  std::ofstream(dir + "/clip.srt") << "1\n00:00:00,000 --> 00:00:01,000\nx\n";
  EXPECT_NE(ItemSettingsHash(a, video), ItemSettingsHash(b, video));
}

// Found by the job_file fuzz target: a name with Latin-1 bytes passed the 128-character check,
// then rendered with U+FFFD for each byte (3 bytes each) and no longer parsed back.
TEST(TextSettingsTest, JobFileInALegacyEncodingIsReadAsWindows1252) {
  const std::string latin1 = "name: caf\xE9\ndescription: cr\xE8me\ninputs: [a.srt]\n";
  auto job = ParseJobText(latin1, "job.yaml", "/base");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->name, "caf\xC3\xA9");
  EXPECT_EQ(job->description, "cr\xC3\xA8me");
  ASSERT_EQ(job->warnings.size(), 1u);
  EXPECT_EQ(job->warnings[0],
            "job.yaml: the job file is not valid UTF-8; read as windows-1252 (the fallback "
            "encoding); save it as UTF-8 (to name a file whose name is not UTF-8, use a glob)");
  auto again = ParseJobText(RenderResolvedJob(*job), "again.yaml", "/base");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->name, job->name);

  // A 128-byte name of Latin-1 letters is 256 bytes of UTF-8: too long, said once, at parse time.
  auto long_name =
      ParseJobText("name: " + std::string(128, '\xE9') + "\ninputs: [a]\n", "job.yaml", "/base");
  ASSERT_FALSE(long_name.ok());
  EXPECT_NE(long_name.status().message().find("longer than 128"), std::string::npos);

  // UTF-16 with a byte-order mark is read without a warning.
  std::string utf16 = "\xFF\xFE";
  for (char c : std::string("name: t\ninputs: [a]\n")) {
    utf16 += c;
    utf16 += '\0';
  }
  auto wide = ParseJobText(utf16, "job.yaml", "/base");
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_EQ(wide->name, "t");
  EXPECT_TRUE(wide->warnings.empty());
}

}  // namespace
}  // namespace reel::jobs
