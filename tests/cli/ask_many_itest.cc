// `reel ask` over several videos and images (issue 15, item 3): one question over every file in
// one context (jobs/context/group_context.h), against the fake OpenAI-compatible server
// (tests/support/fake_openai_server.py). It asked about each video or image alone (an answer
// each, under "== FILE ==" headers).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"
#include "tests/support/fake_model_server.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A clip of `seconds` at `size`, generated once per build tree: testsrc2, or with `noise`
// random pixels (no two frames alike, so dedupe leaves the fit to the steps after it).
std::string AskManyClip(int seconds, const std::string& size, bool noise = false) {
  const std::string length = std::to_string(seconds);
  if (noise) {
    return GeneratedMedia("ask_many_noise_" + size + "_" + length + ".mp4",
                          "-f lavfi -i 'nullsrc=size=" + size + ":rate=25:duration=" + length +
                              ",geq=lum=random(1)*255:cb=128:cr=128' -c:v libx264 -preset "
                              "ultrafast -crf 45 -pix_fmt yuv420p");
  }
  return GeneratedMedia("ask_many_" + size + "_" + length + ".mp4",
                        "-f lavfi -i testsrc2=size=" + size + ":rate=25:duration=" + length +
                            " -c:v libx264 -pix_fmt yuv420p");
}

// A folder with media/a.mp4, media/b.mp4 (clips of `seconds` at `size`), media/diagram.png and
// media/notes.md; the ask database goes to data/reel/reel.db.
struct AskManyDir {
  AskManyDir(const std::string& name, int seconds, const std::string& size, bool noise = false)
      : dir(ScratchDir(name)) {
    fs::create_directories(dir + "/media");
    fs::copy_file(AskManyClip(seconds, size, noise), dir + "/media/a.mp4");
    fs::copy_file(AskManyClip(seconds + 1, size, noise), dir + "/media/b.mp4");
    fs::copy_file(GeneratedMedia("ask_many_diagram.png",
                                 "-f lavfi -i testsrc2=size=320x240:rate=1:duration=1 -frames:v 1"),
                  dir + "/media/diagram.png");
    WriteText(dir + "/media/notes.md", "# Notes\n\nThe diagram is a test pattern.\n");
  }
  CommandResult Ask(const std::string& args) const {
    return RunCommand("cd " + ShellQuote(dir) + " && XDG_DATA_HOME=" + ShellQuote(dir + "/data") +
                      " REEL_DB= REEL_MODEL_URL= " + ShellQuote(ReelPath()) + " " + args);
  }
  std::string db() const { return dir + "/data/reel/reel.db"; }
  int64_t Frames(const std::string& file) const {
    return QueryInt(db(),
                    "SELECT count(*) FROM frames f JOIN items i ON i.id = f.item_id WHERE i.path "
                    "LIKE '%/" +
                        file + "'");
  }
  std::string dir;
};

constexpr char kFiles[] = "media/a.mp4 media/b.mp4 media/diagram.png media/notes.md ";
constexpr char kQuestion[] = "Which clip shows the diagram?";

// The user turn of a chat request as one string: the text parts as they are, each image "<IMG>".
std::string UserTurn(const json& chat) {
  std::string out;
  for (const json& m : chat["body"]["messages"]) {
    if (m["role"] != "user" || !m["content"].is_array()) continue;
    for (const json& part : m["content"]) {
      if (part["type"] == "text") out += part["text"].get<std::string>();
      if (part["type"] == "image_url") out += "<IMG>";
    }
  }
  return out;
}

// The manifest of the newest context of a.mp4 (the item the group's question is stored under)
// over the files (not a reduce over answers).
json NewestManifest(const AskManyDir& d) {
  json rows = QueryJson(d.db(),
                        "SELECT c.manifest_json FROM contexts c JOIN items i ON i.id = c.item_id "
                        "WHERE i.path LIKE '%/a.mp4' AND json_extract(c.manifest_json, "
                        "'$.sources') IS NOT NULL ORDER BY c.id DESC LIMIT 1");
  if (rows.empty()) return json::object();
  return json::parse(rows[0]["manifest_json"].get<std::string>());
}

