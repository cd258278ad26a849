// A reduce in levels (jobs/model/model_plan.h) end to end: a 40 s video split into 5 segments under
// a small token budget, whose segment answers (made long by the fake server's --answer-words) do
// not fit one reduce unshortened. `reel run` against the fake OpenAI-compatible server reduces
// them in groups, level by level; killed with -9 mid-way and run again; a failed intermediate
// reduce; the same job exported and imported round by round.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <set>

#include "tests/cli/cli_test_util.h"
#include "tests/support/fake_model_server.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Words the fake adds to each prose answer: two answers fit one reduce, three do not.
constexpr char kAnswerWords[] = "60";

std::string LevelsJobDir(const std::string& name, const std::string& model_extra) {
  const std::string dir = ScratchDir(name);
  fs::create_directories(dir + "/media");
  fs::copy_file(GeneratedMedia("reduce_levels_40.mp4",
                               "-f lavfi -i testsrc2=size=320x180:rate=25:duration=40 -c:v "
                               "libx264 -pix_fmt yuv420p"),
                dir + "/media/long.mp4");
  WriteText(dir + "/job.yaml",
            "name: levels\n"
            "inputs:\n"
            "  - media/long.mp4\n"
            "sampling: {policy: fps, fps: 1}\n"
            "context:\n"
            "  token_budget: 1400\n"
            "  fit_steps: [split]\n"
            "model:\n"
            "  endpoint: ${EP:-}\n"
            "  max_output_tokens: 128\n" +
                model_extra +
                "prompts:\n"
                "  - id: describe\n"
                "    question: Describe what happens.\n");
  return dir;
}

FakeServerOptions LongAnswers() {
  FakeServerOptions options;
  options.extra_args = {"--answer-words", kAnswerWords, "--log-text"};
  return options;
}

CommandResult ReelEnv(const FakeModelServer& server, const std::string& args,
                      const std::string& dir) {
  return RunCommand("cd " + ShellQuote(dir) + " && EP=" + ShellQuote(server.endpoint()) + " " +
                    ShellQuote(ReelPath()) + " " + args);
}

// Every text of a request body, joined.
std::string BodyText(const json& body) {
  std::string text;
  for (const json& m : body["messages"]) {
    if (m["content"].is_string()) text += m["content"].get<std::string>() + "\n";
    if (!m["content"].is_array()) continue;
    for (const json& p : m["content"]) {
      if (p.value("type", "") == "text") text += p["text"].get<std::string>() + "\n";
    }
  }
  return text;
}

// The part headers ("Part i of k (a s to b s)") of a reduce request, in order.
std::vector<std::string> Headers(const std::string& text) {
  static const std::regex kHeader(R"(Part \d+ of \d+ \([0-9.]+ s to [0-9.]+ s\):)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kHeader);
       it != std::sregex_iterator(); ++it) {
    out.push_back(it->str());
  }
  return out;
}

std::string Seconds(double s) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.1f", s);
  return buffer;
}

// The reduce tasks with their level, group and the tasks they read (from their contexts'
// manifests), in task order.
json ReduceTasks(const std::string& db) {
  return QueryJson(db,
                   "SELECT t.id, t.custom_id, t.segment_index, t.segment_count, t.start_seconds, "
                   "t.end_seconds, t.status, json_extract(c.manifest_json, '$.reduce.level') AS "
                   "level, json_extract(c.manifest_json, '$.reduce.parts') AS parts, "
                   "json_extract(c.manifest_json, '$.reduce.final') AS final FROM tasks t JOIN "
                   "contexts c ON c.id = t.context_id WHERE t.step = 'reduce' ORDER BY t.id");
}

