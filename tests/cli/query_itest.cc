// End-to-end tests of the reporting commands: query (every format), status, results, search,
// and how they pick the database.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <sys/file.h>
#include <unistd.h>
#include <algorithm>

#include <filesystem>

#include "tests/cli/cli_test_util.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

class QueryCommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(ScratchDir("query_commands"));
    const std::string& d = *dir_;
    fs::create_directories(d + "/media");
    fs::copy_file(SmallClip(), d + "/media/walk.mp4");
    fs::copy_file(SmallClip(), d + "/media/other.mp4");
    WriteText(d + "/media/walk.srt",
              "1\n00:00:01,250 --> 00:00:02,000\nThe emperor penguin walks\n");
    // A subtitle file of its own (no video beside it with its stem): an item.
    WriteText(d + "/media/lecture.en.srt", "1\n00:00:03,000 --> 00:00:04,000\nA penguin lecture\n");
    WriteText(d + "/media/notes.txt",
              "# Seals\n\nFirst paragraph about seals.\n\n# Penguins\n\nA penguin colony.\n");
    WriteText(d + "/media/broken.mp4", "not a video");
    WriteText(d + "/job.yaml",
              "name: zoo\ninputs: [media]\nsampling:\n  policy: count\n  count: 2\n");
    CommandResult run = Reel("run job.yaml", d);
    ASSERT_EQ(run.exit_code, 1) << run.err;  // broken.mp4 fails
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Dir() { return *dir_; }
  static std::string Db() { return *dir_ + "/zoo.db"; }
  static CommandResult Q(const std::string& args) { return Reel(args, Dir()); }

  static std::string* dir_;
};
std::string* QueryCommandTest::dir_ = nullptr;

TEST_F(QueryCommandTest, TableIsAlignedAndCutsLongCells) {
  CommandResult r =
      Q("query --db zoo.db \"SELECT 1234 AS n, printf('%.100c', 'x') AS long, "
        "'a' || char(10) || 'b' AS two_lines\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, rule, row, count;
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, row);
  std::getline(lines, count);
  EXPECT_EQ(header.substr(0, 8), "   n  lo") << "numbers are right-aligned under their header";
  EXPECT_EQ(rule.substr(0, 7), "----  -");
  EXPECT_EQ(row.substr(0, 6), "1234  ");
  EXPECT_NE(row.find(std::string(59, 'x') + "\xE2\x80\xA6"), std::string::npos) << row;
  EXPECT_EQ(row.find(std::string(60, 'x')), std::string::npos) << "cut to 60 characters";
  EXPECT_NE(row.find("a\xE2\x8F\x8E"
                     "b"),
            std::string::npos)
      << "line breaks are shown as ⏎";
  EXPECT_EQ(count, "(1 row)");
  // --width 0 never cuts.
  CommandResult wide = Q("query --db zoo.db \"SELECT printf('%.100c', 'x')\" --width 0");
  EXPECT_NE(wide.out.find(std::string(100, 'x')), std::string::npos);
}

TEST_F(QueryCommandTest, CsvFollowsRfc4180) {
  CommandResult r = Q("query --db zoo.db " +
                      ShellQuote("SELECT 'a,b' AS x, 'say \"hi\"' AS y, 'l1' || char(10) || 'l2' "
                                 "AS z, NULL AS n, 1.5 AS r") +
                      " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "x,y,z,n,r\r\n\"a,b\",\"say \"\"hi\"\"\",\"l1\nl2\",,1.5\r\n");
}

