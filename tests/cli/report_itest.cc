// End-to-end tests of `reel report` on the database of the end-to-end model job
// (tests/support/model_job_db.h: a generated job of three videos with subtitles and a note,
// `reel run` against the fake OpenAI-compatible server with a describe prompt and two chapters
// prompts, answers good and bad): the report folder's files and links, time references and
// chapters as the run stored them, failed chapter checks, paging, --item, the batch report's
// figures against the database, and the pages rendered in headless Chromium (skipped when
// Debian's chromium is not installed).
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>

#include "pipeline/image_codec.h"
#include "tests/cli/cli_test_util.h"
#include "tests/support/model_job_db.h"
#include "tests/support/test_environment.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The shared database and a fresh folder for this test's report. Commands run in the job's
// folder (which they only read) and write under `out`.
struct ReportDb {
  const ModelJobDb* m = nullptr;
  std::string dir;  // the job's folder
  std::string db;
  std::string out;  // this test's scratch folder
  int64_t a = 0, b = 0, c = 0, notes = 0;
};

int64_t ItemId(const std::string& db, const std::string& name) {
  return QueryInt(db, "SELECT id FROM items WHERE path LIKE '%/" + name + "'");
}

ReportDb Open(const std::string& test) {
  ReportDb r;
  r.m = &SharedModelJobDb(ReelPath());
  r.dir = r.m->dir;
  r.db = r.m->db;
  r.out = ScratchDir(test);
  if (!r.m->error.empty()) return r;
  r.a = ItemId(r.db, "a.mp4");
  r.b = ItemId(r.db, "b.mp4");
  r.c = ItemId(r.db, "c.mp4");
  r.notes = ItemId(r.db, "notes.md");
  return r;
}

#define REEL_OPEN_REPORT_DB(r, name)                       \
  ReportDb r = Open(name);                                 \
  ASSERT_EQ(r.m->error, "") << "the model job's database"; \
  ASSERT_EQ(r.m->run_exit_code, 3) << r.m->run_err

std::string Page(int64_t item) { return "items/" + std::to_string(item) + ".html"; }

// As the report writes numbers: 12,345; 0.1234; 35 ms / 1.2 s.
std::string Thousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}
std::string Fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, v);
  return buffer;
}
std::string Duration(double seconds) {
  return seconds < 1 ? Fixed(seconds * 1000, 0) + " ms" : Fixed(seconds, 1) + " s";
}