// The complete job: 5 maps, then 3 reduces over pairs of them (level 1), 2 over those (level 2),
// and the final one; every level reads the whole level below, in order, and nothing is shortened.
void ExpectLevels(const std::string& db) {
  SCOPED_TRACE(db);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE step = 'map'"), 5);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status != 'succeeded'"), 0);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM tasks t WHERE (SELECT count(*) FROM requests r JOIN "
                     "responses p ON p.request_id = r.id WHERE r.task_id = t.id) != 1"),
            0);
  // Nothing was cut short: every answer was read whole (one reduce would have shortened them).
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts WHERE manifest_json LIKE '%shorten_text%'"),
            0);
  const json reduces = ReduceTasks(db);
  std::map<int, int> per_level;  // level 0: no level recorded
  for (const json& r : reduces) ++per_level[r["level"].is_number() ? r["level"].get<int>() : 0];
  ASSERT_EQ(per_level, (std::map<int, int>{{1, 3}, {2, 2}, {3, 1}})) << reduces.dump(1);
  // Each level's groups cover the level below, in time order, each part once.
  json below = QueryJson(db, "SELECT custom_id FROM tasks WHERE step = 'map' ORDER BY id");
  for (int level = 1; level <= 3; ++level) {
    std::vector<std::string> read, expected;
    json these = json::array();
    for (const json& b : below) expected.push_back(b["custom_id"]);
    for (const json& r : reduces) {
      if (r["level"] != level) continue;
      these.push_back({{"custom_id", r["custom_id"]}});
      for (const json& p : json::parse(r["parts"].get<std::string>())) read.push_back(p["task"]);
      EXPECT_EQ(r["segment_count"], level == 3 ? 1 : per_level[level]);
      EXPECT_EQ(r["final"], level == 3 ? 1 : 0);
    }
    EXPECT_EQ(read, expected) << "level " << level;
    below = these;
  }
  // Time ranges: the final reduce covers the video.
  EXPECT_DOUBLE_EQ(reduces.back()["start_seconds"].get<double>(), 0.0);
  EXPECT_GT(reduces.back()["end_seconds"].get<double>(), 39.0);
  // The final answer is the prompt's answer.
  json latest = QueryJson(db, "SELECT content, step FROM latest_answers");
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0]["step"], "reduce");
  EXPECT_EQ(latest[0]["content"],
            QueryJson(db,
                      "SELECT p.content FROM tasks t JOIN requests r ON r.task_id = t.id JOIN "
                      "responses p ON p.request_id = r.id WHERE t.step = 'reduce' AND "
                      "t.segment_count = 1")[0]["content"]);
}

// The headers each reduce request must carry: its parts' time ranges, numbered within it.
std::map<std::string, std::vector<std::string>> ExpectedHeaders(const std::string& db) {
  std::map<std::string, std::pair<double, double>> range;
  for (const json& t : QueryJson(db, "SELECT custom_id, start_seconds, end_seconds FROM tasks")) {
    range[t["custom_id"]] = {t["start_seconds"].get<double>(), t["end_seconds"].get<double>()};
  }
  std::map<std::string, std::vector<std::string>> out;
  for (const json& r : ReduceTasks(db)) {
    const json parts = json::parse(r["parts"].get<std::string>());
    std::vector<std::string>& h = out[r["custom_id"]];
    for (size_t i = 0; i < parts.size(); ++i) {
      auto [a, b] = range[parts[i]["task"]];
      h.push_back("Part " + std::to_string(i + 1) + " of " + std::to_string(parts.size()) + " (" +
                  Seconds(a) + " s to " + Seconds(b) + " s):");
    }
  }
  return out;
}