// Two clips, an image and a note: ONE request whose user turn holds both clips' frames, each clip
// headed by its file with times from its own start, then the image, and the note; ONE stored
// answer (under a.mp4, the first file) with its question, shown by results and show; the same ask
// again replays it without a request.
TEST(AskManyTest, TwoClipsAnImageAndANoteAreOneRequestAndOneAnswer) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const AskManyDir d("ask_many_one", 3, "320x180");
  const std::string ask =
      "ask " + std::string(kFiles) + "'" + kQuestion + "' --endpoint " + server.endpoint();
  CommandResult asked = d.Ask(ask);
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  EXPECT_EQ(asked.out, std::string("Answer to: ") + kQuestion + "\n");  // one answer, no headers
  std::vector<json> chats = server.ChatLog();
  ASSERT_EQ(chats.size(), 1u);
  const std::string turn = UserTurn(chats[0]);
  const size_t v1 = turn.find("Video 1: a.mp4");
  const size_t v2 = turn.find("Video 2: b.mp4");
  const size_t i1 = turn.find("Image 1: diagram.png");
  ASSERT_NE(v1, std::string::npos) << turn;
  ASSERT_NE(v2, std::string::npos) << turn;
  ASSERT_NE(i1, std::string::npos) << turn;
  EXPECT_LT(v1, v2);
  EXPECT_LT(v2, i1);
  EXPECT_NE(turn.find("attached:notes.md"), std::string::npos) << turn;
  EXPECT_NE(turn.find("The diagram is a test pattern."), std::string::npos) << turn;
  // Every stored frame of each clip, under its heading; times restart at each clip's start.
  ASSERT_GT(d.Frames("a.mp4"), 1);
  ASSERT_GT(d.Frames("b.mp4"), d.Frames("a.mp4"));  // b is a second longer
  EXPECT_EQ(CountOccurrences(turn, "<IMG>", v1, v2), static_cast<size_t>(d.Frames("a.mp4")))
      << turn;
  EXPECT_EQ(CountOccurrences(turn, "<IMG>", v2, i1), static_cast<size_t>(d.Frames("b.mp4")))
      << turn;
  EXPECT_EQ(CountOccurrences(turn, "<IMG>", i1), 1u) << turn;
  EXPECT_EQ(CountOccurrences(turn, "Frame at 0.0 s", v1, v2), 1u) << turn;
  EXPECT_EQ(CountOccurrences(turn, "Frame at 0.0 s", v2, i1), 1u) << turn;
  EXPECT_LT(turn.find("Frame at 4.0 s", v2), i1) << turn;  // b's own times (a is 3 s long)
  EXPECT_EQ(CountOccurrences(turn, "Frame at 4.0 s", v1, v2), 0u) << turn;
  // The question is last.
  EXPECT_EQ(turn.substr(turn.size() - std::string(kQuestion).size()), kQuestion);

  // Stored: three items read, one question asked, one answer, under a.mp4, with its question.
  EXPECT_EQ(QueryInt(d.db(), "SELECT count(*) FROM items WHERE status = 'done'"), 3);
  EXPECT_EQ(QueryInt(d.db(), "SELECT count(*) FROM tasks"), 1);
  json answers = QueryJson(d.db(), "SELECT path, question FROM answers");
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0]["path"], d.dir + "/media/a.mp4");
  EXPECT_EQ(answers[0]["question"], kQuestion);
  // The context's manifest names the files, their frames and their sizes.
  const json manifest = NewestManifest(d);
  ASSERT_TRUE(manifest.contains("sources")) << manifest.dump();
  ASSERT_EQ(manifest["sources"].size(), 3u);
  EXPECT_EQ(manifest["sources"][1]["path"], d.dir + "/media/b.mp4");
  EXPECT_EQ(manifest["sources"][2]["kind"], "image");
  EXPECT_EQ(manifest["segment"]["count"], 1);

  CommandResult results = d.Ask("results --ask-db --format json");
  ASSERT_EQ(results.exit_code, 0) << results.err;
  json rows = json::parse(results.out);
  ASSERT_EQ(rows.size(), 1u) << results.out;
  EXPECT_EQ(rows[0]["question"], kQuestion);
  CommandResult show = d.Ask("show --ask-db a.mp4");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find(std::string("Question: ") + kQuestion), std::string::npos) << show.out;
  EXPECT_NE(show.out.find(std::string("Answer to: ") + kQuestion), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("b.mp4"), std::string::npos) << show.out;  // the files it covers

  // Asked again: the stored answer, no request.
  CommandResult again = d.Ask(ask);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, std::string("Answer to: ") + kQuestion + "\n");
  EXPECT_NE(again.err.find("answered before"), std::string::npos) << again.err;
  EXPECT_EQ(server.ChatLog().size(), 1u);

  // Times in the answer link to the file named before them (else to a.mp4, the item's own file).
  server.Script(R"([{"kind": "content",
                     "content": "The diagram is in b.mp4 at 00:03. In Video 1 it is at 00:01."}])");
  CommandResult where =
      d.Ask("ask " + std::string(kFiles) + "'Where?' --endpoint " + server.endpoint());
  ASSERT_EQ(where.exit_code, 0) << where.err;
  CommandResult linked = d.Ask("show --ask-db a.mp4");
  ASSERT_EQ(linked.exit_code, 0) << linked.err;
  EXPECT_NE(linked.out.find("Asked over: Video 1 " + d.dir + "/media/a.mp4, Video 2 " + d.dir +
                            "/media/b.mp4, Image 1 " + d.dir + "/media/diagram.png"),
            std::string::npos)
      << linked.out;
  EXPECT_NE(linked.out.find("in b.mp4 at 00:03 [b.mp4 frame 3, 00:03]."), std::string::npos)
      << linked.out;
  EXPECT_NE(linked.out.find("In Video 1 it is at 00:01 [frame 1, 00:01]."), std::string::npos)
      << linked.out;
}