double QueryDouble(const std::string& db, const std::string& sql) {
  json rows = QueryJson(db, sql);
  if (rows.empty() || !rows[0].begin()->is_number()) return NAN;
  return rows[0].begin()->get<double>();
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

TEST(ReportCommandTest, WritesStoryboardPagesFromTheModelJobDatabase) {
  REEL_OPEN_REPORT_DB(r, "report_pages");
  const std::string site = r.out + "/site";
  CommandResult report = Reel("report --db out.db -o " + ShellQuote(site), r.dir);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("Open " + site + "/index.html"), std::string::npos) << report.out;
  for (const char* file : {"index.html", "batch.html", "report.css"}) {
    EXPECT_TRUE(fs::exists(site + "/" + file)) << file;
  }
  const int64_t thumbs = QueryInt(r.db, "SELECT count(DISTINCT thumbnail_hash) FROM frames");
  EXPECT_EQ(thumbs, 39) << "a.mp4: 33 frames; b.mp4 and c.mp4 are the same clip: 6";
  int64_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(site + "/thumbs"))
    files += e.is_regular_file();
  EXPECT_EQ(files, thumbs);
  for (int64_t id : {r.a, r.b, r.c, r.notes}) ExpectLinksResolve(site, Page(id));
  ExpectLinksResolve(site, "index.html");
  ExpectLinksResolve(site, "batch.html");

  // a.mp4: 80 s, frames every 2.5 s (f0 at 0 ... f31 at 77.5, f32 at 79.9).
  const std::string a = ReadText(site + "/" + Page(r.a));
  EXPECT_EQ(CountOf(a, "<figure class=\"frame\""), 33u);
  // The describe answer's times link to the nearest frames; a time of day stays text; 2:00 is
  // past the end.
  EXPECT_NE(a.find("<a class=\"t\" href=\"#f1\" data-seconds=\"3.000\" title=\"00:03.0: frame 1 "
                   "at 00:02.5\">00:03</a>"),
            std::string::npos);
  EXPECT_NE(a.find("href=\"#f2\" data-seconds=\"6.000\" title=\"00:06.0 to 00:09.0: frame 2 at "
                   "00:05.0\">00:06-00:09</a>"),
            std::string::npos);
  EXPECT_NE(a.find("href=\"#f26\" data-seconds=\"64.000\" title=\"01:04.0: frame 26 at "
                   "01:05.0\">0:01:04</a>"),
            std::string::npos);
  EXPECT_NE(a.find("href=\"#f30\" data-seconds=\"75.000\" title=\"01:15.0: frame 30 at "
                   "01:15.0\">75 seconds</a>"),
            std::string::npos);
  EXPECT_NE(a.find("A meeting at 10:30 am is not"), std::string::npos);
  EXPECT_NE(a.find("<span class=\"t outside\" title=\"02:00.0: outside the item\">2:00</span>"),
            std::string::npos);
  // Chapters from the "chapters" answer: the list, the timeline over the frames (00:31 of 80 s
  // starts at 38.75%, on the frame at 30 s), dividers in the sheet.
  EXPECT_NE(a.find("Chapters from the answer to <a href=\"#answer-chapters\">chapters</a>"),
            std::string::npos);
  // What people came for first: the answers, then the chapters' strip over the frames; the media
  // facts last, folded.
  EXPECT_LT(a.find("id=\"answers\""), a.find("the colour bars scroll left"));
  EXPECT_LT(a.find("the colour bars scroll left"), a.find("<div class=\"timeline\""));
  EXPECT_LT(a.find("<div class=\"timeline\""), a.find("<div class=\"sheet"));
  EXPECT_LT(a.find("<div class=\"sheet"), a.find("<details class=\"media\">"));
  EXPECT_LT(a.find("<details class=\"media\">"), a.find("SHA-256"));
  EXPECT_EQ(CountOf(a, "<a role=\"listitem\" class=\"chapter"), 3u);
  EXPECT_NE(a.find("href=\"#f12\" style=\"left:38.750%"), std::string::npos);
  EXPECT_EQ(CountOf(a, "<h3 class=\"chapter-start"), 3u);
  // Subtitles beside the frame shown when they start (the cue at 7 s beside the frame at 5 s),
  // escaped.
  EXPECT_NE(a.find("Alpha clip: the bars &amp; &quot;stripes&quot; scroll"), std::string::npos);
  const size_t seven = a.find("The counter passes seven");
  EXPECT_LT(a.find("id=\"f2\""), seven);
  EXPECT_GT(a.find("id=\"f3\""), seven);
  // Media facts, tokens and cost per prompt as stored, no failures (the re-asked "scenes" was
  // answered).
  EXPECT_NE(a.find("<dt>codec</dt><dd>h264</dd>"), std::string::npos);
  const std::string a_id = std::to_string(r.a);
  // (The usage of each prompt's request: every answer it received, the cut-short "scenes"
  // answer asked again too, as in its cost.)
  json sums = QueryJson(r.db,
                        "SELECT sum(q.prompt_tokens) AS prompt, sum(q.cached_tokens) AS cached, "
                        "sum(q.completion_tokens) AS output, sum(q.cost) AS cost FROM requests q "
                        "JOIN responses p ON p.request_id = q.id WHERE q.item_id = " +
                            a_id);
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_NE(
      a.find("<td class=\"n\">" + Thousands(sums[0]["prompt"]) + "</td><td class=\"n\">" +
             Thousands(sums[0]["cached"]) + "</td><td class=\"n\">" + Thousands(sums[0]["output"]) +
             "</td><td></td><td></td><td></td><td class=\"n\">" +
             Fixed(sums[0]["cost"].get<double>(), 4) + "</td></tr>"),
      std::string::npos)
      << sums.dump();
  EXPECT_NE(a.find("No failures."), std::string::npos);

  // b.mp4: "chapters" failed its check (overlapping); the chapters come from "scenes".
  const std::string b = ReadText(site + "/" + Page(r.b));
  EXPECT_NE(b.find("Chapters from the answer to <a href=\"#answer-scenes\">scenes</a>"),
            std::string::npos);
  EXPECT_EQ(CountOf(b, "<a role=\"listitem\" class=\"chapter"), 2u);
  EXPECT_NE(b.find("<strong>chapters</strong>"), std::string::npos);
  EXPECT_NE(b.find("the answer failed its check: chapter 2 (00:05-00:12) overlaps chapter 1 "
                   "(00:00-00:08)"),
            std::string::npos);
  EXPECT_NE(b.find("<a class=\"t\" href=\"#f4\" data-seconds=\"11.000\""), std::string::npos)
      << "11 s is nearer the frame at 10.08 s than the one at 11.96 s";

  // c.mp4: both chapters prompts failed their check; the reasons are where the chapters would be.
  const std::string c = ReadText(site + "/" + Page(r.c));
  EXPECT_NE(c.find("The answer to \"chapters\" could not be used as chapters: chapter 2 "
                   "ends at 00:45, after the end of the video (00:12)."),
            std::string::npos);
  EXPECT_NE(c.find("The answer to \"scenes\" could not be used as chapters: the answer is "
                   "not JSON (syntax error at byte 1)."),
            std::string::npos);
  EXPECT_EQ(CountOf(c, "<a role=\"listitem\" class=\"chapter"), 0u);
  EXPECT_EQ(CountOf(c, "<strong>scenes</strong>"), 1u) << "in the failures";

  const std::string notes = ReadText(site + "/" + Page(r.notes));
  EXPECT_NE(notes.find("No frames."), std::string::npos);
  EXPECT_NE(notes.find("No chapters: the item has no timeline."), std::string::npos);
  EXPECT_NE(notes.find("The clips are a test pattern."), std::string::npos);
  EXPECT_NE(notes.find("title=\"00:30.0: the item has no frames\">00:30</span>"),
            std::string::npos);

  const std::string index = ReadText(site + "/index.html");
  EXPECT_EQ(CountOf(index, "<td class=\"path\">"), 4u);
  // Each item's first answer (not the chapters' JSON) below its name; a.mp4's "describe".
  EXPECT_NE(index.find("<p class=\"excerpt\"><span class=\"prompt\">describe</span> Nothing but "
                       "bars until 0:11.</p>"),
            std::string::npos);
  EXPECT_NE(index.find("<span class=\"prompt\">describe</span> At 00:03 the colour bars scroll"),
            std::string::npos);
  EXPECT_EQ(CountOf(index, "<p class=\"excerpt\">"), 4u);
  // The search index: every item, with its answers and subtitles, as a script a page opened from
  // disk can load.
  const std::string js = ReadText(site + "/search-index.js");
  const std::string assign = "window.REEL_SEARCH_INDEX = ";
  ASSERT_NE(js.find(assign), std::string::npos) << js.substr(0, 200);
  const size_t from = js.find(assign) + assign.size();
  json entries = json::parse(js.substr(from, js.rfind(';') - from), nullptr, false);
  ASSERT_TRUE(entries.is_array()) << js.substr(0, 200);
  EXPECT_EQ(entries.size(), 4u);
  for (const json& e : entries) {
    const std::string path = e.value("path", "");
    EXPECT_TRUE(fs::exists(site + "/" + e.value("page", ""))) << path;
    if (path.ends_with("/a.mp4")) {
      const std::string text = e.value("text", "");
      EXPECT_NE(text.find("describe: At 00:03 the colour bars scroll left."), std::string::npos);
      EXPECT_NE(text.find("The counter passes seven"), std::string::npos) << "the subtitles";
      EXPECT_EQ(e.value("page", ""), Page(r.a));
    }
  }
  EXPECT_TRUE(fs::exists(site + "/search.js"));
  EXPECT_EQ(CountOf(index, ">1 failed request<"), 1u);   // b.mp4
  EXPECT_EQ(CountOf(index, ">2 failed requests<"), 1u);  // c.mp4
  const std::string batch = ReadText(site + "/batch.html");
  EXPECT_EQ(CountOf(batch, "<svg "), 1u);
  EXPECT_EQ(CountOf(batch, "<polyline class=\"series"), 3u) << "total, output, items";
  EXPECT_NE(batch.find("<th>succeeded</th><td class=\"n\">7</td>"), std::string::npos);
  EXPECT_NE(batch.find("<th>failed</th><td class=\"n\">3</td>"), std::string::npos);
  EXPECT_NE(batch.find("<th>HTTP retries</th><td class=\"n\">1</td>"), std::string::npos);
  EXPECT_NE(batch.find("<th>asked again after a failed answer check</th><td class=\"n\">4</td>"),
            std::string::npos);
  EXPECT_NE(batch.find("<th>estimated cost</th><td class=\"n\">" +
                       Fixed(QueryDouble(r.db, "SELECT sum(cost) FROM requests"), 4) + "</td>"),
            std::string::npos);
  EXPECT_EQ(batch.find("<th>time to first token mean / p99</th><td class=\"n\">- / -"),
            std::string::npos)
      << "the answers were streamed";
  EXPECT_TRUE(fs::exists(site + "/plots/run-1.svg"));

  // A second report keeps the thumbnails it already wrote.
  CommandResult again = Reel("report --db out.db -o " + ShellQuote(site), r.dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("and 0 thumbnails (" + std::to_string(thumbs) + " already there)"),
            std::string::npos)
      << again.out;
}