TEST_F(QueryCommandTest, JsonAndJsonlKeepTypes) {
  const std::string sql = "SELECT path, kind, status, attempts, error FROM items ORDER BY path";
  CommandResult json = Q("query --db zoo.db \"" + sql + "\" --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json rows = nlohmann::json::parse(json.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 5u);  // lecture.en.srt is an item of its own too
  EXPECT_TRUE(rows[0]["attempts"].is_number_integer());
  EXPECT_TRUE(rows[1]["error"].is_null());
  EXPECT_EQ(rows[0]["status"], "failed");  // broken.mp4 sorts first

  CommandResult jsonl = Q("query --db zoo.db \"" + sql + "\" --format jsonl");
  ASSERT_EQ(jsonl.exit_code, 0) << jsonl.err;
  std::istringstream lines(jsonl.out);
  std::string line;
  size_t n = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(nlohmann::json::parse(line), rows[n]) << line;
    ++n;
  }
  EXPECT_EQ(n, rows.size());
}

TEST_F(QueryCommandTest, RefusesWritesAndBadSql) {
  CommandResult write = Q("query --db zoo.db \"DELETE FROM items\"");
  EXPECT_EQ(write.exit_code, 2) << write.err;
  EXPECT_EQ(QueryInt(Db(), "SELECT count(*) FROM items"), 5) << "nothing was deleted";
  EXPECT_EQ(Q("query --db zoo.db \"SELEC 1\"").exit_code, 2);
}

// One rule for every command that reads a database (kDatabaseRule): --db, --ask-db, --job's
// database, $REEL_DB, ./reel.db, the job file of the folder. reel ask's database is read only
// when named: in a job folder `reel results` read it (the help said ./reel.db).
TEST_F(QueryCommandTest, DatabaseDefaultsToTheJobsOrReelDb) {
  const std::string home = ScratchDir("query_commands_home");
  fs::create_directories(home + "/data/reel");
  const std::string env =
      "HOME=" + ShellQuote(home) + " XDG_DATA_HOME=" + ShellQuote(home + "/data") + " REEL_DB= ";
  // An ask database exists (it holds one item).
  WriteText(home + "/asked/notes.txt", "Asked about.\n");
  WriteText(home + "/asked/ask.yaml",
            "name: ask\ninputs: [notes.txt]\nstorage: {database: ../data/reel/reel.db}\n");
  ASSERT_EQ(Reel("run ask.yaml", home + "/asked").exit_code, 0);
  fs::remove(home + "/asked/ask.yaml");
  auto in = [&](const std::string& dir, const std::string& args) {
    return RunCommand("cd " + ShellQuote(dir) + " && " + env + ShellQuote(ReelPath()) + " " + args);
  };
  EXPECT_EQ(
      in(Dir(), "query --job job.yaml \"SELECT count(*) AS n FROM items\" --format jsonl").out,
      "{\"n\":5}\n");
  // The job folder: its job file's database, not reel ask's.
  for (const char* command : {"query \"SELECT count(*) AS n FROM items\" --format jsonl",
                              "results --items --format jsonl"}) {
    CommandResult here = in(Dir(), command);
    EXPECT_EQ(here.exit_code, 0) << command << here.err;
    EXPECT_NE(here.out.find(command[0] == 'q' ? "{\"n\":5}" : "walk.mp4"), std::string::npos)
        << command << here.out;
  }
  // --ask-db names reel ask's database.
  EXPECT_EQ(in(Dir(), "query --ask-db \"SELECT count(*) AS n FROM items\" --format jsonl").out,
            "{\"n\":1}\n");
  // A folder without a job file or reel.db: an error that names the rule's choice and --ask-db.
  CommandResult none = in(home, "query \"SELECT 1\"");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no database at reel.db"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("--ask-db"), std::string::npos) << none.err;
  CommandResult env_db = in(Dir(), "query \"SELECT 1 AS one\" --format csv --db zoo.db");
  EXPECT_EQ(env_db.out, "one\r\n1\r\n") << env_db.err;
  CommandResult by_env =
      RunCommand("cd " + ShellQuote(Dir()) + " && REEL_DB=zoo.db " + ShellQuote(ReelPath()) +
                 " query \"SELECT 1 AS one\" --format csv");
  EXPECT_EQ(by_env.out, "one\r\n1\r\n") << by_env.err;
  // --help says the rule.
  for (const char* command : {"query", "results", "status", "search", "report", "export"}) {
    CommandResult help = Reel(std::string(command) + " --help");
    EXPECT_NE(help.out.find("else the database of the one job file"), std::string::npos)
        << command << help.out;
  }
}