// The report's page of the item an answer over several files is stored under (a.mp4): it names
// the files, each other one linked to its page, and links each time to the file named before it:
// a.mp4's to its frame on this page, b.mp4's to b.mp4's page at its nearest frame, a time past
// b.mp4's end and (with --item) a file without a page in the report as marked, unlinked spans.
// The page linked every time to a.mp4's own frames.
TEST(AskManyTest, TheReportLinksEachTimeToTheFileNamedBeforeIt) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const AskManyDir d("ask_many_report", 3, "320x180");
  server.Script(R"([{"kind": "content",
                     "content": "In a.mp4 at 00:01 the pattern moves; b.mp4 at 00:02 shows it too, and at 00:40 nothing."}])");
  CommandResult asked = d.Ask("ask media/a.mp4 media/b.mp4 media/diagram.png 'Where?' --endpoint " +
                              server.endpoint());
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  const int64_t a = QueryInt(d.db(), "SELECT id FROM items WHERE path LIKE '%/a.mp4'");
  const int64_t b = QueryInt(d.db(), "SELECT id FROM items WHERE path LIKE '%/b.mp4'");
  const int64_t image = QueryInt(d.db(), "SELECT id FROM items WHERE path LIKE '%/diagram.png'");
  // The frames the times are nearest to (sampled at 1 fps: 00:01 and 00:02 are frames).
  const int64_t a_frame =
      QueryInt(d.db(), "SELECT sample_index FROM frames WHERE item_id = " + std::to_string(a) +
                           " AND abs(time_seconds - 1) < 0.3");
  const int64_t b_frame =
      QueryInt(d.db(), "SELECT sample_index FROM frames WHERE item_id = " + std::to_string(b) +
                           " AND abs(time_seconds - 2) < 0.3");
  const std::string b_page = "../items/" + std::to_string(b) + ".html";

  const std::string site = d.dir + "/site";
  CommandResult report = d.Ask("report --ask-db -o " + ShellQuote(site));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string page = ReadText(site + "/items/" + std::to_string(a) + ".html");
  ASSERT_FALSE(page.empty());
  // 00:01 follows "a.mp4": this page's frame; 00:02 follows "b.mp4": b.mp4's page at its frame.
  const size_t first = page.find(">00:01</a>");
  const size_t second = page.find(">00:02</a>");
  ASSERT_NE(first, std::string::npos) << page;
  ASSERT_NE(second, std::string::npos) << page;
  const std::string first_link =
      page.substr(page.rfind("<a ", first), first - page.rfind("<a ", first));
  const std::string second_link =
      page.substr(page.rfind("<a ", second), second - page.rfind("<a ", second));
  EXPECT_NE(first_link.find("href=\"#f" + std::to_string(a_frame) + "\""), std::string::npos)
      << first_link;
  EXPECT_NE(second_link.find("href=\"" + b_page + "#f" + std::to_string(b_frame) + "\""),
            std::string::npos)
      << second_link;
  EXPECT_NE(second_link.find("in b.mp4: frame " + std::to_string(b_frame)), std::string::npos)
      << second_link;
  // The files it was asked over: this item's own, the others linked to their pages.
  const size_t over = page.find("<p class=\"asked-over\">Asked over: ");
  EXPECT_NE(over, std::string::npos) << page;
  const std::string files =
      over == std::string::npos ? "" : page.substr(over, page.find("</p>", over) - over);
  EXPECT_NE(files.find(">a.mp4</span>"), std::string::npos) << files;
  EXPECT_NE(
      files.find("href=\"" + b_page + "\" title=\"Video 2: " + d.dir + "/media/b.mp4\">b.mp4</a>"),
      std::string::npos)
      << files;
  EXPECT_NE(files.find("href=\"../items/" + std::to_string(image) + ".html\""), std::string::npos)
      << files;
  // 00:40 is past b.mp4's end (4 s): marked, not linked.
  EXPECT_NE(page.find("title=\"00:40.0 in b.mp4: past the end of b.mp4\">00:40</span>"),
            std::string::npos)
      << page;
  // b.mp4's page has the frame the link points at.
  const std::string b_html = ReadText(site + "/items/" + std::to_string(b) + ".html");
  EXPECT_NE(b_html.find("id=\"f" + std::to_string(b_frame) + "\""), std::string::npos);

  // A report of a.mp4 alone: b.mp4 has no page there, so its time and name are not links.
  const std::string alone = d.dir + "/alone";
  CommandResult one = d.Ask("report --ask-db --item a.mp4 -o " + ShellQuote(alone));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::string alone_page = ReadText(alone + "/items/" + std::to_string(a) + ".html");
  EXPECT_EQ(alone_page.find(b_page), std::string::npos) << alone_page;
  EXPECT_NE(alone_page.find("in b.mp4: b.mp4 has no page in this report\">00:02</span>"),
            std::string::npos)
      << alone_page;
  EXPECT_NE(alone_page.find("href=\"#f" + std::to_string(a_frame) + "\""), std::string::npos);
}