// One truth about what the server billed: every answer it gave (the chapters answers that failed
// their check and were asked again too) is counted once, and `reel run`'s summary, `reel report
// --batch`, batch.html and `reel status` show the same tokens and cost as the requests rows and
// the fake server's own log.
TEST(ReportCommandTest, RunSummaryBatchReportAndStatusCountEveryAnswerTheServerGave) {
  REEL_OPEN_REPORT_DB(r, "report_usage");
  // The server's side: its count of every prompt it answered (all but the 503).
  int64_t server_prompt = 0, answered = 0;
  for (const json& e : json::parse(r.m->server_log)) {
    if (e.value("path", "") != "/v1/chat/completions" || e.value("behaviour", "") == "status") {
      continue;
    }
    server_prompt += e["prompt_tokens"].get<int64_t>();
    ++answered;
  }
  EXPECT_EQ(answered, 14) << "10 requests, 4 of them asked again";
  json sums = QueryJson(r.db,
                        "SELECT sum(prompt_tokens) AS prompt, sum(cached_tokens) AS cached, "
                        "sum(completion_tokens) AS output, sum(cost) AS cost, count(*) AS n "
                        "FROM requests")[0];
  const int64_t prompt = sums["prompt"], cached = sums["cached"], output = sums["output"];
  const double cost = sums["cost"];
  EXPECT_EQ(sums["n"], 10);
  EXPECT_EQ(prompt, server_prompt);
  // The refused answers are in: more than the stored answers' usage (which alone priced 0.0927).
  json stored = QueryJson(r.db,
                          "SELECT sum(prompt_tokens) AS prompt, sum(cached_tokens) AS cached, "
                          "sum(completion_tokens) AS output FROM responses")[0];
  EXPECT_GT(prompt, stored["prompt"].get<int64_t>());
  EXPECT_GT(output, stored["output"].get<int64_t>());
  // requests.cost is the job's prices (2.0 / 0.5 / 8.0 per million) over the same usage.
  EXPECT_NEAR(cost, ((prompt - cached) * 2.0 + cached * 0.5 + output * 8.0) / 1e6, 1e-12);

  // `reel run`'s closing summary.
  const std::string& run = r.m->run_err;
  EXPECT_NE(run.find("tokens: " + std::to_string(prompt) + " prompt (" + std::to_string(cached) +
                     " cached), " + std::to_string(output) + " completion;"),
            std::string::npos)
      << run;
  EXPECT_NE(run.find("cost: " + Fixed(cost, 4) + " by tokens"), std::string::npos) << run;
  // `reel report --batch`.
  CommandResult batch = Reel("report --job job.yaml --batch", r.dir);
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_NE(batch.out.find("tokens    " + Thousands(prompt) + " prompt (" + Thousands(cached) +
                           " cached, "),
            std::string::npos)
      << batch.out;
  EXPECT_NE(batch.out.find(Thousands(output) + " output; "), std::string::npos) << batch.out;
  EXPECT_NE(batch.out.find("cost      " + Fixed(cost, 4)), std::string::npos) << batch.out;
  // batch.html.
  const std::string site = r.out + "/site";
  CommandResult html = Reel("report --db out.db -o " + ShellQuote(site), r.dir);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = ReadText(site + "/batch.html");
  EXPECT_NE(page.find("<th>estimated cost</th><td class=\"n\">" + Fixed(cost, 4) + "</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<tr><th>prompt</th><td class=\"n\">" + Thousands(prompt) + "</td></tr>"),
            std::string::npos);
  EXPECT_NE(page.find("<tr><th>of which cached</th><td class=\"n\">" + Thousands(cached) + " ("),
            std::string::npos);
  EXPECT_NE(page.find("<th>output</th><td class=\"n\">" + Thousands(output) + "</td></tr>"),
            std::string::npos);
  // `reel status`: the run's report as stored, the same figures.
  CommandResult status = Reel("status --db out.db --format json", r.dir);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  json report = json::parse(status.out)["model_report"];
  EXPECT_EQ(report["prompt_tokens"], prompt);
  EXPECT_EQ(report["cached_tokens"], cached);
  EXPECT_EQ(report["completion_tokens"], output);
  EXPECT_NEAR(report["cost_tokens"].get<double>(), cost, 1e-9);
  CommandResult text = Reel("status --db out.db", r.dir);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("cost: " + Fixed(cost, 4) + " by tokens"), std::string::npos) << text.out;
}

