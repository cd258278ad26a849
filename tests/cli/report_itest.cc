// End-to-end tests of `reel report`: a real `reel run` of a small generated job (frames,
// thumbnails, subtitles, a document), answers and failures added through the storage API (until
// the model stage's fake-server database replaces them), then the report folder: its files, its
// links, its time references and chapters, paging, --item and --batch, and the pages rendered in
// headless Chromium (skipped when Debian's chromium is not installed).
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "pipeline/image_codec.h"
#include "storage/query.h"
#include "storage/store.h"
#include "tests/cli/cli_test_util.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

struct ReportDb {
  std::string dir;
  std::string db;
  int64_t video_a = 0;  // with a side-car subtitle file, answers and chapters
  int64_t video_b = 0;  // a malformed chapters answer and a failed request
  int64_t notes = 0;    // a document
  int64_t frames_a = 0;
};

int64_t ItemId(const std::string& db, const std::string& suffix) {
  nlohmann::json rows = QueryJson(db, "SELECT id, path FROM items");
  for (const auto& row : rows) {
    if (row["path"].get<std::string>().ends_with(suffix)) return row["id"].get<int64_t>();
  }
  ADD_FAILURE() << "no item " << suffix;
  return 0;
}

// Answers `prompt` for `item` as the model stage will: a context, a request, its response.
void Answer(storage::Store& store, int64_t item, int64_t run, const std::string& prompt,
            const std::string& content, int64_t prompt_tokens, int64_t output_tokens) {
  auto context = store.PutContext({.item_id = item,
                                   .prompt_id = prompt,
                                   .text_tokens = 120,
                                   .image_tokens = 0,
                                   .video_tokens = prompt_tokens - 120,
                                   .manifest_json = R"({"frames": "all"})"});
  ASSERT_TRUE(context.ok()) << context.status().ToString();
  auto request = store.BeginRequest({.item_id = item,
                                     .context_id = *context,
                                     .run_id = run,
                                     .prompt_id = prompt,
                                     .model = "MiniMax-M3"});
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  ASSERT_TRUE(store
                  .FinishRequest(*request, {.content = content,
                                            .finish_reason = "stop",
                                            .prompt_tokens = prompt_tokens,
                                            .completion_tokens = output_tokens,
                                            .cached_tokens = prompt_tokens / 2,
                                            .latency_seconds = 2.5})
                  .ok());
}

const char* kDescribeA =
    "At 00:03 the colour bars scroll left. From 00:05-00:08 the counter passes five. "
    "A meeting at 10:30 am is not a video time; at 45 seconds nothing happens (past the end).";
const char* kChaptersA =
    R"({"chapters": [{"start": "00:00", "end": "00:06", "title": "Bars", "summary": "Bars scroll."},)"
    R"( {"start": "00:06", "end": "00:12", "title": "Counter", "summary": "The counter runs."}]})";