// A server that does not answer: the files are read and the one request over all of them waits.
// `reel export --ask-db` writes it as ONE Batch line over every file (it wrote nothing: the
// stored ask job had lost context.group), `reel import` stores its answer under a.mp4, and
// `reel context --ask-db a.mp4` shows that context with its files (it had no --ask-db).
TEST(AskManyTest, AWaitingQuestionIsExportedAndShownAsOneContextOverEveryFile) {
  std::string endpoint;
  {
    FakeModelServer gone;  // started and stopped: nothing listens at its address
    ASSERT_TRUE(gone.started());
    endpoint = gone.endpoint();
  }
  const AskManyDir d("ask_many_export", 3, "320x180");
  CommandResult asked = d.Ask("ask media/a.mp4 media/b.mp4 media/diagram.png '" +
                              std::string(kQuestion) + "' --endpoint " + endpoint);
  EXPECT_EQ(asked.exit_code, 1) << asked.err;
  EXPECT_NE(asked.err.find("the question waits"), std::string::npos) << asked.err;
  ASSERT_EQ(QueryInt(d.db(), "SELECT count(*) FROM tasks"), 1);
  const std::string custom_id =
      QueryJson(d.db(), "SELECT custom_id FROM tasks")[0]["custom_id"].get<std::string>();

  const std::string batch = d.dir + "/batch.jsonl";
  CommandResult exported = d.Ask("export --ask-db --format openai-batch " + ShellQuote(batch));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::vector<json> lines;
  std::istringstream text(ReadText(batch));
  for (std::string line; std::getline(text, line);) {
    if (!line.empty()) lines.push_back(json::parse(line));
  }
  ASSERT_EQ(lines.size(), 1u) << exported.err;
  EXPECT_EQ(lines[0]["custom_id"], custom_id);
  const std::string turn = UserTurn(lines[0]);
  const size_t v1 = turn.find("Video 1: a.mp4"), v2 = turn.find("Video 2: b.mp4"),
               i1 = turn.find("Image 1: diagram.png");
  ASSERT_NE(v1, std::string::npos) << turn;
  ASSERT_NE(v2, std::string::npos) << turn;
  ASSERT_NE(i1, std::string::npos) << turn;
  EXPECT_TRUE(v1 < v2 && v2 < i1) << turn;
  EXPECT_EQ(CountOccurrences(turn, "<IMG>", v2, i1), static_cast<size_t>(d.Frames("b.mp4")))
      << turn;

  // The batch's answer, read back: stored under a.mp4, its times linked to the files it names.
  const json answer = {
      {"id", "batch_req_1"},
      {"custom_id", custom_id},
      {"response",
       {{"status_code", 200},
        {"request_id", "req_1"},
        {"body",
         {{"id", "chatcmpl-1"},
          {"object", "chat.completion"},
          {"model", "MiniMax-M3"},
          {"choices",
           {{{"index", 0},
             {"message", {{"role", "assistant"}, {"content", "It is in b.mp4 at 00:02."}}},
             {"finish_reason", "stop"}}}},
          {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 8}, {"total_tokens", 108}}}}}}},
      {"error", nullptr}};
  WriteText(d.dir + "/results.jsonl", answer.dump() + "\n");
  CommandResult imported = d.Ask("import --ask-db " + ShellQuote(d.dir + "/results.jsonl"));
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  CommandResult show = d.Ask("show --ask-db a.mp4");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("Asked over: Video 1 " + d.dir + "/media/a.mp4"), std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("in b.mp4 at 00:02 [b.mp4 frame 2, 00:02]."), std::string::npos)
      << show.out;

  // The context, as the run built it: every file, and stored.
  CommandResult context = d.Ask("context --ask-db a.mp4");
  ASSERT_EQ(context.exit_code, 0) << context.err;
  EXPECT_NE(context.out.find("files      Video 1: " + d.dir + "/media/a.mp4\n"), std::string::npos)
      << context.out;
  EXPECT_NE(context.out.find("Video 2: " + d.dir + "/media/b.mp4\n"), std::string::npos)
      << context.out;
  EXPECT_NE(context.out.find("Image 1: " + d.dir + "/media/diagram.png\n"), std::string::npos)
      << context.out;
  EXPECT_NE(context.out.find("stored     yes"), std::string::npos) << context.out;
  CommandResult member = d.Ask("context --ask-db b.mp4");
  EXPECT_EQ(member.exit_code, 1) << member.out;
  EXPECT_NE(member.err.find("not asked about alone"), std::string::npos) << member.err;
}