TEST(ReportCommandTest, PagesTheIndexAndWritesSingleItems) {
  REEL_OPEN_REPORT_DB(r, "report_paging");
  const std::string site = r.out + "/site";
  CommandResult paged =
      Reel("report --db out.db -o " + ShellQuote(site) + " --page-size 1 -q", r.dir);
  ASSERT_EQ(paged.exit_code, 0) << paged.err;
  for (const char* page : {"index.html", "index-2.html", "index-3.html", "index-4.html"}) {
    ASSERT_TRUE(fs::exists(site + "/" + page)) << page;
    ExpectLinksResolve(site, page);
    EXPECT_EQ(CountOf(ReadText(site + "/" + page), "<td class=\"path\">"), 1u) << page;
  }
  EXPECT_FALSE(fs::exists(site + "/index-5.html"));
  EXPECT_NE(ReadText(site + "/index-2.html").find("rel=\"next\""), std::string::npos);
  // A report with fewer pages removes the pages it no longer has.
  ASSERT_EQ(Reel("report --db out.db -o " + ShellQuote(site) + " -q", r.dir).exit_code, 0);
  EXPECT_FALSE(fs::exists(site + "/index-2.html"));

  // --item by path (as the job names it) writes that page only; an unknown item fails naming it.
  const std::string one = r.out + "/one";
  CommandResult item =
      Reel("report --db out.db -o " + ShellQuote(one) + " --item media/b.mp4", r.dir);
  ASSERT_EQ(item.exit_code, 0) << item.err;
  EXPECT_TRUE(fs::exists(one + "/" + Page(r.b)));
  EXPECT_FALSE(fs::exists(one + "/" + Page(r.a)));
  EXPECT_FALSE(fs::exists(one + "/index.html"));
  CommandResult unknown =
      Reel("report --db out.db -o " + ShellQuote(r.out + "/x") + " --item nope.mp4", r.dir);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no item 'nope.mp4'"), std::string::npos) << unknown.err;
  EXPECT_EQ(Reel("report --db out.db", r.dir).exit_code, 2) << "no -o";
}