ReportDb MakeReportDb(const std::string& test) {
  ReportDb r;
  r.dir = ScratchDir(test);
  const std::string clip = GeneratedMedia(
      "report_clip_12s.mp4",
      "-f lavfi -i testsrc2=size=320x180:rate=25:duration=12 -c:v libx264 -pix_fmt yuv420p");
  fs::create_directories(r.dir + "/media");
  fs::copy_file(clip, r.dir + "/media/a.mp4");
  fs::copy_file(clip, r.dir + "/media/b.mp4");
  WriteText(r.dir + "/media/a.srt",
            "1\n00:00:00,500 --> 00:00:02,500\nThe bars & \"stripes\" scroll\n\n"
            "2\n00:00:07,000 --> 00:00:09,000\nThe counter passes seven\n");
  WriteText(r.dir + "/media/notes.md", "# Notes\n\nThe clip is a test pattern.\n");
  WriteText(r.dir + "/job.yaml",
            "name: reportjob\ninputs:\n  - media/*.mp4\n  - media/*.md\n"
            "sampling:\n  policy: fps\n  fps: 1\nstorage:\n  database: out.db\n");
  CommandResult run = Reel("run job.yaml", r.dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  r.db = r.dir + "/out.db";
  r.video_a = ItemId(r.db, "a.mp4");
  r.video_b = ItemId(r.db, "b.mp4");
  r.notes = ItemId(r.db, "notes.md");
  r.frames_a =
      QueryInt(r.db, "SELECT count(*) FROM frames WHERE item_id = " + std::to_string(r.video_a));
  auto store = storage::Store::Open(r.db);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return r;
  const int64_t run_id = QueryInt(r.db, "SELECT max(id) FROM runs");
  Answer(*store, r.video_a, run_id, "describe", kDescribeA, 4000, 80);
  Answer(*store, r.video_a, run_id, "chapters", kChaptersA, 4100, 60);
  Answer(*store, r.video_b, run_id, "describe", "Nothing but bars until 0:11.", 4000, 20);
  Answer(*store, r.video_b, run_id, "chapters",
         R"({"chapters": [{"start": "00:00", "end": "00:08", "title": "A", "summary": "a"},)"
         R"( {"start": "00:05", "end": "00:12", "title": "B", "summary": "b"}]})",
         4100, 50);
  Answer(*store, r.notes, run_id, "describe", "A note about a test pattern.", 300, 10);
  auto failed = store->BeginRequest({.item_id = r.video_b, .run_id = run_id, .prompt_id = "count"});
  EXPECT_TRUE(failed.ok());
  EXPECT_TRUE(store->FailRequest(*failed, "server error: 503 after 2 retries", 30.0).ok());
  return r;
}

std::vector<std::string> Matches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Every relative src/href of `page` (in `dir`) names a file that exists, and every "#id" link an
// element of the page.
void ExpectLinksResolve(const std::string& dir, const std::string& page) {
  const std::string html = ReadText(dir + "/" + page);
  ASSERT_FALSE(html.empty()) << page;
  std::set<std::string> ids;
  for (const std::string& id : Matches(html, "id=\"([^\"]+)\"")) ids.insert(id);
  const fs::path base = fs::path(dir + "/" + page).parent_path();
  for (const std::string attr : {"src", "href"}) {
    for (const std::string& target : Matches(html, attr + "=\"([^\"]+)\"")) {
      if (target.starts_with("#")) {
        EXPECT_TRUE(ids.count(target.substr(1))) << page << ": no element " << target;
        continue;
      }
      EXPECT_EQ(target.find("://"), std::string::npos) << page << ": external link " << target;
      std::string file = target.substr(0, target.find('#'));
      EXPECT_TRUE(fs::exists(base / file)) << page << ": missing " << target;
    }
  }
}

TEST(ReportCommandTest, WritesStoryboardPagesFromTheDatabase) {
  ReportDb r = MakeReportDb("report_pages");
  CommandResult report = Reel("report --db out.db -o site", r.dir);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("Open site/index.html"), std::string::npos) << report.out;
  const std::string site = r.dir + "/site";
  for (const char* file : {"index.html", "batch.html", "report.css"}) {
    EXPECT_TRUE(fs::exists(site + "/" + file)) << file;
  }
  const int64_t thumbs = QueryInt(r.db, "SELECT count(DISTINCT thumbnail_hash) FROM frames");
  int64_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(site + "/thumbs"))
    files += e.is_regular_file();
  EXPECT_EQ(files, thumbs);
  for (int64_t id : {r.video_a, r.video_b, r.notes}) {
    ExpectLinksResolve(site, "items/" + std::to_string(id) + ".html");
  }
  ExpectLinksResolve(site, "index.html");
  ExpectLinksResolve(site, "batch.html");

  const std::string a = ReadText(site + "/items/" + std::to_string(r.video_a) + ".html");
  EXPECT_EQ(static_cast<int64_t>(CountOf(a, "<figure class=\"frame\"")), r.frames_a);
  // Time references: 00:03 and the range link to their frames; the clock time of day is text;
  // 45 seconds is past the end of the 12 s clip.
  EXPECT_NE(a.find("<a class=\"t\" href=\"#f3\""), std::string::npos);
  EXPECT_NE(a.find("href=\"#f5\" data-seconds=\"5.000\" title=\"00:05.0 to 00:08.0: frame 5"),
            std::string::npos);
  EXPECT_NE(a.find("A meeting at 10:30 am is not"), std::string::npos);
  EXPECT_NE(a.find("<span class=\"t outside\" title=\"00:45.0: outside the item\">45 seconds"),
            std::string::npos);
  // Chapters: the timeline over the frames, the list, and dividers in the sheet.
  EXPECT_EQ(CountOf(a, "<a role=\"listitem\" class=\"chapter"), 2u);
  EXPECT_NE(a.find("href=\"#f6\" style=\"left:50.000%"), std::string::npos) << "06 of 12 s";
  EXPECT_EQ(CountOf(a, "<h3 class=\"chapter-start"), 2u);
  // Subtitles beside the frame shown when they start, escaped.
  EXPECT_NE(a.find("The bars &amp; &quot;stripes&quot; scroll"), std::string::npos);
  EXPECT_NE(a.find("<figure class=\"frame\" id=\"f7\">"), std::string::npos);
  const size_t f7 = a.find("id=\"f7\"");
  EXPECT_LT(f7, a.find("The counter passes seven"));
  EXPECT_GT(a.find("id=\"f8\""), a.find("The counter passes seven"));
  // Media facts, tokens, no failures.
  EXPECT_NE(a.find("<dt>codec</dt><dd>h264</dd>"), std::string::npos);
  EXPECT_NE(a.find("<tr class=\"total\"><td>total</td><td class=\"n\">240</td>"),
            std::string::npos);
  EXPECT_NE(a.find("No failures."), std::string::npos);

  const std::string b = ReadText(site + "/items/" + std::to_string(r.video_b) + ".html");
  EXPECT_NE(b.find("not a usable chapter list: chapter 2 (00:05-00:12) overlaps chapter 1 "
                   "(00:00-00:08)"),
            std::string::npos);
  EXPECT_NE(b.find("server error: 503 after 2 retries"), std::string::npos);
  EXPECT_NE(b.find("<a class=\"t\" href=\"#f11\""), std::string::npos);

  const std::string notes = ReadText(site + "/items/" + std::to_string(r.notes) + ".html");
  EXPECT_NE(notes.find("No frames."), std::string::npos);
  EXPECT_NE(notes.find("The clip is a test pattern."), std::string::npos);

  const std::string index = ReadText(site + "/index.html");
  EXPECT_EQ(CountOf(index, "<td class=\"path\">"), 3u);
  EXPECT_NE(index.find("1 failed request<"), std::string::npos);
  const std::string batch = ReadText(site + "/batch.html");
  EXPECT_EQ(CountOf(batch, "<svg "), 1u);
  EXPECT_EQ(CountOf(batch, "<polyline class=\"series"), 3u) << "total, output, items";
  EXPECT_NE(batch.find("<th>succeeded</th><td class=\"n\">5</td>"), std::string::npos);
  // The schema records the time to first token (requests.ttft_seconds); these requests were not
  // streamed, so there is none to show.
  EXPECT_NE(batch.find("<th>time to first token mean / p99</th><td class=\"n\">- / -"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(site + "/plots/run-1.svg"));

  // `reel search` shows the frames the model meant on answer hits: the times in the snippet.
  for (const auto& [words, frames] : std::vector<std::pair<std::string, std::string>>{
           {"colour", "00:03 -> frame 3 (0:00:03.000)"},
           {"counter", "00:05-00:08 -> frame 5 (0:00:05.000)"},
           {"nothing", "45 seconds -> outside the item"}}) {
    CommandResult search = Reel("search --db out.db " + words + " --answers --format json", r.dir);
    ASSERT_EQ(search.exit_code, 0) << search.err;
    nlohmann::json hits = nlohmann::json::parse(search.out);
    int described = 0;
    for (const auto& hit : hits) {
      if (hit["source"] != "answer:describe" || hit["item_id"] != r.video_a) continue;
      ++described;
      ASSERT_TRUE(hit["frames"].is_string()) << hit.dump();
      EXPECT_NE(hit["frames"].get<std::string>().find(frames), std::string::npos) << hit.dump();
    }
    EXPECT_EQ(described, 1) << search.out;
    if (words == "counter") {  // the chapters answer too; its end snaps to the last frame
      EXPECT_NE(search.out.find("00:12 -> frame 12 (0:00:11.960)"), std::string::npos)
          << search.out;
    }
  }

  // A second report keeps the thumbnails it already wrote.
  CommandResult again = Reel("report --db out.db -o site", r.dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("and 0 thumbnails (" + std::to_string(thumbs) + " already there)"),
            std::string::npos)
      << again.out;
}