TEST(ReduceLevelsTest, AnswersThatDoNotFitOneReduceAreReducedInLevels) {
  FakeModelServer server(LongAnswers());
  ASSERT_TRUE(server.started());
  const std::string dir = LevelsJobDir("reduce_levels", "  concurrency: 1\n");
  const std::string db = dir + "/levels.db";
  CommandResult run = ReelEnv(server, "run job.yaml", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectLevels(db);
  // One request per task, in task order (concurrency 1); each reduce request holds exactly the
  // parts of its group, with their time ranges.
  const std::vector<json> chats = server.ChatLog();
  const json tasks = QueryJson(db, "SELECT custom_id, step FROM tasks ORDER BY id");
  ASSERT_EQ(chats.size(), tasks.size());
  const auto expected = ExpectedHeaders(db);
  for (size_t i = 0; i < chats.size(); ++i) {
    const std::vector<std::string> headers = Headers(BodyText(chats[i]["body"]));
    if (tasks[i]["step"] == "map") {
      EXPECT_TRUE(headers.empty()) << i;
    } else {
      EXPECT_EQ(headers, expected.at(tasks[i]["custom_id"])) << i;
    }
  }
  // Run again: nothing to ask.
  CommandResult again = ReelEnv(server, "run job.yaml", dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.ChatLog().size(), chats.size());
}

// kill -9 while the levels are asked, then a run to the end: every task answered once, and no
// task that had an answer before the last run was asked again.
TEST(ReduceLevelsTest, KilledMidwayThenRunAgainAsksNothingAnsweredTwice) {
  FakeModelServer server(LongAnswers());
  ASSERT_TRUE(server.started());
  const std::string dir = LevelsJobDir("reduce_levels_crash", "  concurrency: 1\n");
  const std::string db = dir + "/levels.db";
  server.Script(R"([{"kind": "slow", "seconds": 0.3, "times": 10000}])");
  // Killed once the server has received the 7th request (level 1, 2nd group), then the 10th
  // (level 2, 2nd group).
  for (size_t kill_at : {7u, 10u}) {
    setenv("EP", server.endpoint().c_str(), 1);
    ReelProcess run({"run", dir + "/job.yaml", "--db", db}, dir + "/kill.log");
    ASSERT_GT(run.pid(), 0);
    ASSERT_TRUE(WaitFor([&] { return server.ChatLog().size() >= kill_at || !run.Running(); },
                        std::chrono::seconds(60)));
    run.Signal(SIGKILL);
    EXPECT_EQ(run.Wait(), 128 + SIGKILL) << "the run ended before the kill";
  }
  unsetenv("EP");
  const json answered = QueryJson(db, "SELECT id FROM tasks WHERE status = 'succeeded'");
  EXPECT_GE(answered.size(), 8u);  // the maps and at least 3 reduces
  // Intermediate answers are no prompt's answer: nothing final yet.
  EXPECT_GE(
      QueryInt(db, "SELECT count(*) FROM answers WHERE step = 'reduce' AND segment_count > 1"), 3);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM latest_answers"), 0);
  const int64_t last_request = QueryInt(db, "SELECT max(id) FROM requests");
  CommandResult last = ReelEnv(server, "run job.yaml --db " + ShellQuote(db), dir);
  ASSERT_EQ(last.exit_code, 0) << last.err;
  ExpectLevels(db);
  std::string ids;
  for (const json& a : answered)
    ids += (ids.empty() ? "" : ",") + std::to_string(a["id"].get<int64_t>());
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM requests WHERE id > " +
                             std::to_string(last_request) + " AND task_id IN (" + ids + ")"),
            0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM requests WHERE status = 'sent'"), 0);
}

// A failed intermediate reduce fails the prompt, naming the level and group; a plain rerun does
// not ask it again, --retry-failed does and the levels finish.
TEST(ReduceLevelsTest, AFailedIntermediateReduceFailsThePromptAndIsRetriedOnRequest) {
  FakeModelServer server(LongAnswers());
  ASSERT_TRUE(server.started());
  const std::string dir = LevelsJobDir("reduce_levels_fail", "  concurrency: 1\n  retries: 0\n");
  const std::string db = dir + "/levels.db";
  // The first request over two parts: level 1, group 1.
  server.Script(R"([{"kind": "status", "status": 500, "match": "Part 2 of 2 ("}])");
  CommandResult run = ReelEnv(server, "run job.yaml --verbose", dir);
  EXPECT_NE((run.out + run.err)
                .find("long.mp4: prompt 'describe': reduce level 1, group 1 of 3 (segments "
                      "1-2, 0.0 s to "),
            std::string::npos)
      << run.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status = 'failed'"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM latest_answers"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM failures WHERE stage = 'request'"), 1);
  const size_t sent = server.ChatLog().size();
  EXPECT_EQ(sent, 8u);  // 5 maps, 3 level-1 reduces (one failed)
  CommandResult plain = ReelEnv(server, "run job.yaml", dir);
  EXPECT_EQ(server.ChatLog().size(), sent) << plain.err;
  CommandResult retried = ReelEnv(server, "run job.yaml --retry-failed", dir);
  ASSERT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(server.ChatLog().size(), sent + 4);  // the failed one, 2 at level 2, the final
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM failures WHERE stage = 'request'"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM latest_answers"), 1);
}