// Numbers as people read them (no float noise), NULL as an empty cell; --format md.
TEST_F(QueryCommandTest, NumbersAreReadableAndMarkdownTablesWhole) {
  CommandResult r =
      Q("query --db zoo.db \"SELECT 65.72000000000001 AS cost, 0.1 + 0.2 AS sum, 3.0 AS whole, "
        "NULL AS empty, 'x' AS last\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("65.72000000000001"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("NULL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("65.72  0.3      3         x"), std::string::npos) << r.out;
  CommandResult md =
      Q("query --db zoo.db --format md " +
        ShellQuote("SELECT 'a|b' AS t, 'l1' || char(10) || 'l2' AS two, 0.39999999999999997 AS n, "
                   "NULL AS z, printf('%.100c', 'x') AS long"));
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out,
            "| t | two | n | z | long |\n| --- | --- | ---: | ---: | --- |\n| a\\|b | l1<br>l2 | "
            "0.4 |  | " +
                std::string(100, 'x') + " |\n");
  CommandResult results = Q("results --db zoo.db --items --format md");
  ASSERT_EQ(results.exit_code, 0) << results.err;
  EXPECT_EQ(results.out.rfind("| job | item_id | path |", 0), 0u) << results.out;
  EXPECT_EQ(results.out.find("NULL"), std::string::npos) << results.out;
}