// A token budget too small for every frame: the ask's fit steps (dedupe, thin_frames,
// shorten_text, split) thin both clips by the same share, each keeping its first and last frame;
// smaller still, the files are split into parts asked one by one, each part's frames under their
// file's heading, then once over the parts' answers.
TEST(AskManyTest, ASmallBudgetThinsBothClipsAlikeAndASmallerOneSplitsWithHeadings) {
  FakeServerOptions logged;
  logged.extra_args = {"--log-text"};  // whole texts in the log
  FakeModelServer server(logged);
  ASSERT_TRUE(server.started());
  const AskManyDir d("ask_many_fit", 8, "640x360", /*noise=*/true);
  const std::string ask = "ask " + std::string(kFiles) + "'" + kQuestion +
                          "' --max-output-tokens 100 --endpoint " + server.endpoint();
  CommandResult whole = d.Ask(ask);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const json full = NewestManifest(d);
  ASSERT_TRUE(full.contains("tokens")) << full.dump();
  ASSERT_TRUE(full["fit"].empty()) << full.dump();
  const int64_t total = full["tokens"]["total"];
  const int64_t image = full["tokens"]["image"];
  const int64_t margin = 1048576 - 100 - full["limit"].get<int64_t>();  // the template's
  const int64_t frames_a = d.Frames("a.mp4"), frames_b = d.Frames("b.mp4");
  ASSERT_GE(frames_a, 8);
  ASSERT_GE(frames_b, 9);

  // Half the images' tokens: thinned.
  const int64_t thin_budget = 100 + margin + total - image / 2;
  CommandResult thin = d.Ask(ask + " --token-budget " + std::to_string(thin_budget));
  ASSERT_EQ(thin.exit_code, 0) << thin.err;
  ASSERT_EQ(server.ChatLog().size(), 2u);
  const json thinned = NewestManifest(d);
  ASSERT_FALSE(thinned["fit"].empty()) << thinned.dump();
  std::vector<std::string> steps;
  for (const json& a : thinned["fit"]) steps.push_back(a["step"]);
  EXPECT_EQ(steps.back(), "thin_frames") << thinned.dump();
  EXPECT_LE(thinned["tokens"]["total"].get<int64_t>(), thinned["limit"].get<int64_t>());
  const std::string turn = UserTurn(server.ChatLog()[1]);
  const size_t v1 = turn.find("Video 1: a.mp4"), v2 = turn.find("Video 2: b.mp4"),
               i1 = turn.find("Image 1: diagram.png");
  ASSERT_TRUE(v1 < v2 && v2 < i1) << turn;
  const size_t kept_a = CountOccurrences(turn, "<IMG>", v1, v2),
               kept_b = CountOccurrences(turn, "<IMG>", v2, i1);
  EXPECT_GE(kept_a, 2u) << turn;
  EXPECT_GE(kept_b, 2u) << turn;
  EXPECT_LT(kept_a + kept_b, static_cast<size_t>(frames_a + frames_b)) << turn;
  // The same share of each clip (within one frame of rounding).
  const double share_a = static_cast<double>(kept_a) / static_cast<double>(frames_a);
  const double share_b = static_cast<double>(kept_b) / static_cast<double>(frames_b);
  EXPECT_NEAR(share_a, share_b, 1.0 / static_cast<double>(frames_a)) << turn;
  // First and last frame of each clip kept.
  EXPECT_NE(turn.find("Frame at 0.0 s", v1), std::string::npos);
  EXPECT_LT(turn.find("Frame at 0.0 s", v2), i1) << turn;
  EXPECT_EQ(CountOccurrences(turn, "<IMG>", i1), 1u) << turn;

  // Room for about three frames besides the text: split into parts.
  const int64_t per_frame = image / (frames_a + frames_b + 1);
  const int64_t split_budget = 100 + margin + (total - image) + 3 * per_frame;
  const size_t before = server.ChatLog().size();
  CommandResult split = d.Ask(ask + " --token-budget " + std::to_string(split_budget));
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_EQ(CountOccurrences(split.out, "Answer to: "), 1u)
      << split.out;  // one answer: the reduce's
  const std::vector<json> chats = server.ChatLog();
  ASSERT_GT(chats.size(), before + 2) << "several parts and a reduce";
  std::set<std::string> headed;
  size_t images = 0;
  for (size_t c = before; c + 1 < chats.size(); ++c) {  // the parts (the reduce is last)
    const std::string part = UserTurn(chats[c]);
    const size_t first_image = part.find("<IMG>");
    ASSERT_NE(first_image, std::string::npos) << part;
    images += CountOccurrences(part, "<IMG>");
    // Every part's frames are under a file heading, each heading before the frames of its file.
    bool heading = false;
    for (const char* h : {"Video 1: a.mp4", "Video 2: b.mp4", "Image 1: diagram.png"}) {
      const size_t at = part.find(h);
      if (at == std::string::npos) continue;
      headed.insert(h);
      heading = heading || at < first_image;
    }
    EXPECT_TRUE(heading) << part;
  }
  EXPECT_EQ(headed.size(), 3u);
  const json split_manifest = NewestManifest(d);
  EXPECT_EQ(images, split_manifest["frames"]["kept"].get<size_t>());  // each kept frame in a part
  const std::string reduce = chats.back()["body"].dump();
  EXPECT_NE(reduce.find("The files were too many for one request"), std::string::npos) << reduce;
  EXPECT_NE(reduce.find("Part 1 of"), std::string::npos) << reduce;
  EXPECT_NE(reduce.find("(a.mp4 0.0 s to "), std::string::npos) << reduce;  // parts name files
  EXPECT_NE(reduce.find("diagram.png)"), std::string::npos) << reduce;
  EXPECT_GT(split_manifest["segment"]["count"].get<int64_t>(), 1) << split_manifest.dump();
  EXPECT_EQ(QueryInt(d.db(), "SELECT count(*) FROM latest_answers"), 1);
}