TEST(ReportCommandTest, PagesTheIndexAndWritesSingleItemsAndTheBatch) {
  ReportDb r = MakeReportDb("report_paging");
  CommandResult paged = Reel("report --db out.db -o site --page-size 1 -q", r.dir);
  ASSERT_EQ(paged.exit_code, 0) << paged.err;
  const std::string site = r.dir + "/site";
  for (const char* page : {"index.html", "index-2.html", "index-3.html"}) {
    ASSERT_TRUE(fs::exists(site + "/" + page)) << page;
    ExpectLinksResolve(site, page);
    EXPECT_EQ(CountOf(ReadText(site + "/" + page), "<td class=\"path\">"), 1u) << page;
  }
  EXPECT_FALSE(fs::exists(site + "/index-4.html"));
  EXPECT_NE(ReadText(site + "/index-2.html").find("rel=\"next\""), std::string::npos);
  // A report with fewer pages removes the pages it no longer has.
  ASSERT_EQ(Reel("report --db out.db -o site -q", r.dir).exit_code, 0);
  EXPECT_FALSE(fs::exists(site + "/index-2.html"));

  // --item by path writes that page only; an unknown item fails naming it.
  CommandResult one = Reel("report --db out.db -o one --item media/b.mp4", r.dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(fs::exists(r.dir + "/one/items/" + std::to_string(r.video_b) + ".html"));
  EXPECT_FALSE(fs::exists(r.dir + "/one/index.html"));
  CommandResult unknown = Reel("report --db out.db -o x --item nope.mp4", r.dir);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no item 'nope.mp4'"), std::string::npos) << unknown.err;
  EXPECT_EQ(Reel("report --db out.db", r.dir).exit_code, 2) << "no -o";

  // --batch prints the run's figures.
  CommandResult batch = Reel("report --job job.yaml --batch", r.dir);
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_NE(batch.out.find("Run 1 of reportjob: succeeded"), std::string::npos) << batch.out;
  EXPECT_NE(batch.out.find("requests  5 ok, 1 failed, 0 never finished"), std::string::npos)
      << batch.out;
  EXPECT_NE(batch.out.find("16,500 prompt (8,250 cached, 50.0%), 220 output"), std::string::npos)
      << batch.out;
  EXPECT_NE(batch.out.find("first token mean -, p99 -"), std::string::npos) << batch.out;
}

// --- headless Chromium ---------------------------------------------------------------------------

std::string Chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    CommandResult r = RunCommand(std::string("command -v ") + name);
    if (r.exit_code == 0 && !r.out.empty()) return r.out.substr(0, r.out.find('\n'));
  }
  return "";
}