TEST_F(QueryCommandTest, StatusShowsRunsCountsAndFailures) {
  CommandResult text = Q("status --db zoo.db");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Items: 5 (done 4, failed 1, pending 0, running 0)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Recent runs"), std::string::npos);
  // The failure shows the whole path and the whole reason, however long the scratch path is.
  const std::string broken = (std::filesystem::path(Dir()) / "media/broken.mp4").string();
  EXPECT_NE(text.out.find("    " + broken + "\n    not a readable media file"), std::string::npos)
      << text.out;
  CommandResult json = Q("status --job job.yaml --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["items"]["done"], 4);
  EXPECT_EQ(j["items"]["failed"], 1);
  ASSERT_EQ(j["runs"].size(), 1u);
  EXPECT_EQ(j["runs"][0]["status"], "failed");
  EXPECT_EQ(j["runs"][0]["frames"], 4);  // 2 + 2 from the videos, none from the text
  EXPECT_EQ(j["failures"].size(), 1u);
  EXPECT_TRUE(j["running_now"].is_null());
}

TEST_F(QueryCommandTest, ResultsListItemsWithFramesDurationsAndSegments) {
  CommandResult r = Q("results --db zoo.db --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 5u);
  std::map<std::string, nlohmann::json> by_path;
  for (const auto& row : rows) by_path[fs::path(row["path"].get<std::string>()).filename()] = row;
  EXPECT_EQ(by_path["walk.mp4"]["frames"], 2);
  EXPECT_EQ(by_path["walk.mp4"]["segments"], 1);
  EXPECT_DOUBLE_EQ(by_path["walk.mp4"]["duration_seconds"].get<double>(), 3.0);
  EXPECT_EQ(by_path["notes.txt"]["segments"], 2);
  EXPECT_EQ(by_path["broken.mp4"]["status"], "failed");
  // walk.srt is walk.mp4's side-car: read with the video, not stored again as an item.
  EXPECT_EQ(by_path.count("walk.srt"), 0u);
  EXPECT_EQ(by_path["lecture.en.srt"]["kind"], "subtitle");
  EXPECT_EQ(by_path["lecture.en.srt"]["segments"], 1);
  // Filters: another job's name matches nothing; no answers for a prompt yet.
  EXPECT_EQ(Q("results --db zoo.db --job other --format json").out, "[]\n");
  CommandResult failed = Q("results --db zoo.db --job zoo --status failed --format jsonl");
  EXPECT_EQ(std::count(failed.out.begin(), failed.out.end(), '\n'), 1);
  EXPECT_NE(failed.out.find("broken.mp4"), std::string::npos);
  EXPECT_EQ(Q("results --db zoo.db --prompt summary --format json").out, "[]\n");
  CommandResult csv = Q("results --db zoo.db --format csv");
  EXPECT_EQ(csv.out.substr(0, csv.out.find("\r\n")),
            "job,item_id,path,kind,status,frames,duration_seconds,segments,answers,attempts,"
            "error");
}

TEST_F(QueryCommandTest, SearchRanksHitsWithItemAndTime) {
  CommandResult r = Q("search --db zoo.db penguin --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json hits = nlohmann::json::parse(r.out);
  ASSERT_EQ(hits.size(), 3u);  // walk.mp4's side-car, lecture.en.srt, notes.txt
  bool subtitle = false, document = false, subtitle_file = false;
  for (const auto& hit : hits) {
    const std::string path = hit["path"];
    if (path.ends_with("walk.mp4")) {
      subtitle = true;
      EXPECT_EQ(hit["source"], "sidecar:walk.srt");
      EXPECT_DOUBLE_EQ(hit["start_seconds"].get<double>(), 1.25);
      EXPECT_EQ(hit["where"], "0:00:01.250-0:00:02.000");
      EXPECT_EQ(hit["snippet"], "The emperor [penguin] walks");
    } else if (path.ends_with("notes.txt")) {
      document = true;
      EXPECT_EQ(hit["where"], "chunk 1");
    } else if (path.ends_with("lecture.en.srt")) {
      subtitle_file = true;
      EXPECT_EQ(hit["source"], "subtitles") << "its own cues, not a side-car";
      EXPECT_EQ(hit["where"], "0:00:03.000-0:00:04.000");
    }
    EXPECT_EQ(hit["job"], "zoo");
  }
  EXPECT_TRUE(subtitle);
  EXPECT_TRUE(document);
  EXPECT_TRUE(subtitle_file);
  EXPECT_EQ(hits[0]["rank"], 1);
  // Every word must occur; a query without hits is not an error.
  CommandResult both = Q("search --db zoo.db \"emperor penguin\" --format jsonl");
  EXPECT_EQ(std::count(both.out.begin(), both.out.end(), '\n'), 1) << "walk.srt, stored once";
  CommandResult none = Q("search --db zoo.db walrus");
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_NE(none.out.find("(0 rows)"), std::string::npos) << none.out;
  EXPECT_EQ(Q("search --db zoo.db \"  \"").exit_code, 2);
  CommandResult table = Q("search --db zoo.db penguin");
  EXPECT_NE(table.out.find("[penguin]"), std::string::npos) << table.out;
}

// Readers refuse what the writer refuses and name the file: a newer schema (was read as if
// known), a file with no tables (was "prepare: no such table: runs"), and a file a run is
// creating right now.
// `reel query --help` names every table and view of a database (generated from the schema), and
// `reel --help` gives every command's whole line.
TEST_F(QueryCommandTest, HelpNamesEveryTableAndView) {
  CommandResult help = Q("query --help");
  ASSERT_EQ(help.exit_code, 0);
  nlohmann::json names = QueryJson(Db(),
                                   "SELECT name FROM sqlite_schema WHERE type IN ('table', "
                                   "'view') AND name NOT LIKE 'sqlite%' AND name NOT LIKE "
                                   "'%fts%'");
  ASSERT_GT(names.size(), 15u);
  std::string flat = help.out;
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  for (const auto& row : names) {
    const std::string name = row["name"];
    EXPECT_TRUE(flat.find(" " + name + ",") != std::string::npos ||
                flat.find(" " + name + " ") != std::string::npos ||
                flat.find(" " + name + ".") != std::string::npos)
        << name << " is not in:\n"
        << help.out;
  }
  EXPECT_NE(flat.find("responses_fts"), std::string::npos) << help.out;  // searchable, listed
  EXPECT_EQ(flat.find("responses_fts_data"), std::string::npos) << help.out;
  // Each part of the footer once (the generated part was printed twice, and made at every start
  // of `reel`, whatever the command).
  EXPECT_EQ(CountOccurrences(help.out, "Tables: "), 1u) << help.out;
  EXPECT_EQ(CountOccurrences(help.out, "Which database: "), 1u) << help.out;
  EXPECT_LT(help.out.find("Tables: "), help.out.find("Which database: ")) << help.out;
  CommandResult top = Reel("--help");
  EXPECT_NE(top.out.find("an index, and a page on the runs (batch.html)\n"), std::string::npos)
      << top.out;
  EXPECT_NE(top.out.find("  init "), std::string::npos) << top.out;
}

TEST(ReaderCommandsTest, RefuseNewerAndEmptyDatabasesNamingThem) {
  std::string dir = ScratchDir("reader_refusals");
  WriteText(dir + "/a.txt", "some text\n");
  WriteText(dir + "/job.yaml", "name: r\ninputs: [a.txt]\n");
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  fs::copy_file(dir + "/r.db", dir + "/newer.db");
  ASSERT_EQ(RunCommand("sqlite3 " + ShellQuote(dir + "/newer.db") + " 'PRAGMA user_version = 99'")
                .exit_code,
            0);
  for (const std::string& command :
       {std::string("status --db newer.db"), std::string("results --db newer.db"),
        std::string("search --db newer.db text"), std::string("query --db newer.db 'SELECT 1'")}) {
    SCOPED_TRACE(command);
    CommandResult r = Reel(command, dir);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.err.find("newer.db: schema version 99 is newer than this build of reel"),
              std::string::npos)
        << r.err;
  }
  fs::copy_file(dir + "/newer.db", dir + "/newer-job.db");
  WriteText(dir + "/newer-job.yaml", "name: r\ninputs: [a.txt]\nstorage: {database: newer.db}\n");
  CommandResult plan = Reel("plan newer-job.yaml", dir);
  EXPECT_EQ(plan.exit_code, 1);
  EXPECT_NE(plan.err.find("schema version 99 is newer"), std::string::npos) << plan.err;

  WriteText(dir + "/empty.db", "");
  for (const std::string& command :
       {std::string("status --db empty.db"), std::string("results --db empty.db"),
        std::string("query --db empty.db 'SELECT * FROM runs'")}) {
    SCOPED_TRACE(command);
    CommandResult r = Reel(command, dir);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("empty.db: not a Reel results database yet"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("no such table"), std::string::npos) << r.err;
  }
  // plan: a file without tables holds no items; everything is new.
  WriteText(dir + "/empty-job.yaml", "name: r\ninputs: [a.txt]\nstorage: {database: empty.db}\n");
  CommandResult fresh = Reel("plan empty-job.yaml --format csv", dir);
  EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_NE(fresh.out.find(",process,new,"), std::string::npos) << fresh.out;

  // A run holds the lock and has not created the tables yet.
  WriteText(dir + "/empty.db.lock", "4242 somehost 2024-05-01T12:00:00Z\n");
  int fd = open((dir + "/empty.db.lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  CommandResult racing = Reel("status --db empty.db", dir);
  close(fd);
  EXPECT_EQ(racing.exit_code, 1);
  EXPECT_NE(racing.err.find("empty.db: a run is creating this database right now (pid 4242 on "
                            "somehost"),
            std::string::npos)
      << racing.err;
}

}  // namespace
}  // namespace reel::testing