// A file that cannot be decoded: the question, being over every file, is not asked; the message
// names the file and the reason; the others are read.
TEST(AskManyTest, AFileThatCannotBeReadFailsTheQuestionNamingIt) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const AskManyDir d("ask_many_broken", 3, "320x180");
  WriteText(d.dir + "/media/broken.mp4", "this is not a video");
  CommandResult ask = d.Ask("ask media/a.mp4 media/broken.mp4 media/diagram.png '" +
                            std::string(kQuestion) + "' --endpoint " + server.endpoint());
  EXPECT_EQ(ask.exit_code, 1) << ask.err;
  EXPECT_NE(ask.err.find(d.dir + "/media/broken.mp4"), std::string::npos) << ask.err;
  EXPECT_NE(ask.err.find("the question is over all the files given"), std::string::npos) << ask.err;
  EXPECT_TRUE(server.ChatLog().empty());
  EXPECT_EQ(QueryInt(d.db(), "SELECT count(*) FROM answers"), 0);
  // Left out, the question is asked over the others.
  CommandResult without = d.Ask("ask media/a.mp4 media/diagram.png '" + std::string(kQuestion) +
                                "' --endpoint " + server.endpoint());
  ASSERT_EQ(without.exit_code, 0) << without.err;
  ASSERT_EQ(server.ChatLog().size(), 1u);
  EXPECT_NE(UserTurn(server.ChatLog()[0]).find("Image 1: diagram.png"), std::string::npos);
}

}  // namespace
}  // namespace reel::testing