// Answers too long to fit a reduce even alone: no two neighbours fit together, so each level
// pairs them, shortened (recorded in the manifests' fit steps), and the levels still end.
TEST(ReduceLevelsTest, AnswersTooLongEvenAloneArePairedShortenedAndTheLevelsEnd) {
  FakeServerOptions options;
  options.extra_args = {"--answer-words", "400", "--log-text"};
  FakeModelServer server(options);
  ASSERT_TRUE(server.started());
  const std::string dir = LevelsJobDir("reduce_levels_too_long", "  concurrency: 2\n");
  const std::string db = dir + "/levels.db";
  CommandResult run = ReelEnv(server, "run job.yaml", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status != 'succeeded'"), 0);
  const json reduces = ReduceTasks(db);
  std::map<int, int> per_level;
  for (const json& r : reduces) {
    ++per_level[r["level"].get<int>()];
    EXPECT_LE(json::parse(r["parts"].get<std::string>()).size(), 2u);
  }
  EXPECT_EQ(per_level, (std::map<int, int>{{1, 3}, {2, 2}, {3, 1}})) << reduces.dump(1);
  // Every reduce over two answers was shortened, both answers evenly, and says so.
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM tasks t JOIN contexts c ON c.id = t.context_id WHERE "
                     "t.step = 'reduce' AND json_array_length(json_extract(c.manifest_json, "
                     "'$.reduce.parts')) = 2 AND json_extract(c.manifest_json, "
                     "'$.reduce.shortened.cap_bytes') > 100"),
            4);
  int pairs = 0;
  for (const json& chat : server.ChatLog()) {
    const std::string text = BodyText(chat["body"]);
    if (Headers(text).size() != 2) continue;
    ++pairs;
    const size_t second = text.find("Part 2 of 2 (");
    ASSERT_NE(second, std::string::npos);
    // Each part: its answer's beginning, cut short.
    for (const std::string& half : {text.substr(0, second), text.substr(second)}) {
      EXPECT_NE(half.find("Answer to: "), std::string::npos);
      EXPECT_NE(half.find(" [...]"), std::string::npos);
    }
  }
  EXPECT_EQ(pairs, 4);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM latest_answers"), 1);
}

// The same job without an endpoint, exported and imported round by round (the segments, then
// one round per level): the same rows as the online run.
TEST(ReduceLevelsTest, ExportImportRoundsGiveTheSameRowsAsTheOnlineRun) {
  FakeModelServer server(LongAnswers());
  ASSERT_TRUE(server.started());
  const std::string online_dir = LevelsJobDir("reduce_levels_online", "  concurrency: 2\n");
  ASSERT_EQ(ReelEnv(server, "run job.yaml", online_dir).exit_code, 0);

  const std::string dir = LevelsJobDir("reduce_levels_batch", "  concurrency: 2\n");
  const std::string db = dir + "/levels.db";
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  std::vector<size_t> lines_per_round;
  for (int round = 0; round < 8; ++round) {
    const std::string in = dir + "/in" + std::to_string(round) + ".jsonl";
    const std::string out = dir + "/out" + std::to_string(round) + ".jsonl";
    CommandResult exported =
        Reel("export --db " + ShellQuote(db) + " --format openai-batch " + ShellQuote(in), dir);
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    const std::string text = ReadText(in);
    if (text.empty()) break;
    lines_per_round.push_back(std::count(text.begin(), text.end(), '\n'));
    // Deterministic: exporting again writes the same lines (groups, ids and bodies).
    ASSERT_EQ(
        Reel("export --db " + ShellQuote(db) + " --format openai-batch again.jsonl", dir).exit_code,
        0);
    EXPECT_EQ(ReadText(dir + "/again.jsonl"), text) << "round " << round;
    ASSERT_EQ(FakeModelServer::RunBatch(LongAnswers(), in, out), 0);
    CommandResult imported = Reel("import --db " + ShellQuote(db) + " " + ShellQuote(out), dir);
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
  }
  EXPECT_EQ(lines_per_round, (std::vector<size_t>{5, 3, 2, 1}));
  ExpectLevels(db);
  // (custom ids and manifests name the item's path, which differs between the two)
  const std::string rows =
      "SELECT t.step, json_extract(c.manifest_json, '$.reduce.level') AS level, t.segment_index, "
      "t.segment_count, t.start_seconds, t.end_seconds, p.content, p.prompt_tokens, "
      "json_extract(c.manifest_json, '$.reduce.segments') AS segments, c.total_tokens FROM tasks "
      "t JOIN requests r ON r.task_id = t.id JOIN responses p ON p.request_id = r.id JOIN "
      "contexts c ON c.id = t.context_id ORDER BY 1, 2, 3";
  EXPECT_EQ(QueryJson(db, rows).dump(1), QueryJson(online_dir + "/levels.db", rows).dump(1));
}

}  // namespace
}  // namespace reel::testing
