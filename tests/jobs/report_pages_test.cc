// The report's pages rendered from items and runs built here (no database): the item page's
// order (answers first, media facts folded last), subtitle cues shown once, answers' Markdown
// rendered safely with their times linked, the index's excerpts and search, and no-op runs
// folded in the batch report.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "jobs/report/batch_report.h"
#include "jobs/report/index_page.h"
#include "jobs/report/item_page.h"
#include "jobs/report/markdown.h"
#include "jobs/report/search_index.h"

namespace reel::jobs::report {
namespace {

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// A 20 s video with a frame every 2 s (f0 at 0 s ... f10 at 20 s).
storage::ReportItem Video() {
  storage::ReportItem item;
  item.row.item_id = 7;
  item.row.job = "talks";
  item.row.path = "/media/talk.mp4";
  item.row.kind = "video";
  item.row.status = "done";
  item.row.duration_seconds = 20;
  item.row.frames = 11;
  item.content_hash = "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12";
  item.media_json = R"({"format": "mp4", "streams": [{"index": 0, "codec": "h264"}]})";
  for (int i = 0; i <= 10; ++i) {
    storage::ReportFrame f;
    f.frame_id = 100 + i;
    f.sample_index = i;
    f.time_seconds = 2.0 * i;
    f.width = 320;
    f.height = 180;
    item.frames.push_back(f);
  }
  return item;
}

storage::ReportAnswer Answer(const std::string& prompt, const std::string& content) {
  storage::ReportAnswer a;
  a.prompt_id = prompt;
  a.content = content;
  a.created_at = "2026-11-26T10:00:00Z";
  return a;
}

std::string Page(const storage::ReportItem& item) {
  return RenderItemPage(item, ItemPageOptions{"2026-11-26T10:00:00Z", "out.db", {}, std::nullopt});
}

TEST(ItemPageTest, TheAnswersComeFirstAndTheMediaFactsFoldedLast) {
  storage::ReportItem item = Video();
  item.answers.push_back(Answer("describe", "The speaker opens the talk."));
  const std::string page = Page(item);
  const size_t answers = page.find("id=\"answers\"");
  const size_t answer = page.find("The speaker opens the talk.");
  const size_t frames = page.find("id=\"frames\"");
  const size_t media = page.find("id=\"media\"");
  const size_t sha = page.find(*item.content_hash);
  ASSERT_NE(answer, std::string::npos);
  ASSERT_NE(sha, std::string::npos);
  EXPECT_LT(answers, answer);
  EXPECT_LT(answer, frames) << "the answer before the storyboard";
  EXPECT_LT(frames, media) << "the storyboard before the media facts";
  EXPECT_LT(answer, sha);
  EXPECT_LT(page.find("id=\"failures\""), media) << "the media facts are the last section";
  // Folded: the SHA-256 and the stream table are inside a closed <details>.
  const size_t details = page.find("<details class=\"media\">", media);
  ASSERT_NE(details, std::string::npos);
  EXPECT_LT(details, sha);
  EXPECT_LT(details, page.find("<th>codec</th>"));
  EXPECT_GT(page.find("</details>", details), page.find("<th>codec</th>"));
}

TEST(ItemPageTest, ChaptersAreOnTheStripAboveTheSheetAndItsAnswerComesLast) {
  storage::ReportItem item = Video();
  item.answers.push_back(Answer(
      "chapters",
      R"({"chapters": [{"start": "00:00", "end": "00:10", "title": "Opening", "summary": "a"},)"
      R"( {"start": "00:10", "end": "00:20", "title": "Demo", "summary": "b"}]})"));
  item.answers.push_back(Answer("describe", "A talk."));
  const std::string page = Page(item);
  const size_t strip = page.find("<div class=\"timeline\"");
  ASSERT_NE(strip, std::string::npos);
  EXPECT_LT(strip, page.find("<div class=\"sheet"));
  EXPECT_LT(page.find("id=\"answer-describe\""), page.find("id=\"answer-chapters\""))
      << "prose first, the chapters' JSON last";
  EXPECT_EQ(CountOf(page, "<a role=\"listitem\" class=\"chapter"), 2u);
}

TEST(ItemPageTest, ACueRepeatedByAnotherSubtitleStreamIsShownOnce) {
  storage::ReportItem item = Video();
  for (const char* source : {"subtitle:0", "subtitle:1", "sidecar:talk.srt"}) {
    item.segments.push_back({source, 4.0, 6.5, "Welcome to the talk.", std::nullopt});
  }
  item.segments.push_back({"subtitle:0", 8.0, 9.0, "Welcome to the talk.", std::nullopt});
  item.segments.push_back({"subtitle:1", 4.0, 6.5, "Bienvenue.", std::nullopt});
  std::sort(item.segments.begin(), item.segments.end(),
            [](const auto& a, const auto& b) { return a.start_seconds < b.start_seconds; });
  EXPECT_EQ(DistinctTimedText(item).size(), 3u);
  const std::string page = Page(item);
  EXPECT_EQ(CountOf(page, "Welcome to the talk."), 2u) << "at 4 s once, and again at 8 s";
  EXPECT_EQ(CountOf(page, "Bienvenue."), 1u);
  // Beside the frame shown when it starts (the frame at 4 s).
  EXPECT_LT(page.find("id=\"f2\""), page.find("Welcome to the talk."));
  EXPECT_GT(page.find("id=\"f3\""), page.find("Welcome to the talk."));
}

// A PDF of four pages read as pages: pictures timed by page number, a text segment per page.
storage::ReportItem Pdf() {
  storage::ReportItem item;
  item.row.item_id = 9;
  item.row.job = "papers";
  item.row.path = "/media/paper.pdf";
  item.row.kind = "document";
  item.row.status = "done";
  for (int i = 0; i < 4; ++i) {
    storage::ReportFrame f;
    f.frame_id = 200 + i;
    f.sample_index = i;
    f.time_seconds = i + 1;
    f.width = 588;
    f.height = 756;
    item.frames.push_back(f);
    item.segments.push_back(
        {"pdf", i + 1.0, i + 1.0, "Text of page " + std::to_string(i + 1), std::nullopt});
  }
  return item;
}

TEST(ItemPageTest, ADocumentsPagesAreAContactSheetAndItsPageReferencesLinkToThem) {
  storage::ReportItem item = Pdf();
  item.answers.push_back(
      Answer("summary",
             "The method is on p. 3, the results on pp. 2-4; page 9 does not exist. "
             "At 00:02 nothing."));
  const std::string page = Page(item);
  EXPECT_NE(page.find("<h2>Pages</h2>"), std::string::npos);
  // Each page's picture is labelled with its page, its text beside it.
  EXPECT_NE(page.find(">page 3</a>"), std::string::npos);
  EXPECT_LT(page.find("id=\"f2\""), page.find("Text of page 3"));
  EXPECT_GT(page.find("id=\"f3\""), page.find("Text of page 3"));
  // Page references link to the page pictures; a page the item lacks is marked, times are not
  // links in a document.
  EXPECT_NE(page.find("<a class=\"t\" href=\"#f2\" data-page=\"3\""), std::string::npos);
  EXPECT_NE(page.find("<a class=\"t\" href=\"#f1\" data-page=\"2\" title=\"page 2 to 4"),
            std::string::npos);
  EXPECT_NE(page.find("<span class=\"t outside\" title=\"page 9: no picture of it\">page 9"),
            std::string::npos);
  EXPECT_EQ(page.find("data-seconds"), std::string::npos);
  // A video's "page 3" is no page link.
  storage::ReportItem video = Video();
  video.answers.push_back(Answer("summary", "See page 3 at 00:02."));
  const std::string video_page = Page(video);
  EXPECT_EQ(video_page.find("data-page"), std::string::npos);
  EXPECT_NE(video_page.find("data-seconds=\"2.000\""), std::string::npos);
}

// An answer asked over several files (reel ask talk.mp4 slides.mp4 gone.mp4 "..."): each time
// refers to the file named last before it, in text, bold or code: the item's own links to its
// frame here, another file's to that file's page, a file not in the report or without a page in
// it (--item) is a marked span saying so.
TEST(ItemPageTest, AnAnswerOverSeveralFilesLinksEachTimeToTheFileNamedBeforeIt) {
  storage::ReportItem item = Video();
  storage::ReportAnswer a = Answer(
      "ask",
      "In **Video 2** at 00:03 the slide shows; `slides.mp4` at 00:04 too.\n\nBack in talk.mp4 "
      "at 00:06. In gone.mp4 at 00:01.");
  a.files = {
      {"/media/talk.mp4", "video"}, {"/media/slides.mp4", "video"}, {"/media/gone.mp4", "video"}};
  item.answers.push_back(a);
  storage::ReportFileItem slides;
  slides.path = "/media/slides.mp4";
  slides.item_id = 8;
  slides.duration_seconds = 5.5;
  for (int i = 0; i <= 5; ++i) {
    slides.sample_indexes.push_back(i);
    slides.frame_times.push_back(i);
  }
  storage::ReportFileItem gone;
  gone.path = "/media/gone.mp4";
  item.other_files = {slides, gone};

  const std::string page = Page(item);
  EXPECT_NE(page.find("Asked over: <span class=\"file this\""), std::string::npos) << page;
  EXPECT_NE(page.find("<a class=\"file\" href=\"../items/8.html\" title=\"Video 2: "
                      "/media/slides.mp4\">slides.mp4</a>"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("title=\"Video 3: /media/gone.mp4 (not in this report)\">gone.mp4</span>"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("href=\"../items/8.html#f3\" data-seconds=\"3.000\""), std::string::npos)
      << page;
  EXPECT_NE(page.find("href=\"../items/8.html#f4\" data-seconds=\"4.000\""), std::string::npos)
      << page;
  EXPECT_NE(page.find("href=\"#f3\" data-seconds=\"6.000\""), std::string::npos) << page;
  EXPECT_NE(page.find("gone.mp4 is not in this report\">00:01</span>"), std::string::npos) << page;

  // Only this item has a page (reel report --item): slides.mp4's times and name are not links.
  ItemPageOptions only{"2026-11-26T10:00:00Z", "out.db", {}, std::set<int64_t>{7}};
  const std::string alone = RenderItemPage(item, only);
  EXPECT_EQ(alone.find("../items/8.html"), std::string::npos) << alone;
  EXPECT_NE(alone.find("slides.mp4 has no page in this report\">00:03</span>"), std::string::npos)
      << alone;
  EXPECT_NE(alone.find("href=\"#f3\" data-seconds=\"6.000\""), std::string::npos) << alone;
}

// A page's text keeps its line breaks; a long page folds its rest, so the sheet stays a sheet. A
// page picture has no frame number, and a document has no "no chapters" line.
TEST(ItemPageTest, LongPageTextFoldsAndPagesHaveNoFrameNumbers) {
  storage::ReportItem item = Pdf();
  std::string long_text = "Heading of page two\n";
  for (int i = 0; i < 120; ++i) long_text += "word" + std::to_string(i) + " ";
  long_text += "LASTWORD";
  item.segments[1].text = long_text;
  const std::string page = Page(item);
  EXPECT_NE(page.find("<span class=\"page-text\">Text of page 1</span>"), std::string::npos);
  const size_t fold = page.find("<summary>rest of the page</summary>");
  ASSERT_NE(fold, std::string::npos);
  EXPECT_LT(page.find("Heading of page two\nword0 "), fold) << "the start is shown, breaks kept";
  EXPECT_GT(page.find("LASTWORD"), fold) << "the rest is folded";
  EXPECT_EQ(CountOf(page, "rest of the page"), 1u) << "short pages are not folded";
  EXPECT_EQ(page.find("class=\"index\""), std::string::npos);
  EXPECT_EQ(page.find("No chapters"), std::string::npos);
  EXPECT_NE(page.find("The text of each page is shown beside its picture."), std::string::npos);
}

// The text section names what is beside the frames: a transcript is not called subtitles.
TEST(ItemPageTest, TheTextSectionNamesTheTranscript) {
  storage::ReportItem item = Video();
  item.segments.push_back(
      {std::string(storage::kSpeechSource), 2.0, 3.5, "welcome to the review", std::string("en")});
  std::string page = Page(item);
  EXPECT_NE(page.find("The transcript is shown beside the frames."), std::string::npos);
  EXPECT_EQ(page.find("Subtitles are"), std::string::npos);
  item.segments.push_back({"subtitle:0", 4.0, 5.0, "Welcome.", std::nullopt});
  page = Page(item);
  EXPECT_NE(page.find("Subtitles and the transcript are shown beside the frames."),
            std::string::npos);
  EXPECT_NE(page.find("class=\"index\">#0</span>"), std::string::npos) << "video frames keep #N";
}

TEST(MarkdownTest, BoldListsAndTablesAreRendered) {
  const std::string html = MarkdownHtml(
      "**Summary:** a *short* talk.\n\n| time | what |\n|---|---|\n| 00:03 | intro |\n\n- one\n",
      nullptr);
  EXPECT_NE(html.find("<strong>Summary:</strong>"), std::string::npos) << html;
  EXPECT_NE(html.find("<em>short</em>"), std::string::npos) << html;
  EXPECT_NE(html.find("<table>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>00:03</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<li>one</li>"), std::string::npos) << html;
}

TEST(MarkdownTest, RawHtmlScriptsAndJavascriptLinksComeOutInert) {
  const std::string html = MarkdownHtml(
      "Hi <script>alert(1)</script> there.\n\n<script>\nalert(2)\n</script>\n\n"
      "<img src=x onerror=alert(3)> [click](javascript:alert(4)) "
      "[data](data:text/html;base64,PHNjcmlwdD4=) ![pixel](https://tracker.example/p.png) "
      "<a href=\"javascript:alert(5)\">a</a> & <b>",
      nullptr);
  EXPECT_EQ(html.find("<script"), std::string::npos) << html;
  EXPECT_EQ(html.find("javascript:"), std::string::npos) << html;
  EXPECT_EQ(html.find("data:text/html"), std::string::npos) << html;
  EXPECT_EQ(html.find("<img"), std::string::npos) << html;
  EXPECT_EQ(html.find("onerror=alert"), std::string::npos) << html;
  EXPECT_EQ(html.find("<b>"), std::string::npos) << html;
  EXPECT_NE(html.find("<a href=\"https://tracker.example/p.png\">pixel</a>"), std::string::npos)
      << "an image is a link, never loaded: " << html;
  EXPECT_NE(html.find("&amp;"), std::string::npos) << html;
}

TEST(MarkdownTest, AnAnswersTimesStayLinksInTextAndTablesButNotInCode) {
  storage::ReportItem item = Video();
  item.answers.push_back(
      Answer("describe",
             "**At 00:03** the title.\n\n| when | what |\n|---|---|\n| 00:06-00:09 | a demo |\n\n"
             "`00:10` is code; at 5:00 nothing (past the end). [at 00:12](https://x.example/)"));
  const std::string page = Page(item);
  EXPECT_NE(page.find("<strong>At <a class=\"t\" href=\"#f1\" data-seconds=\"3.000\" "
                      "title=\"00:03.0: frame 1 at 00:02.0\">00:03</a></strong>"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("<td><a class=\"t\" href=\"#f3\" data-seconds=\"6.000\""), std::string::npos)
      << page;
  EXPECT_NE(page.find("<code>00:10</code>"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"t outside\" title=\"05:00.0: outside the item\">5:00</span>"),
            std::string::npos);
  EXPECT_NE(page.find("<a href=\"https://x.example/\">at 00:12</a>"), std::string::npos)
      << "no link inside a link";
  // The marker links used on the way are all replaced.
  EXPECT_EQ(page.find("reel-markup-"), std::string::npos);
  // An answer that writes the marker itself cannot forge a link.
  const std::string forged = AnswerMarkdownHtml("[x](# \"reel-markup-0\") at 00:03", item);
  EXPECT_NE(forged.find("<a href=\"#\" title=\"reel-markup-0\">x</a>"), std::string::npos)
      << forged;
  EXPECT_NE(forged.find("<a class=\"t\" href=\"#f1\""), std::string::npos) << forged;
}

TEST(IndexPageTest, ShowsTheFirstAnswersExcerptAndTheSearchBox) {
  storage::ReportItem item = Video();
  item.answers.push_back(
      Answer("chapters", R"({"chapters": [{"start": "00:00", "end": "00:20", "title": "All", )"
                         R"("summary": "a"}]})"));
  item.answers.push_back(Answer("describe", "**The speaker** opens the talk with a `demo`."));
  std::optional<AnswerExcerpt> excerpt = FirstAnswerExcerpt(item, 280);
  ASSERT_TRUE(excerpt);
  EXPECT_EQ(excerpt->prompt_id, "describe") << "not the chapters' JSON";
  EXPECT_EQ(excerpt->text, "The speaker opens the talk with a demo.");
  EXPECT_EQ(FirstAnswerExcerpt(item, 20)->text, "The speaker opens\xE2\x80\xA6");

  IndexPage index;
  index.total_items = 1;
  index.rows.push_back(item.row);
  index.excerpts.push_back(excerpt);
  const std::string html = RenderIndexPage(index);
  EXPECT_NE(html.find("<p class=\"excerpt\"><span class=\"prompt\">describe</span> The speaker "
                      "opens the talk with a demo.</p>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<input type=\"search\" id=\"search\""), std::string::npos);
  EXPECT_NE(html.find("<script src=\"search-index.js\"></script><script src=\"search.js\">"),
            std::string::npos);

  item.segments.push_back({"subtitle:0", 4.0, 6.0, "Welcome </script> all", std::nullopt});
  const std::string js = SearchIndexJs({SearchEntryFor(item)});
  EXPECT_EQ(js.find("window.REEL_SEARCH_INDEX = ["), js.find('\n') + 1) << js;
  EXPECT_NE(js.find("\"page\":\"items/7.html\""), std::string::npos) << js;
  EXPECT_NE(js.find("describe: The speaker opens the talk with a demo."), std::string::npos) << js;
  EXPECT_NE(js.find("Welcome \\u003c/script> all"), std::string::npos) << js;
  EXPECT_NE(js.find("\"path\":\"/media/talk.mp4\""), std::string::npos) << js;
}

storage::ReportRun MakeRun(int64_t id, bool did_something) {
  storage::ReportRun r;
  r.run.id = id;
  r.job = "talks";
  r.run.status = storage::RunStatus::kSucceeded;
  r.run.started_at = "2026-11-2" + std::to_string(id) + "T02:00:00Z";
  r.run.counters.items_seen = 3;
  r.wall_seconds = 0.1;
  if (did_something) {
    r.run.counters.items_done = 3;
    r.run.counters.frames = 30;
    r.requests_succeeded = 3;
    r.prompt_tokens = 3000;
    r.completion_tokens = 300;
    r.events.push_back({1.0, 1000, 100, 1, 10});
    r.slowest.push_back({7, "/media/talk.mp4", 2.0, 1.0, 3300, std::nullopt});
    r.most_expensive = r.slowest;
  } else {
    r.run.counters.items_skipped = 3;
  }
  return r;
}

TEST(BatchReportTest, RunsThatDidNothingAreFoldedIntoOneLine) {
  std::vector<storage::ReportRun> runs = {MakeRun(6, false), MakeRun(5, false), MakeRun(4, false),
                                          MakeRun(3, true),  MakeRun(2, false), MakeRun(1, true)};
  EXPECT_TRUE(IsNoOpRun(runs[0]));
  EXPECT_FALSE(IsNoOpRun(runs[3]));
  const std::string page = BatchHtml(runs, {}, /*full=*/true);
  EXPECT_EQ(CountOf(page, "<section class=\"run\""), 2u) << "runs 3 and 1 in full";
  EXPECT_EQ(CountOf(page, "<details class=\"noop-runs\">"), 2u) << "4-6, and 2";
  EXPECT_NE(page.find("3 runs (4 to 6) did nothing: every item was up to date"), std::string::npos)
      << page;
  EXPECT_NE(page.find("Run 2 of talks did nothing"), std::string::npos) << page;
  EXPECT_EQ(CountOf(page, "No item finished in this run."), 0u);
  EXPECT_EQ(CountOf(page, "Nothing finished in this run."), 0u);
  for (int id = 1; id <= 6; ++id) {
    EXPECT_NE(page.find("id=\"run-" + std::to_string(id) + "\""), std::string::npos)
        << "the index links to every run";
  }
  // The index: one row for the three, one for run 2, and the two that did something.
  const std::string index = BatchHtml(runs, {}, /*full=*/false);
  EXPECT_EQ(CountOf(index, "<tr class=\"noop\">"), 2u) << index;
  EXPECT_NE(index.find("3 runs did nothing"), std::string::npos) << index;
  EXPECT_EQ(CountOf(index, "<tr>"), 2u + 1u) << "the header and runs 3 and 1";
}

}  // namespace
}  // namespace reel::jobs::report