// `reel report --batch`: each figure of the run as the database has it.
TEST(ReportCommandTest, TheBatchReportsFiguresAreTheDatabases) {
  REEL_OPEN_REPORT_DB(r, "report_batch");
  CommandResult batch = Reel("report --job job.yaml --batch", r.dir);
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  const std::string& out = batch.out;
  EXPECT_NE(out.find("Run 1 of reportjob: failed"), std::string::npos) << out;
  EXPECT_NE(out.find("items     4 seen, 4 done, 0 skipped, 0 failed; 45 frames"), std::string::npos)
      << out;
  // Requests by outcome: 3 questions failed their chapters check; 1 HTTP retry (a 503), 4
  // answers asked again after a failed check (3 failed again, 1 was then good).
  EXPECT_NE(out.find("requests  7 ok, 3 failed, 0 never finished, 0 asked again; HTTP retries 1; "
                     "asked again after a failed answer check 4"),
            std::string::npos)
      << out;
  // Tokens: every answer's usage, those that failed their check too (more than the stored
  // answers').
  json t = QueryJson(r.db,
                     "SELECT sum(prompt_tokens) AS prompt, sum(cached_tokens) AS cached, "
                     "sum(completion_tokens) AS output FROM requests")[0];
  EXPECT_GT(t["prompt"].get<int64_t>(), QueryInt(r.db, "SELECT sum(prompt_tokens) FROM responses"));
  const int64_t prompt = t["prompt"], cached = t["cached"], output = t["output"];
  ASSERT_GT(cached, 0) << "the fake server's prefix cache: prompts about one context share it";
  EXPECT_NE(
      out.find("tokens    " + Thousands(prompt) + " prompt (" + Thousands(cached) + " cached, " +
               Fixed(100.0 * cached / prompt, 1) + "%), " + Thousands(output) + " output; "),
      std::string::npos)
      << out;
  // Tokens per second over the run's wall time (started to the last thing that finished).
  const std::string started =
      QueryJson(r.db, "SELECT started_at FROM runs WHERE id = 1")[0]["started_at"];
  const double wall = QueryDouble(
      r.db, "SELECT max((julianday(finished_at) - julianday('" + started +
                "')) * 86400) FROM (SELECT finished_at FROM runs WHERE id = 1 UNION ALL SELECT "
                "finished_at FROM requests WHERE run_id = 1 UNION ALL SELECT finished_at FROM "
                "items WHERE last_run_id = 1)");
  std::smatch rate;
  ASSERT_TRUE(std::regex_search(out, rate, std::regex("; ([0-9.]+) tokens/s, ([0-9.]+) output")))
      << out;
  EXPECT_NEAR(std::stod(rate[1]), (prompt + output) / wall, 0.1);
  EXPECT_NEAR(std::stod(rate[2]), output / wall, 0.1);
  // Latency and time to first token (streamed answers): mean and p99 (the largest of 10).
  for (const auto& [column, label] : std::vector<std::pair<std::string, std::string>>{
           {"latency_seconds", "latency   mean "}, {"ttft_seconds", "; first token mean "}}) {
    // (Summed in the report's order, so the mean is the same double.)
    json values = QueryJson(r.db, "SELECT " + column + " AS v FROM requests WHERE run_id = 1 AND " +
                                      column + " IS NOT NULL ORDER BY id");
    ASSERT_EQ(values.size(), 10u) << column;
    double sum = 0, max = 0;
    for (const json& v : values) {
      sum += v["v"].get<double>();
      max = std::max(max, v["v"].get<double>());
    }
    EXPECT_NE(out.find(label + Duration(sum / 10) + ", p99 " + Duration(max)), std::string::npos)
        << column << "\n"
        << out;
  }
  // Cost: every answer the server gave at the job's prices, also those that failed the check.
  EXPECT_NE(out.find("cost      " + Fixed(QueryDouble(r.db, "SELECT sum(cost) FROM requests"), 4)),
            std::string::npos)
      << out;
  EXPECT_EQ(QueryInt(r.db, "SELECT count(*) FROM requests WHERE cost IS NULL"), 0);
  // The slowest item (its describe answer took 0.3 s more) and the most expensive (33 frames).
  EXPECT_NE(out.find("slowest   " + r.dir + "/media/a.mp4 ("), std::string::npos) << out;
  const int64_t a_tokens = QueryInt(
      r.db, "SELECT sum(prompt_tokens + completion_tokens) FROM requests WHERE item_id = " +
                std::to_string(r.a));
  EXPECT_NE(out.find("costliest " + r.dir + "/media/a.mp4 (" + Thousands(a_tokens) + " tokens)"),
            std::string::npos)
      << out;
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
  if (chromium.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kProgram) << "chromium is not installed (apt-get install chromium)";
  REEL_OPEN_REPORT_DB(r, "report_browser");
  const std::string site = r.out + "/site";
  ASSERT_EQ(Reel("report --db out.db -o " + ShellQuote(site) + " -q", r.dir).exit_code, 0);
  const std::string item_url = "file://" + site + "/" + Page(r.a);

  // The DOM as the browser built it: element counts and link targets.
  CommandResult dom = Browse(chromium, r.out + "/profile-dom", "--dump-dom", item_url);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  const std::string& html = dom.out;
  EXPECT_EQ(CountOf(html, "<figure class=\"frame\""), 33u);
  EXPECT_EQ(CountOf(html, "<img "), 33u);
  EXPECT_EQ(CountOf(html, "<a role=\"listitem\" class=\"chapter"), 3u);
  EXPECT_EQ(CountOf(html, "<article class=\"answer\""), 3u) << "chapters, describe, scenes";
  std::set<std::string> ids;
  for (const std::string& id : Matches(html, "id=\"([^\"]+)\"")) ids.insert(id);
  std::vector<std::string> time_links = Matches(html, "<a class=\"t\" href=\"#([^\"]+)\"");
  // The answers first: describe (00:03, 00:06-00:09, 0:01:04, 75 seconds), the scenes answer's
  // times (0:00:00, 0:00:40 twice, 0:01:20); then the chapter list (00:00, 00:31, 01:04).
  EXPECT_EQ(time_links, (std::vector<std::string>{"f1", "f2", "f26", "f30", "f0", "f16", "f16",
                                                  "f32", "f0", "f12", "f26"}));
  for (const std::string& target : time_links) EXPECT_TRUE(ids.count(target)) << target;
  for (const std::string& src : Matches(html, "<img src=\"([^\"]+)\"")) {
    EXPECT_TRUE(src.starts_with("../thumbs/")) << src;
    EXPECT_TRUE(fs::exists(site + "/items/" + src)) << src;
  }

  // Screenshots: the requested size, and thumbnails that really load from disk (the page
  // without its thumbnails folder looks different over a large area). The window is tall enough
  // for the whole page (headless Chromium paints a page opened at a #fragment only partly).
  auto screenshot = [&](const std::string& url, const std::string& name) {
    const std::string png = r.out + "/" + name + ".png";
    CommandResult shot = Browse(chromium, r.out + "/profile-" + name,
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
  fs::rename(site + "/thumbs", r.out + "/thumbs-away");
  pipeline::Image bare = screenshot(item_url, "bare");
  const int64_t differing = DifferentPixels(frames, bare);
  // 33 thumbnails (320x180 stored, shown about 270 pixels wide) cover far more than 200,000 pixels.
  EXPECT_GT(differing, 200000) << "thumbnails did not load";
  RecordProperty("thumbnail_pixels_differing", std::to_string(differing));
}

// The index's search box, from disk (file://, no server): index.html?q=... searches on opening.
TEST(ReportBrowserTest, TheIndexSearchFindsItemsFromDisk) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  REEL_OPEN_REPORT_DB(r, "report_search");
  const std::string site = r.out + "/site";
  ASSERT_EQ(
      Reel("report --db out.db -o " + ShellQuote(site) + " -q --page-size 1", r.dir).exit_code, 0);
  auto search = [&](const std::string& query, const std::string& name) {
    CommandResult dom =
        Browse(chromium, r.out + "/profile-" + name, "--virtual-time-budget=3000 --dump-dom",
               "file://" + site + "/index-2.html?q=" + query);
    EXPECT_EQ(dom.exit_code, 0) << dom.err;
    const size_t list = dom.out.find("id=\"search-count\"");
    return list == std::string::npos ? std::string() : dom.out.substr(list);
  };
  // A subtitle of a.mp4 (every page searches every item, not only its own).
  const std::string seven = search("SEVEN%20counter", "seven");
  EXPECT_NE(seven.find("1 item matches"), std::string::npos) << seven.substr(0, 2000);
  EXPECT_NE(seven.find("<a href=\"" + Page(r.a) + "\""), std::string::npos)
      << seven.substr(0, 2000);
  EXPECT_NE(seven.find("<mark>seven</mark>"), std::string::npos) << seven.substr(0, 2000);
  // An answer (b.mp4's and c.mp4's chapters have none of it) and a file name.
  const std::string bars = search("until%200:11", "bars");
  EXPECT_NE(bars.find("<a href=\"" + Page(r.b) + "\""), std::string::npos) << bars.substr(0, 2000);
  EXPECT_EQ(bars.find("<a href=\"" + Page(r.a) + "\""), std::string::npos);
  const std::string notes = search("notes.md", "notes");
  EXPECT_NE(notes.find("<a href=\"" + Page(r.notes) + "\""), std::string::npos)
      << notes.substr(0, 2000);
  EXPECT_NE(search("no-such-words", "none").find("0 items match"), std::string::npos);
}

}  // namespace
}  // namespace reel::testing