CommandResult Browse(const std::string& chromium, const std::string& profile,
                     const std::string& args, const std::string& url) {
  return RunCommand("timeout 180 " + ShellQuote(chromium) +
                    " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                    "--disable-background-networking --disable-component-update --disable-sync "
                    "--hide-scrollbars --user-data-dir=" +
                    ShellQuote(profile) + " " + args + " " + ShellQuote(url) + " 2>/dev/null");
}

// Pixels (of the same-size screenshots) that differ by more than 40 in some channel.
int64_t DifferentPixels(const pipeline::Image& a, const pipeline::Image& b) {
  if (a.width != b.width || a.height != b.height) return -1;
  int64_t n = 0;
  for (size_t i = 0; i + 2 < a.pixels.size(); i += 3) {
    for (int c = 0; c < 3; ++c) {
      if (std::abs(a.pixels[i + c] - b.pixels[i + c]) > 40) {
        ++n;
        break;
      }
    }
  }
  return n;
}

TEST(ReportBrowserTest, RendersInHeadlessChromium) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  ReportDb r = MakeReportDb("report_browser");
  ASSERT_EQ(Reel("report --db out.db -o site -q", r.dir).exit_code, 0);
  const std::string site = fs::absolute(r.dir + "/site").string();
  const std::string item_url = "file://" + site + "/items/" + std::to_string(r.video_a) + ".html";

  // The DOM as the browser built it: element counts and link targets.
  CommandResult dom = Browse(chromium, r.dir + "/profile-dom", "--dump-dom", item_url);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  const std::string& html = dom.out;
  EXPECT_EQ(static_cast<int64_t>(CountOf(html, "<figure class=\"frame\"")), r.frames_a);
  EXPECT_EQ(static_cast<int64_t>(CountOf(html, "<img ")), r.frames_a);
  EXPECT_EQ(CountOf(html, "<a role=\"listitem\" class=\"chapter"), 2u);
  EXPECT_EQ(CountOf(html, "<article class=\"answer\""), 2u);
  std::set<std::string> ids;
  for (const std::string& id : Matches(html, "id=\"([^\"]+)\"")) ids.insert(id);
  std::vector<std::string> time_links = Matches(html, "<a class=\"t\" href=\"#([^\"]+)\"");
  // The two chapter starts (the list comes first), then 00:03 and 00:05-00:08 in the answer.
  EXPECT_EQ(time_links, (std::vector<std::string>{"f0", "f6", "f3", "f5"}));
  for (const std::string& target : time_links) EXPECT_TRUE(ids.count(target)) << target;
  for (const std::string& src : Matches(html, "<img src=\"([^\"]+)\"")) {
    EXPECT_TRUE(src.starts_with("../thumbs/")) << src;
    EXPECT_TRUE(fs::exists(site + "/items/" + src)) << src;
  }

  // Screenshots: the requested size, and thumbnails that really load from disk (the page
  // without its thumbnails folder looks different over a large area). The window is tall enough
  // for the whole page (headless Chromium paints a page opened at a #fragment only partly).
  auto screenshot = [&](const std::string& url, const std::string& name) {
    const std::string png = r.dir + "/" + name + ".png";
    CommandResult shot = Browse(chromium, r.dir + "/profile-" + name,
                                "--window-size=1200,3000 --virtual-time-budget=5000 "
                                "--screenshot=" +
                                    ShellQuote(png),
                                url);
    EXPECT_EQ(shot.exit_code, 0) << shot.err;
    Result<pipeline::Image> image = pipeline::ReadImageFile(png);
    EXPECT_TRUE(image.ok()) << image.status().ToString();
    return image.ok() ? std::move(image).value() : pipeline::Image{};
  };
  pipeline::Image index = screenshot("file://" + site + "/index.html", "index");
  EXPECT_EQ(index.width, 1200);
  EXPECT_EQ(index.height, 3000);
  pipeline::Image frames = screenshot(item_url, "frames");
  EXPECT_EQ(frames.width, 1200);
  EXPECT_EQ(frames.height, 3000);
  fs::rename(site + "/thumbs", r.dir + "/thumbs-away");
  pipeline::Image bare = screenshot(item_url, "bare");
  const int64_t differing = DifferentPixels(frames, bare);
  // 13 thumbnails of 160x90 are 187,200 pixels.
  EXPECT_GT(differing, 100000) << "thumbnails did not load";
  RecordProperty("thumbnail_pixels_differing", std::to_string(differing));
}

}  // namespace
}  // namespace reel::testing
