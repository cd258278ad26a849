// The model stage end to end: `reel run` against the fake OpenAI-compatible server
// (tests/support/fake_openai_server.py) with two videos with subtitles (one long enough to be
// split and asked map-reduce), a document and an image, two prompts (one with a JSON schema);
// killed with -9 at many points and run again; exported as an OpenAI Batch file, answered by the
// fake in batch mode and imported; faults injected; `reel ask`.
#include <gtest/gtest.h>
#include <sys/file.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "tests/cli/cli_test_util.h"
#include "tests/support/fake_model_server.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kReasoning[] = "Let me look at the frames first.";

std::string Clip(int seconds) {
  return GeneratedMedia("model_clip_" + std::to_string(seconds) + ".mp4",
                        "-f lavfi -i testsrc2=size=320x180:rate=25:duration=" +
                            std::to_string(seconds) + " -c:v libx264 -pix_fmt yuv420p");
}

std::string Still() {
  return GeneratedMedia("model_still.png",
                        "-f lavfi -i testsrc2=size=320x240:rate=1:duration=1 -frames:v 1");
}

// The job: short.mp4 (3 s, asked whole), long.mp4 (12 s, split in segments), notes.md, still.png;
// prompts "describe" and "facts" (JSON schema). `model_extra` is appended to the model section.
std::string MakeJobDir(const std::string& name,
                       const std::string& model_extra = "  concurrency: 3\n",
                       const std::string& context_extra = "") {
  const std::string dir = ScratchDir(name);
  fs::create_directories(dir + "/media");
  fs::copy_file(Clip(3), dir + "/media/short.mp4");
  fs::copy_file(Clip(12), dir + "/media/long.mp4");
  fs::copy_file(Still(), dir + "/media/still.png");
  WriteText(dir + "/media/short.srt", "1\n00:00:00,500 --> 00:00:02,000\nA short line.\n");
  WriteText(dir + "/media/long.srt",
            "1\n00:00:01,000 --> 00:00:03,000\nThe first line.\n\n2\n00:00:08,000 --> "
            "00:00:10,000\nThe second line.\n");
  WriteText(dir + "/media/notes.md", "# Notes\n\nThe clips are test patterns.\n");
  WriteText(dir + "/job.yaml",
            "name: e2e\n"
            "inputs:\n"
            "  - media/*.mp4\n"
            "  - path: media/notes.md\n"
            "    kind: document\n"
            "  - media/still.png\n"
            "sampling: {policy: fps, fps: 1}\n"
            "context:\n"
            "  token_budget: 1400\n"
            "  fit_steps: [split]\n" +
                context_extra +
                "model:\n"
                "  endpoint: ${EP:-}\n"
                "  max_output_tokens: 128\n" +
                model_extra +
                "prompts:\n"
                "  - id: describe\n"
                "    question: Describe what happens.\n"
                "  - id: facts\n"
                "    question: List the facts.\n"
                "    json_schema: {type: object, properties: {facts: {type: array, items: "
                "{type: string}}, count: {type: integer}}, required: [facts, count]}\n");
  return dir;
}

std::string WithEndpoint(const FakeModelServer& server) {
  return "EP=" + ShellQuote(server.endpoint()) + " ";
}

// `reel ARGS` in `dir` with environment assignments `env` ("NAME=value ...").
CommandResult ReelEnv(const std::string& env, const std::string& args, const std::string& dir) {
  return RunCommand("cd " + ShellQuote(dir) + " && " + env + " " + ShellQuote(ReelPath()) + " " +
                    args);
}

// Every row the complete job must have: 12 tasks (short, notes, still: one ask per prompt; long:
// two segments per prompt and a reduce per prompt), each answered exactly once.
void ExpectCompleteRows(const std::string& db, const std::string& mode) {
  SCOPED_TRACE(db);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks"), 12);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status != 'succeeded'"), 0);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM tasks t WHERE (SELECT count(*) FROM requests r "
                     "JOIN responses p ON p.request_id = r.id WHERE r.task_id = t.id) != 1"),
            0);
  // The split: the long video's segments cover it in order, then a reduce per prompt.
  json maps = QueryJson(db,
                        "SELECT t.prompt_id, t.segment_index, t.segment_count, t.start_seconds, "
                        "t.end_seconds FROM tasks t JOIN items i ON i.id = t.item_id WHERE "
                        "i.path LIKE '%long.mp4' AND t.step = 'map' ORDER BY 1, 2");
  ASSERT_EQ(maps.size(), 4u) << maps.dump();
  for (const json& m : maps) EXPECT_EQ(m["segment_count"], 2);
  EXPECT_DOUBLE_EQ(maps[0]["start_seconds"].get<double>(), 0.0);
  EXPECT_LT(maps[0]["end_seconds"].get<double>(), maps[1]["start_seconds"].get<double>());
  EXPECT_GT(maps[1]["end_seconds"].get<double>(), 11.0);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM tasks t JOIN items i ON i.id = t.item_id WHERE "
                     "i.path LIKE '%long.mp4' AND t.step = 'reduce'"),
            2);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE step = 'ask'"), 6);
  // The final answers: one per item and prompt.
  json latest = QueryJson(db,
                          "SELECT path, prompt_id, step, content, reasoning, json_answer, "
                          "prompt_tokens, completion_tokens FROM latest_answers ORDER BY 1, 2");
  ASSERT_EQ(latest.size(), 8u) << latest.dump();
  for (const json& a : latest) {
    SCOPED_TRACE(a.dump());
    const bool is_long = a["path"].get<std::string>().ends_with("long.mp4");
    EXPECT_EQ(a["step"], is_long ? "reduce" : "ask");
    EXPECT_EQ(a["reasoning"], kReasoning);
    EXPECT_EQ(a["content"].get<std::string>().find("mm:think"), std::string::npos);
    EXPECT_GT(a["prompt_tokens"].get<int64_t>(), 0);
    EXPECT_GT(a["completion_tokens"].get<int64_t>(), 0);
    if (a["prompt_id"] == "facts") {
      json answer = json::parse(a["json_answer"].get<std::string>());
      EXPECT_TRUE(answer["facts"].is_array());
      EXPECT_TRUE(answer["count"].is_number_integer());
    } else {
      EXPECT_TRUE(a["json_answer"].is_null());
      EXPECT_EQ(a["content"].get<std::string>().rfind("Answer to: ", 0), 0u);
      if (is_long) {
        EXPECT_NE(a["content"].get<std::string>().find("The video was too long"),
                  std::string::npos);
      }
    }
  }
  // SQLite's JSON functions read the structured answers.
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM latest_answers WHERE prompt_id = 'facts' AND "
                     "json_type(json_answer, '$.facts') = 'array'"),
            4);
  // Every context segment the tasks name is stored, with its tokens.
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM tasks t LEFT JOIN contexts c ON c.id = "
                     "t.context_id WHERE c.id IS NULL OR c.total_tokens <= 0"),
            0);
  (void)mode;
}

class ModelRunTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelRunTest, EveryRowOfTheJobAgainstTheFakeServer) {
  FakeModelServer server({.mode = GetParam()});
  ASSERT_TRUE(server.started());
  // vLLM: the server's /tokenize count of the first request of each shape is recorded; SGLang:
  // answers are streamed (the stored result is the same; the time to first token is kept).
  const bool stream = GetParam() == "sglang";
  const std::string dir = MakeJobDir("model_e2e_" + GetParam(),
                                     std::string("  concurrency: 3\n  verify_tokens: true\n") +
                                         (stream ? "  stream: true\n" : ""));
  const std::string db = dir + "/e2e.db";
  CommandResult run = ReelEnv(WithEndpoint(server), "run job.yaml", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("model: 12 requests (12 ok, 0 failed"), std::string::npos) << run.err;
  ExpectCompleteRows(db, GetParam());
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM requests WHERE via = 'online' AND outcome = 'ok' "
                     "AND attempts = 1 AND status = 'succeeded'"),
            12);
  // The server saw well-formed requests only, each naming its task.
  std::vector<json> chats = server.ChatLog();
  ASSERT_EQ(chats.size(), 12u);
  std::set<std::string> custom_ids;
  for (const json& row : QueryJson(db, "SELECT custom_id FROM tasks")) {
    custom_ids.insert(row["custom_id"].get<std::string>());
  }
  for (const json& c : chats) {
    EXPECT_TRUE(c["shape_errors"].empty()) << c["shape_errors"].dump();
    const std::string id = c["headers"].value("x-request-id", "");
    EXPECT_TRUE(custom_ids.count(id.substr(0, id.rfind('-')))) << id;
  }
  // verify_tokens: one /tokenize call per shape (video ask, video segment, reduce, document,
  // image), its count kept with the task and compared in the report.
  const int64_t checked = QueryInt(db, "SELECT count(*) FROM tasks WHERE server_count_tokens > 0");
  EXPECT_EQ(checked, 5);
  EXPECT_EQ(static_cast<int64_t>(json::parse(server.Log()).size()) - 1 - 12, checked)
      << "GET /v1/models, the chats, and one /tokenize per shape";
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM requests WHERE ttft_seconds IS NOT NULL"),
            stream ? 12 : 0);
  // The run report is kept for `reel status`.
  json report = json::parse(
      QueryJson(db, "SELECT report_json FROM runs")[0]["report_json"].get<std::string>());
  EXPECT_EQ(report["requests"], 12);
  EXPECT_EQ(report["ok"], 12);
  EXPECT_GT(report["prompt_tokens"].get<int64_t>(), 0);
  EXPECT_EQ(report["tasks"]["answered"], 12);
  EXPECT_EQ(report["tokenize_compared"], 5);
  EXPECT_EQ(report["ttft_mean_s"].is_number(), stream);
  EXPECT_EQ(report["token_compared"], 12);
  CommandResult status = Reel("status --db " + ShellQuote(db));
  EXPECT_NE(status.out.find("Questions to the model: 12 answered, 0 failed, 0 waiting"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("model: 12 requests (12 ok"), std::string::npos) << status.out;

  // A second run asks nothing: every answer is stored.
  CommandResult again = ReelEnv(WithEndpoint(server), "run job.yaml", dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.ChatLog().size(), 12u);
}

INSTANTIATE_TEST_SUITE_P(Servers, ModelRunTest, ::testing::Values("vllm", "sglang"));

// Prompts about one context: the first alone, the rest once it has returned (so the server can
// reuse its prefix cache); here the first prompt's requests take 0.4 s each.
TEST(ModelOrderTest, TheFirstPromptAboutAContextGoesOutAlone) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  server.Script(R"([{"kind": "slow", "seconds": 0.4, "times": 100, "match": "Describe what"}])");
  const std::string dir = MakeJobDir("model_order");
  CommandResult run = ReelEnv(WithEndpoint(server), "run job.yaml", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Group the requests by everything before the question (the same frames and text).
  std::map<std::string, std::vector<std::pair<double, std::string>>> groups;
  for (const json& c : server.ChatLog()) {
    json content = c["body"]["messages"].back()["content"];
    const std::string question = content.back()["text"];
    content.erase(content.size() - 1);
    if (question.find("too long") != std::string::npos) continue;  // reduces: not shared
    groups[content.dump()].emplace_back(c["time"].get<double>(), question);
  }
  ASSERT_EQ(groups.size(), 5u);  // short, long x 2 segments, notes, still
  for (auto& [prefix, requests] : groups) {
    ASSERT_EQ(requests.size(), 2u);
    std::sort(requests.begin(), requests.end());
    EXPECT_EQ(requests[0].second, "Describe what happens.");
    EXPECT_GE(requests[1].first - requests[0].first, 0.39) << "sent before the first returned";
  }
  // ... and the server reused the prefix: the second of each pair found it cached.
  EXPECT_EQ(QueryInt(dir + "/e2e.db",
                     "SELECT count(*) FROM answers WHERE prompt_id = 'facts' AND step != "
                     "'reduce' AND cached_tokens > 0"),
            4);  // the notes' prompt is shorter than one 128-token block
}

// kill -9 at many points of runs that ask the model, then a run to the end: every answer is
// present exactly once, nothing is left half-sent, and only what had no stored answer was asked
// again.
TEST(ModelCrashTest, KilledAtManyPointsEveryAnswerEndsUpStoredOnce) {
  FakeModelServer server({.extra_args = {"--prefill-tokens-per-second", "20000"}});
  ASSERT_TRUE(server.started());
  const std::string dir = MakeJobDir("model_crash");
  const std::string db = dir + "/e2e.db";
  const std::string env = "EP=" + server.endpoint();

  // Every answer takes at least 0.4 s, so a run killed just after sending has answers in flight.
  const std::string slow_answers = R"([{"kind": "slow", "seconds": 0.4, "times": 10000}])";
  server.Script(slow_answers);
  // Calibrate one whole run in a separate database.
  const auto t0 = std::chrono::steady_clock::now();
  CommandResult calibration =
      ReelEnv(WithEndpoint(server), "run job.yaml --db calibration.db", dir);
  ASSERT_EQ(calibration.exit_code, 0) << calibration.err;
  const double full_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  server.Reset();
  server.Script(slow_answers);

  setenv("EP", server.endpoint().c_str(), 1);
  std::mt19937 rng(20240611);
  // Every third run is killed at a random time early in a whole run's span (while it samples,
  // builds contexts or starts sending); the others just after the server received their 1st to
  // 4th request, so with requests in flight (the 4th goes out once a first answer has come back).
  // Kills keyed to the server's log, not to the clock, keep landing mid-way however loaded the
  // machine is (a clock-only version once killed too few runs under heavy load: the runs before it
  // had already done the work).
  std::uniform_real_distribution<double> when(0.05, 0.4);
  const int kKills = 12;
  int killed = 0;
  for (int k = 0; k < kKills; ++k) {
    const std::string log = dir + "/kill" + std::to_string(k) + ".log";
    const size_t sent_before = server.ChatLog().size();
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::milliseconds(static_cast<int>(when(rng) * full_ms));
    const size_t kill_after_requests = 1 + k % 4;
    const bool by_clock = k % 3 == 0;
    ReelProcess run({"run", dir + "/job.yaml", "--db", db}, log);
    ASSERT_GT(run.pid(), 0);
    while (run.Running()) {
      if (by_clock ? std::chrono::steady_clock::now() >= deadline
                   : server.ChatLog().size() >= sent_before + kill_after_requests) {
        run.Signal(SIGKILL);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(by_clock ? 2 : 15));
    }
    if (run.Wait() == 128 + SIGKILL) ++killed;
  }
  unsetenv("EP");
  // Seen once under heavy load (not reproduced since): every later failure says what the runs did.
  SCOPED_TRACE("calibrated run " + std::to_string(full_ms) + " ms; " + std::to_string(killed) +
               " of " + std::to_string(kKills) + " runs killed; logs in " + dir);
  EXPECT_GE(killed, kKills / 2) << "most runs should have been killed mid-way";
  CommandResult last = ReelEnv(WithEndpoint(server), "run job.yaml --db " + ShellQuote(db), dir);
  ASSERT_EQ(last.exit_code, 0) << last.err;
  ExpectCompleteRows(db, "vllm");
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM responses"), 12);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM requests WHERE status = 'sent'"), 0);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM requests WHERE status = 'failed' AND outcome NOT "
                     "IN ('interrupted', 'cancelled')"),
            0);
  // Asked again only what had no stored answer: at most the requests in flight at each kill.
  const int64_t sends = static_cast<int64_t>(server.ChatLog().size());
  EXPECT_LE(sends, 12 + killed * 3);
  EXPECT_EQ(QueryJson(db, "PRAGMA integrity_check")[0].begin()->get<std::string>(), "ok");
}

// The same job without an endpoint: everything prepared, waiting for a model; written as a
// Batch file, answered by the fake in batch mode (as `vllm run-batch`), imported (twice: the
// second changes nothing), and again for the reduce step: the same rows as the online run.
TEST(ModelBatchTest, ExportThenImportGivesTheSameRowsAsTheOnlineRun) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string online_dir = MakeJobDir("model_batch_online");
  ASSERT_EQ(ReelEnv(WithEndpoint(server), "run job.yaml", online_dir).exit_code, 0);

  const std::string dir = MakeJobDir("model_batch");
  const std::string db = dir + "/e2e.db";
  CommandResult prepare = Reel("run job.yaml", dir);
  ASSERT_EQ(prepare.exit_code, 0) << prepare.err;
  EXPECT_NE(prepare.err.find("10 waiting for a model"), std::string::npos) << prepare.err;
  EXPECT_NE(prepare.err.find("reel export"), std::string::npos) << prepare.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status = 'waiting'"), 10);

  int rounds = 0;
  for (; rounds < 4; ++rounds) {
    const std::string in = dir + "/in" + std::to_string(rounds) + ".jsonl";
    const std::string out = dir + "/out" + std::to_string(rounds) + ".jsonl";
    CommandResult exported =
        Reel("export --db " + ShellQuote(db) + " --format openai-batch " + ShellQuote(in), dir);
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    if (ReadText(in).empty()) break;
    // custom_id: unique within the file, and stable: exporting again writes the same lines.
    std::set<std::string> ids;
    size_t lines = 0;
    for (std::istringstream s(ReadText(in)); !s.eof();) {
      std::string line;
      std::getline(s, line);
      if (line.empty()) continue;
      ++lines;
      ids.insert(json::parse(line)["custom_id"].get<std::string>());
    }
    EXPECT_EQ(ids.size(), lines);
    ASSERT_EQ(
        Reel("export --db " + ShellQuote(db) + " --format openai-batch again.jsonl", dir).exit_code,
        0);
    EXPECT_EQ(ReadText(dir + "/again.jsonl"), ReadText(in));
    ASSERT_EQ(FakeModelServer::RunBatch({}, in, out), 0);
    CommandResult imported = Reel("import --db " + ShellQuote(db) + " " + ShellQuote(out), dir);
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    EXPECT_NE(imported.err.find(std::to_string(lines) + " answers stored"), std::string::npos)
        << imported.err;
    CommandResult twice = Reel("import --db " + ShellQuote(db) + " " + ShellQuote(out), dir);
    ASSERT_EQ(twice.exit_code, 0) << twice.err;
    EXPECT_NE(twice.err.find("0 answers stored, 0 failures stored, " + std::to_string(lines) +
                             " imported before"),
              std::string::npos)
        << twice.err;
  }
  EXPECT_EQ(rounds, 2) << "the segments, then the reduce over their answers";
  ExpectCompleteRows(db, "vllm");
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM requests WHERE via = 'batch'"), 12);

  const std::string rows =
      "SELECT replace(path, rtrim(path, replace(path, '/', '')), '') AS file, prompt_id, step, "
      "segment_index, content, reasoning, finish_reason, prompt_tokens, completion_tokens, "
      "json_answer FROM answers ORDER BY 1, 2, 3, 4";
  EXPECT_EQ(QueryJson(db, rows).dump(1), QueryJson(online_dir + "/e2e.db", rows).dump(1));
}

// `reel export` (and `reel import`) read relative paths of the job (here a prompt's JSON schema
// file, and the media) from the job file's directory, as `reel run` does, wherever they are run
// from and whether the job comes from its file or from the database.
TEST(ModelBatchTest, ExportFromAnotherDirectoryReadsPathsFromTheJobsDirectory) {
  const std::string dir = MakeJobDir("model_batch_elsewhere");
  std::string job = ReadText(dir + "/job.yaml");
  const size_t schema_at = job.find("json_schema: {");
  ASSERT_NE(schema_at, std::string::npos);
  const size_t schema_end = job.find('\n', schema_at);
  job.replace(schema_at, schema_end - schema_at, "json_schema: facts.schema.json");
  WriteText(dir + "/job.yaml", job);
  WriteText(
      dir + "/facts.schema.json",
      R"({"type": "object", "properties": {"facts": {"type": "array", "items": )"
      R"({"type": "string"}}, "count": {"type": "integer"}}, "required": ["facts", "count"]})");
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  CommandResult here = Reel("export --db e2e.db --format openai-batch here.jsonl", dir);
  ASSERT_EQ(here.exit_code, 0) << here.err;
  ASSERT_FALSE(ReadText(dir + "/here.jsonl").empty());

  const std::string elsewhere = ScratchDir("model_batch_elsewhere_cwd");
  for (const std::string& how :
       {"--db " + ShellQuote(dir + "/e2e.db"), "--db " + ShellQuote(dir + "/e2e.db") + " --job e2e",
        "--job " + ShellQuote(dir + "/job.yaml")}) {
    SCOPED_TRACE(how);
    fs::remove(elsewhere + "/there.jsonl");
    CommandResult there = Reel("export " + how + " --format openai-batch there.jsonl", elsewhere);
    ASSERT_EQ(there.exit_code, 0) << there.err;
    EXPECT_EQ(there.err.find("warning"), std::string::npos) << there.err;
    EXPECT_EQ(ReadText(elsewhere + "/there.jsonl"), ReadText(dir + "/here.jsonl"));
  }
  EXPECT_FALSE(fs::exists(elsewhere + "/e2e.db.frames"));
}

// Errors in a results file are stored too; a too-long one makes the next export a re-fitted
// request (a new custom_id) instead of the same one again.
TEST(ModelBatchTest, ImportedErrorsAreStoredAndTooLongIsRefitted) {
  const std::string dir = MakeJobDir("model_batch_errors");
  const std::string db = dir + "/e2e.db";
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  ASSERT_EQ(Reel("export --db e2e.db --format openai-batch in.jsonl", dir).exit_code, 0);
  std::vector<json> lines;
  for (std::istringstream s(ReadText(dir + "/in.jsonl")); !s.eof();) {
    std::string line;
    std::getline(s, line);
    if (!line.empty()) lines.push_back(json::parse(line));
  }
  ASSERT_EQ(lines.size(), 10u);
  // The notes' "describe": refused as too long (vLLM's wording); the still's: a server error
  // as vllm run-batch writes it; one line nobody asked for; one that is not JSON.
  std::string notes_describe, still_describe;
  for (const json& l : lines) {
    const std::string body = l["body"].dump();
    if (body.find("The clips are test patterns") != std::string::npos &&
        body.find("Describe what") != std::string::npos) {
      notes_describe = l["custom_id"];
    }
    if (body.find("image_url") != std::string::npos &&
        body.find("Describe what") != std::string::npos &&
        body.find("video") == std::string::npos && body.find("Frame at") == std::string::npos) {
      still_describe = l["custom_id"];
    }
  }
  ASSERT_FALSE(notes_describe.empty());
  json too_long = {
      {"id", "batch-1"},
      {"custom_id", notes_describe},
      {"response",
       {{"status_code", 400},
        {"request_id", "r1"},
        {"body",
         {{"error",
           {{"message",
             "You passed 300 input tokens and requested 128 output tokens. However, the "
             "model's context length is only 1400 tokens, resulting in a maximum input length "
             "of 1272 tokens. Please reduce the length of the input prompt."},
            {"type", "BadRequestError"},
            {"code", 400}}}}}}},
      {"error", nullptr}};
  WriteText(dir + "/out.jsonl", too_long.dump() + "\n" +
                                    R"({"id": "batch-2", "custom_id": "reel-nobody", )"
                                    R"("response": null, "error": "no such request"})" +
                                    "\nnot json\n");
  CommandResult imported = Reel("import --db e2e.db out.jsonl", dir);
  EXPECT_EQ(imported.exit_code, 3) << imported.err;
  EXPECT_NE(imported.err.find("0 answers stored, 1 failures stored, 0 imported before, 1 unknown, "
                              "1 unreadable"),
            std::string::npos)
      << imported.err;
  json failed = QueryJson(db,
                          "SELECT t.status, r.outcome, r.too_long_prompt_tokens, "
                          "r.too_long_context_length, r.via FROM tasks t JOIN requests r ON "
                          "r.id = t.request_id WHERE t.custom_id = '" +
                              notes_describe + "'");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]["status"], "failed");
  EXPECT_EQ(failed[0]["outcome"], "prompt too long");
  EXPECT_EQ(failed[0]["too_long_prompt_tokens"], 300);
  EXPECT_EQ(failed[0]["too_long_context_length"], 1400);
  EXPECT_EQ(failed[0]["via"], "batch");
  // Importing it again changes nothing.
  CommandResult twice = Reel("import --db e2e.db out.jsonl", dir);
  EXPECT_NE(twice.err.find("0 failures stored, 1 imported before"), std::string::npos) << twice.err;
  // The next export re-fits that question: 10 lines, the notes' describe under a new id.
  ASSERT_EQ(Reel("export --db e2e.db --format openai-batch in2.jsonl", dir).exit_code, 0);
  const std::string in2 = ReadText(dir + "/in2.jsonl");
  EXPECT_EQ(std::count(in2.begin(), in2.end(), '\n'), 10);
  EXPECT_EQ(in2.find(notes_describe), std::string::npos);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM tasks t JOIN items i ON i.id = t.item_id WHERE "
                     "i.path LIKE '%notes.md' AND t.prompt_id = 'describe'"),
            2);
}

// Faults: retried (429 with retry-after, a cut connection, 503), recorded (malformed JSON,
// empty choices, a 500 that outlasts the retries), re-fitted (too-long in both shapes), and
// asked again with --retry-failed.
TEST(ModelFaultTest, RetriedRecordedRefittedAndRetriedOnRequest) {
  FakeModelServer server({.mode = "sglang"});
  ASSERT_TRUE(server.started());
  const std::string dir = MakeJobDir("model_faults", "  concurrency: 1\n");
  const std::string db = dir + "/e2e.db";
  // Matched on each item's text, in the order the items' requests go out.
  server.Script(R"([
    {"kind": "status", "status": 429, "headers": {"retry-after": "0.1"}, "match": "test patterns"},
    {"kind": "too_long", "shape": "vllm", "prompt_tokens": 200, "limit": 1400, "match": "test patterns"},
    {"kind": "cut", "match": "A short line"},
    {"kind": "status", "status": 503, "match": "A short line"},
    {"kind": "too_long", "shape": "sglang", "prompt_tokens": 1500, "match": "The first line"}
  ])");
  CommandResult run = ReelEnv(WithEndpoint(server), "run job.yaml", dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // Retried: the notes (429), the short clip (cut, 503).
  EXPECT_EQ(QueryInt(db, "SELECT sum(attempts - 1) FROM requests"), 3);
  EXPECT_NE(
      QueryJson(db, "SELECT retry_reasons FROM requests WHERE retry_reasons LIKE '%429%'").size(),
      0u);
  // Re-fitted: two too-long refusals, each followed by an answered re-fit.
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM requests WHERE outcome = 'prompt too long' AND "
                     "too_long_prompt_tokens IN (200, 1500)"),
            2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM tasks t JOIN requests r ON r.id = t.request_id "
                     "WHERE r.outcome = 'prompt too long' AND t.status = 'failed'"),
            2);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM failures WHERE stage = 'request'"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM latest_answers"), 8);

  // Recorded: an empty choice list and malformed JSON fail their question (never a crash).
  const std::string dir2 = MakeJobDir("model_faults_2", "  concurrency: 1\n  retries: 1\n");
  const std::string db2 = dir2 + "/e2e.db";
  server.Reset();
  server.Script(R"([
    {"kind": "empty_choices", "match": "test patterns", "times": 1},
    {"kind": "malformed", "match": "A short line", "times": 1},
    {"kind": "status", "status": 500, "match": "image_url", "times": 2}
  ])");
  CommandResult faulty = ReelEnv(WithEndpoint(server), "run job.yaml", dir2);
  EXPECT_EQ(faulty.exit_code, 3) << faulty.err;  // the items are fine
  EXPECT_NE(faulty.err.find("questions failed"), std::string::npos) << faulty.err;
  json outcomes = QueryJson(db2,
                            "SELECT outcome, count(*) AS n FROM requests WHERE status = 'failed' "
                            "GROUP BY outcome ORDER BY outcome");
  EXPECT_EQ(outcomes.dump(), json::parse(R"([{"outcome": "empty choices", "n": 1},
      {"outcome": "malformed response", "n": 1}, {"outcome": "server error", "n": 1}])")
                                 .dump());
  EXPECT_EQ(QueryInt(db2, "SELECT count(*) FROM failures WHERE stage = 'request'"), 3);
  // A plain rerun does not ask failed questions again (it has nothing to do: 0); --retry-failed
  // does.
  const size_t before = server.ChatLog().size();
  EXPECT_EQ(ReelEnv(WithEndpoint(server), "run job.yaml", dir2).exit_code, 0);
  EXPECT_EQ(server.ChatLog().size(), before);
  CommandResult retried = ReelEnv(WithEndpoint(server), "run job.yaml --retry-failed", dir2);
  EXPECT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(QueryInt(db2, "SELECT count(*) FROM failures WHERE stage = 'request'"), 0);
  EXPECT_EQ(QueryInt(db2, "SELECT count(*) FROM latest_answers"), 8);
}

// No endpoint: prepared and waiting; with one, everything is asked; a changed prompt asks only
// that prompt again.
TEST(ModelRunChangesTest, WaitingThenAskedThenOnlyTheChangedPrompt) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = MakeJobDir("model_changes");
  const std::string db = dir + "/e2e.db";
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status = 'waiting'"), 10);
  ASSERT_EQ(ReelEnv(WithEndpoint(server), "run job.yaml", dir).exit_code, 0);
  EXPECT_EQ(server.ChatLog().size(), 12u);
  std::string job = ReadText(dir + "/job.yaml");
  const std::string old_question = "question: List the facts.";
  job.replace(job.find(old_question), old_question.size(), "question: List every fact.");
  WriteText(dir + "/job.yaml", job);
  server.Reset();
  CommandResult changed = ReelEnv(WithEndpoint(server), "run job.yaml", dir);
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  std::vector<json> chats = server.ChatLog();
  EXPECT_EQ(chats.size(), 6u);  // short, notes, still; the long video's 2 segments and reduce
  for (const json& c : chats) EXPECT_EQ(c.dump().find("Describe what"), std::string::npos);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM latest_answers WHERE prompt_id = 'facts'"), 4);
  // The old question's contexts are kept for the answers that name them, marked superseded:
  // short, notes, still, and the long video's 2 segments and reduce.
  const std::string superseded =
      "SELECT count(*) FROM contexts c WHERE c.superseded_at IS NOT NULL AND c.prompt_id = "
      "'facts' AND EXISTS (SELECT 1 FROM tasks t WHERE t.context_id = c.id AND t.status = "
      "'succeeded')";
  EXPECT_EQ(QueryInt(db, superseded), 6);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts WHERE superseded_at IS NOT NULL"), 6);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts WHERE superseded_at IS NULL"), 12);
  // Back to the old question: nothing is asked, its contexts are current again.
  job.replace(job.find("question: List every fact."), 26, old_question);
  WriteText(dir + "/job.yaml", job);
  server.Reset();
  CommandResult back = ReelEnv(WithEndpoint(server), "run job.yaml", dir);
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(server.ChatLog().size(), 0u);
  EXPECT_EQ(QueryInt(db, superseded), 6);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts WHERE superseded_at IS NOT NULL"), 6);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts"), 18);
}

// The API key is sent in the Authorization header and written nowhere: not in the database, the
// log, an export, or an error message (the fake echoes it in a 401 once).
TEST(ModelKeyTest, TheKeyIsNeverWritten) {
  const std::string key = "sk-test-4f1d2a7c9e0b";
  FakeModelServer server({.api_key = key});
  ASSERT_TRUE(server.started());
  const std::string dir = MakeJobDir("model_key", "  api_key_env: REEL_TEST_KEY\n  retries: 0\n");
  server.Script(R"([{"kind": "echo_key", "match": "test patterns", "times": 1}])");
  CommandResult run =
      ReelEnv("REEL_TEST_KEY=" + key + " " + WithEndpoint(server), "run job.yaml -v", dir);
  EXPECT_EQ(run.exit_code, 3) << run.err;  // the echoed 401 stops the model stage
  EXPECT_EQ(QueryInt(dir + "/e2e.db",
                     "SELECT count(*) FROM requests WHERE outcome = 'rejected' "
                     "AND error LIKE '%[redacted]%'"),
            1);
  for (const json& c : server.ChatLog()) EXPECT_TRUE(c["auth_problems"].empty());
  ASSERT_EQ(
      Reel("export --db e2e.db --format openai-batch out.jsonl --retry-failed", dir).exit_code, 0);
  EXPECT_EQ(run.err.find(key), std::string::npos);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    EXPECT_EQ(ReadText(entry.path().string()).find(key), std::string::npos) << entry.path();
  }
}

// reel ask: the answer streams to stdout and is recorded in the default database.
TEST(AskTest, StreamsTheAnswerAndRecordsIt) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = MakeJobDir("model_ask");
  const std::string env = "XDG_DATA_HOME=" + ShellQuote(dir + "/data") + " REEL_DB= ";
  CommandResult ask =
      ReelEnv(env, "ask media/short.mp4 'What is shown?' --endpoint " + server.endpoint(), dir);
  ASSERT_EQ(ask.exit_code, 0) << ask.err;
  EXPECT_EQ(ask.out, "Answer to: What is shown?\n");
  const std::string db = dir + "/data/reel/reel.db";
  ASSERT_TRUE(fs::exists(db));
  std::vector<json> chats = server.ChatLog();
  ASSERT_EQ(chats.size(), 1u);
  EXPECT_EQ(chats[0]["body"]["stream"], true);
  EXPECT_EQ(QueryJson(db, "SELECT content FROM latest_answers")[0]["content"],
            "Answer to: What is shown?");
  // Reporting commands read it when named (--ask-db), and show the question as asked.
  CommandResult results = ReelEnv(env, "results --ask-db", dir);
  EXPECT_EQ(results.exit_code, 0) << results.err;
  EXPECT_NE(results.out.find("What is shown?"), std::string::npos) << results.out;
  // A video and an image: one question over both, one answer (no headers); REEL_MODEL_URL
  // instead of --endpoint; a JSON schema.
  WriteText(dir + "/schema.json", R"({"type": "object", "properties": {"n": {"type": "integer"}},
                                       "required": ["n"]})");
  CommandResult two = ReelEnv(env + "REEL_MODEL_URL=" + server.endpoint(),
                              "ask media/short.mp4 media/still.png 'How many?' --json-schema "
                              "schema.json",
                              dir);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(two.out.find("== "), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("{\"n\": 1}"), std::string::npos) << two.out;
  ASSERT_EQ(server.ChatLog().size(), 2u);
  const std::string both = server.ChatLog()[1]["body"].dump();
  EXPECT_NE(both.find("Video 1: short.mp4"), std::string::npos) << both;
  EXPECT_NE(both.find("Image 1: still.png"), std::string::npos) << both;
  // Without a server: a clear message.
  CommandResult none = ReelEnv(env + "REEL_MODEL_URL=", "ask media/notes.md 'Why?'", dir);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("REEL_MODEL_URL"), std::string::npos);
}

// A folder for `reel ask`: media/notes.md (a document) and media/still.png; the database goes to
// data/reel/reel.db (XDG_DATA_HOME).
struct AskDir {
  explicit AskDir(const std::string& name) : dir(ScratchDir(name)) {
    fs::create_directories(dir + "/media");
    fs::copy_file(Still(), dir + "/media/still.png");
    WriteText(dir + "/media/notes.md", "# Notes\n\nThe clips are test patterns.\n");
  }
  CommandResult Ask(const std::string& args, const std::string& more_env = "") const {
    return ReelEnv(
        "XDG_DATA_HOME=" + ShellQuote(dir + "/data") + " REEL_DB= REEL_MODEL_URL= " + more_env,
        args, dir);
  }
  std::string db() const { return dir + "/data/reel/reel.db"; }
  std::string dir;
};

// An unreachable server: the message says the URL tried, the cause and what to do (it said
// "nothing could be asked (see reel status)"); `reel status` shows the whole message and does
// not suggest `reel export` for a server that was set.
TEST(AskTest, AnUnreachableServerIsNamedWithTheCause) {
  int port = 0;
  {
    FakeModelServer gone;
    port = gone.port();
  }
  const AskDir d("ask_unreachable");
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  CommandResult ask = d.Ask("ask media/notes.md 'Why?' --endpoint " + url);
  EXPECT_EQ(ask.exit_code, 1) << ask.err;
  EXPECT_NE(ask.err.find("cannot reach the model server at " + url + "/models"), std::string::npos)
      << ask.err;
  EXPECT_NE(ask.err.find("connection failed: Failed to connect"), std::string::npos) << ask.err;
  EXPECT_NE(ask.err.find("nothing listens at 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << ask.err;
  EXPECT_EQ(ask.err.find("nothing could be asked"), std::string::npos) << ask.err;
  CommandResult status = d.Ask("status --ask-db");
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("nothing listens at 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("could not reach the model server"), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find("reel export"), std::string::npos) << status.out;

  // A URL of the chat route: the hint, before anything is done.
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  CommandResult route =
      d.Ask("ask media/notes.md 'Why?' --endpoint " + server.endpoint() + "/chat/completions");
  EXPECT_EQ(route.exit_code, 2) << route.err;
  EXPECT_NE(
      route.err.find("drop /chat/completions: the endpoint is the API base, " + server.endpoint()),
      std::string::npos)
      << route.err;
  EXPECT_TRUE(server.ChatLog().empty());
  // A redirect names where it points.
  FakeModelServer redirecting(FakeServerOptions{
      "vllm", "MiniMax-M3", 1048576, "", {"--redirect-to", "https://gpu.example:8443"}});
  CommandResult moved = d.Ask("ask media/notes.md 'Why?' --endpoint " + redirecting.endpoint());
  EXPECT_EQ(moved.exit_code, 1) << moved.err;
  EXPECT_NE(moved.err.find("HTTP 302 Found: redirected to https://gpu.example:8443/v1/models"),
            std::string::npos)
      << moved.err;
  EXPECT_NE(moved.err.find("set the endpoint to https://gpu.example:8443/v1"), std::string::npos)
      << moved.err;
}

// Asking the same again: a failed question is asked again (it replayed the failure); an answered
// one is replayed without a request, unless --again, which asks it anew and keeps both answers;
// a later plain ask replays the newest.
TEST(AskTest, AFailedQuestionIsAskedAgainAndAgainAsksAnew) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const AskDir d("ask_again");
  const std::string ask = "ask media/notes.md 'What is it?' --endpoint " + server.endpoint();
  server.Script(
      R"([{"kind": "status", "status": 400, "body": {"error": {"message": "bad luck"}}}])");
  CommandResult failed = d.Ask(ask);
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_NE(failed.err.find("bad luck"), std::string::npos) << failed.err;
  ASSERT_EQ(server.ChatLog().size(), 1u);

  CommandResult second = d.Ask(ask);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, "Answer to: What is it?\n");
  EXPECT_EQ(server.ChatLog().size(), 2u);

  CommandResult replay = d.Ask(ask);
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(replay.out, "Answer to: What is it?\n");
  EXPECT_NE(replay.err.find("answered before"), std::string::npos) << replay.err;
  EXPECT_EQ(server.ChatLog().size(), 2u);

  server.Script(R"([{"kind": "content", "content": "A second look."}])");
  CommandResult again = d.Ask(ask + " --again");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "A second look.\n");
  EXPECT_EQ(server.ChatLog().size(), 3u);
  EXPECT_EQ(QueryInt(d.db(), "SELECT count(*) FROM answers"), 2);
  EXPECT_EQ(QueryJson(d.db(), "SELECT content FROM latest_answers")[0]["content"],
            "A second look.");

  CommandResult newest = d.Ask(ask);
  EXPECT_EQ(newest.exit_code, 0) << newest.err;
  EXPECT_EQ(newest.out, "A second look.\n");
  EXPECT_EQ(server.ChatLog().size(), 3u);
}

// A server that ignores `stream` answers a streamed ask with one JSON document: it is the answer
// (it was a "connection error", asked three times).
TEST(AskTest, AJsonAnswerToTheStreamedAskIsPrinted) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const AskDir d("ask_json_to_stream");
  server.Script(R"([{"kind": "ignore_stream"}])");
  CommandResult ask = d.Ask("ask media/notes.md 'What is it?' --endpoint " + server.endpoint());
  EXPECT_EQ(ask.exit_code, 0) << ask.err;
  EXPECT_EQ(ask.out, "Answer to: What is it?\n");
  ASSERT_EQ(server.ChatLog().size(), 1u);
  EXPECT_EQ(server.ChatLog()[0]["body"]["stream"], true);
}

// Answers about several files: one streams slowly while the other is stored whole; the second
// waits for the first to end instead of being printed into its line.
TEST(AskTest, AnswersOfSeveralFilesNeverShareALine) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const AskDir d("ask_two_files");
  // No reasoning: the notes' answer text streams from the start (0.4 s a piece, 4 pieces) while
  // the image's, 1 s late, arrives whole.
  fs::copy_file(Clip(3), d.dir + "/media/clip.mp4");
  server.Script(R"([{"kind": "slow_stream", "chunk_delay": 0.4, "match": "Frame at 2.0 s"},
                    {"kind": "slow", "seconds": 1.0, "match": "image_url"}])");
  // (A folder's files are asked about one by one; files named one by one are one question.)
  CommandResult ask =
      d.Ask("ask media 'What is it?' --thinking disabled --endpoint " + server.endpoint());
  EXPECT_EQ(ask.exit_code, 0) << ask.err;
  for (const char* file : {"clip.mp4", "still.png"}) {
    EXPECT_NE(ask.out.find("== " + d.dir + "/media/" + file + " ==\nAnswer to: What is it?\n"),
              std::string::npos)
        << ask.out;
  }
  // Every header starts its own line.
  for (size_t at = ask.out.find("== /"); at != std::string::npos;
       at = ask.out.find("== /", at + 1)) {
    EXPECT_TRUE(at == 0 || ask.out[at - 1] == '\n') << ask.out;
  }
}

// One question over a video and notes: one request whose context holds the video's frames and
// the notes (it asked about each file alone: two answers, the video's without the notes); the
// question is stored as asked and shown by results, show and the report; --system is sent.
TEST(AskTest, OneQuestionOverAVideoAndNotesInOneContext) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const AskDir d("ask_video_and_notes");
  fs::copy_file(Clip(3), d.dir + "/media/talk.mp4");
  CommandResult ask = d.Ask(
      "ask media/talk.mp4 media/notes.md 'Which slide is on screen?' --system 'Be brief.' "
      "--endpoint " +
      server.endpoint());
  ASSERT_EQ(ask.exit_code, 0) << ask.err;
  EXPECT_EQ(ask.out, "Answer to: Which slide is on screen?\n");
  std::vector<json> chats = server.ChatLog();
  ASSERT_EQ(chats.size(), 1u);
  const std::string body = chats[0]["body"].dump();
  EXPECT_NE(body.find("The clips are test patterns."), std::string::npos) << body;
  EXPECT_NE(body.find("attached:notes.md"), std::string::npos) << body;
  EXPECT_NE(body.find("image_url"), std::string::npos) << body;
  EXPECT_NE(body.find("Be brief."), std::string::npos) << body;
  EXPECT_EQ(QueryInt(d.db(), "SELECT count(*) FROM items"), 1);
  EXPECT_EQ(QueryJson(d.db(), "SELECT question FROM latest_answers")[0]["question"],
            "Which slide is on screen?");
  // An edited note is a new context: asked again.
  WriteText(d.dir + "/media/notes.md", "# Notes\n\nSlide 3 is about seals.\n");
  CommandResult edited = d.Ask(
      "ask media/talk.mp4 media/notes.md 'Which slide is on screen?' "
      "--system 'Be brief.' --endpoint " +
      server.endpoint());
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  ASSERT_EQ(server.ChatLog().size(), 2u);
  EXPECT_NE(server.ChatLog()[1]["body"].dump().find("Slide 3 is about seals."), std::string::npos);
  // Two text files, no video: the first is the item, the second beside it.
  WriteText(d.dir + "/media/more.txt", "More text here.\n");
  CommandResult texts =
      d.Ask("ask media/notes.md media/more.txt 'Summarise' --endpoint " + server.endpoint());
  ASSERT_EQ(texts.exit_code, 0) << texts.err;
  EXPECT_EQ(texts.out, "Answer to: Summarise\n");
  ASSERT_EQ(server.ChatLog().size(), 3u);
  EXPECT_NE(server.ChatLog()[2]["body"].dump().find("More text here."), std::string::npos);
  // The question is shown by results.
  CommandResult results = d.Ask("results --ask-db --format json");
  ASSERT_EQ(results.exit_code, 0) << results.err;
  json rows = json::parse(results.out);
  std::set<std::string> questions;
  for (const json& r : rows) questions.insert(r["question"].get<std::string>());
  EXPECT_EQ(questions, (std::set<std::string>{"Which slide is on screen?", "Summarise"}));
}

// A job priced by GPU time: `reel run` printed its cost, while requests.cost, the report's index,
// batch.html and `reel report --batch` showed nothing. The run's cost is shared out over its
// requests: sum(requests.cost) is the figure everywhere.
TEST(ModelCostTest, GpuTimeCostIsStoredAndShownEverywhereAndProgressCountsQuestions) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir =
      MakeJobDir("model_cost", "  concurrency: 3\n  price: {gpu_hour: 3600, gpus: 2}\n");
  CommandResult run = ReelEnv(WithEndpoint(server), "run job.yaml --log-format json", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Progress counts questions too (it counted items only): answered, waiting, in flight, and
  // output tokens per second.
  std::istringstream lines(run.err);
  std::string line;
  int64_t max_answered = 0, max_in_flight = 0;
  json last_questions;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '{') continue;
    json event = json::parse(line);
    if (event["event"] != "questions") continue;
    max_answered = std::max(max_answered, event["answered"].get<int64_t>());
    max_in_flight = std::max(max_in_flight, event["in_flight"].get<int64_t>());
    EXPECT_GE(event["waiting"].get<int64_t>(), 0);
    last_questions = event;
  }
  EXPECT_EQ(max_answered, 8) << run.err;  // 4 items x 2 prompts
  EXPECT_GE(max_in_flight, 1) << run.err;
  ASSERT_FALSE(last_questions.is_null()) << run.err;
  EXPECT_GT(last_questions["output_tokens"].get<int64_t>(), 0) << run.err;
  EXPECT_GT(last_questions["tokens_per_second"].get<double>(), 0) << run.err;
  const std::string db = dir + "/e2e.db";
  json sum = QueryJson(db,
                       "SELECT sum(cost) AS c, count(*) FILTER (WHERE cost IS NULL) AS n "
                       "FROM requests");
  ASSERT_TRUE(sum[0]["c"].is_number()) << sum.dump();
  EXPECT_EQ(sum[0]["n"], 0) << sum.dump();
  CommandResult status = Reel("status --db e2e.db --format json", dir);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const double gpu = json::parse(status.out)["model_report"]["cost_gpu"].get<double>();
  EXPECT_GT(gpu, 0);
  EXPECT_NEAR(sum[0]["c"].get<double>(), gpu, 1e-9 * std::max(1.0, gpu));
  char figure[32];
  std::snprintf(figure, sizeof(figure), "%.4f", gpu);
  CommandResult batch = Reel("report --db e2e.db --batch", dir);
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_NE(batch.out.find(std::string("cost      ") + figure), std::string::npos) << batch.out;
  ASSERT_EQ(Reel("report --db e2e.db -o site", dir).exit_code, 0);
  EXPECT_NE(ReadText(dir + "/site/batch.html").find(figure), std::string::npos);
}

// reel show ITEM: every answer in full (results cut them at 60 characters), oldest first, each
// with its question; a time in an answer is followed by the frame it points at.
TEST(AskTest, ShowPrintsEveryAnswerWithItsQuestionAndFrame) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const AskDir d("ask_show");
  fs::copy_file(Clip(3), d.dir + "/media/talk.mp4");
  const std::string long_question =
      "What happens at 00:02, described at a length that no table cell would ever show whole?";
  ASSERT_EQ(
      d.Ask("ask media/talk.mp4 " + ShellQuote(long_question) + " --endpoint " + server.endpoint())
          .exit_code,
      0);
  ASSERT_EQ(d.Ask("ask media/talk.mp4 'And then?' --endpoint " + server.endpoint()).exit_code, 0);
  CommandResult show = d.Ask("show --ask-db talk.mp4");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const size_t first = show.out.find("Question: " + long_question);
  const size_t second = show.out.find("Question: And then?");
  EXPECT_NE(first, std::string::npos) << show.out;
  EXPECT_NE(second, std::string::npos) << show.out;
  EXPECT_LT(first, second) << "oldest first\n" << show.out;
  // (The fake server's answer ends after a few dozen words.)
  EXPECT_NE(show.out.find("Answer to: What happens at 00:02 [frame 2, 00:02], described at a "
                          "length that no table cell would ever show"),
            std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("2 answers"), std::string::npos) << show.out;
  CommandResult md = d.Ask("show --ask-db talk.mp4 --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("**Question:** And then?"), std::string::npos) << md.out;
  CommandResult none = d.Ask("show --ask-db nosuch.mp4");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no item nosuch.mp4"), std::string::npos) << none.err;
}

// A refused lock names the command once ("reel import: reel import: ...").
TEST(AskTest, ALockRefusalNamesTheCommandOnce) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const AskDir d("ask_lock");
  ASSERT_EQ(d.Ask("ask media/notes.md 'What is it?' --endpoint " + server.endpoint()).exit_code, 0);
  WriteText(d.db() + ".lock", "4242 somehost 2024-05-01T12:00:00Z\n");
  int fd = open((d.db() + ".lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  WriteText(d.dir + "/results.jsonl", "");
  CommandResult import = Reel("import results.jsonl --db " + ShellQuote(d.db()), d.dir);
  CommandResult exported =
      Reel("export out.jsonl --format openai-batch --db " + ShellQuote(d.db()), d.dir);
  close(fd);
  EXPECT_EQ(import.exit_code, 4) << import.err;
  EXPECT_EQ(import.err, "reel import: a run holds " + d.db() +
                            " (pid 4242 on somehost since 2024-05-01T12:00:00Z); try again when "
                            "it has finished\n");
  EXPECT_EQ(exported.exit_code, 4) << exported.err;
  EXPECT_EQ(exported.err.find("reel export: reel export"), std::string::npos) << exported.err;
}

// The chapters prompt kind: an answer that fails its check (overlapping chapters) is asked again
// once in the same conversation; the checked chapters are stored as JSON, snapped to frames.
TEST(ChaptersTest, AFailedCheckIsAskedAgainInTheSameConversation) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = MakeJobDir("model_chapters");
  const json bad = {{"chapters",
                     {{{"start", "00:00"}, {"end", "00:02"}, {"title", "A"}, {"summary", ""}},
                      {{"start", "00:01"}, {"end", "00:03"}, {"title", "B"}, {"summary", ""}}}}};
  const json good = {{"chapters",
                      {{{"start", "00:00"}, {"end", "00:01"}, {"title", "A"}, {"summary", "a"}},
                       {{"start", "00:01"}, {"end", "00:03"}, {"title", "B"}, {"summary", "b"}}}}};
  server.Script(json::array({{{"kind", "content"}, {"content", bad.dump()}},
                             {{"kind", "content"}, {"content", good.dump()}}})
                    .dump());
  const std::string env = "XDG_DATA_HOME=" + ShellQuote(dir + "/data") + " REEL_DB= ";
  CommandResult ask =
      ReelEnv(env, "ask --chapters media/short.mp4 --endpoint " + server.endpoint(), dir);
  ASSERT_EQ(ask.exit_code, 0) << ask.err;
  EXPECT_NE(ask.err.find("[asking again: "), std::string::npos) << ask.err;
  const std::string db = dir + "/data/reel/reel.db";
  json rows = QueryJson(db,
                        "SELECT r.attempts, r.retry_reasons, a.json_answer FROM latest_answers a "
                        "JOIN requests r ON r.id = (SELECT request_id FROM responses WHERE id = "
                        "a.response_id) WHERE a.prompt_id = 'chapters'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["attempts"], 2);
  EXPECT_NE(rows[0]["retry_reasons"].get<std::string>().find("overlaps"), std::string::npos);
  json chapters = json::parse(rows[0]["json_answer"].get<std::string>());
  ASSERT_EQ(chapters.size(), 2u);
  EXPECT_EQ(chapters[1]["title"], "B");
  EXPECT_EQ(chapters[1]["start_frame"], 1);  // the frame at 1 s
  std::vector<json> chats = server.ChatLog();
  ASSERT_EQ(chats.size(), 2u);
  const json& messages = chats[1]["body"]["messages"];
  EXPECT_EQ(messages[messages.size() - 2]["role"], "assistant");
  EXPECT_EQ(messages[messages.size() - 2]["content"], bad.dump());
  EXPECT_EQ(messages.back()["role"], "user");
  EXPECT_NE(messages.back()["content"].get<std::string>().find("overlaps"), std::string::npos);
  EXPECT_EQ(chats[0]["body"]["response_format"]["json_schema"]["name"], "chapters");

  // A document has no timeline: nothing is asked, and the message says why.
  CommandResult document =
      ReelEnv(env, "ask --chapters media/notes.md --endpoint " + server.endpoint(), dir);
  EXPECT_EQ(document.exit_code, 1);
  EXPECT_NE(
      document.err.find("chapters are asked only about videos, audio files and subtitle files"),
      std::string::npos)
      << document.err;
  EXPECT_EQ(server.ChatLog().size(), 2u);
}

// The frames a run sends are cached beside the database it writes: with --db, beside that one
// (not beside the job file's storage.database); `reel context --db` reads the same cache.
TEST(FrameCacheTest, BesideTheDatabaseGivenWithDb) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = MakeJobDir("model_frame_cache");
  fs::create_directories(dir + "/other");
  CommandResult run = ReelEnv(WithEndpoint(server), "run job.yaml --db other/run.db", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(server.ChatLog().size(), 12u);
  size_t cached = 0;
  if (fs::is_directory(dir + "/other/run.db.frames")) {
    for (const auto& entry : fs::recursive_directory_iterator(dir + "/other/run.db.frames")) {
      cached += entry.is_regular_file() ? 1 : 0;
    }
  }
  // short.mp4: 4 frames (0, 1, 2 s and the last), long.mp4: 13, still.png: 1.
  EXPECT_EQ(cached, 18u);
  EXPECT_FALSE(fs::exists(dir + "/e2e.db.frames")) << "the job's own database was not used";
  CommandResult request =
      Reel("context job.yaml short.mp4 --prompt describe --request r.json --db other/run.db", dir);
  ASSERT_EQ(request.exit_code, 0) << request.err;
  EXPECT_NE(request.err.find("4 from the cache, 0 decoded"), std::string::npos) << request.err;
  EXPECT_FALSE(fs::exists(dir + "/e2e.db.frames"));
}

// Each context is built once per run and each file's request frames are decoded in one pass: the
// model stage sends the contexts the context stage built in the same run (it builds only what
// that stage did not: the reduces, or contexts stored by an earlier run), and frames come from
// the cache after the first pass. The run report counts both.
TEST(ModelContextTest, EachContextIsBuiltOnceAndEachFileDecodedOnce) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = MakeJobDir("model_context_once");
  const std::string db = dir + "/e2e.db";
  auto last_report = [&db] {
    return json::parse(
        QueryJson(db, "SELECT report_json FROM runs ORDER BY id DESC LIMIT 1")[0]["report_json"]
            .get<std::string>());
  };
  CommandResult run = ReelEnv(WithEndpoint(server), "run job.yaml", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectCompleteRows(db, "vllm");
  json report = last_report();
  // 4 items x 2 prompts built by the context stage and sent as built; the 2 reduces of the long
  // video are built by the model stage (only it has the segments' answers).
  EXPECT_EQ(report["contexts"]["reused"], 8) << report.dump();
  EXPECT_EQ(report["contexts"]["built"], 2) << report.dump();
  // short.mp4, long.mp4 and still.png: one pass each, 4 + 13 + 1 frames.
  EXPECT_EQ(report["frames"]["passes"], 3) << report.dump();
  EXPECT_EQ(report["frames"]["decoded"], 18) << report.dump();
  EXPECT_NE(run.err.find("requests prepared: 2 contexts built, 8 as the context stage built "
                         "them; 18 frames decoded in 3 passes"),
            std::string::npos)
      << run.err;

  // A changed question: its 4 contexts are built again (once), the frames come from the cache.
  std::string text = ReadText(dir + "/job.yaml");
  const std::string old_question = "question: List the facts.";
  text.replace(text.find(old_question), old_question.size(), "question: List every fact.");
  WriteText(dir + "/job.yaml", text);
  CommandResult changed = ReelEnv(WithEndpoint(server), "run job.yaml", dir);
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  report = last_report();
  EXPECT_EQ(report["contexts"]["reused"], 4) << report.dump();
  EXPECT_EQ(report["contexts"]["built"], 1) << report.dump();
  EXPECT_EQ(report["frames"]["passes"], 0) << report.dump();
  EXPECT_EQ(report["frames"]["decoded"], 0) << report.dump();

  // Contexts stored by a run without an endpoint are built once by the run that sends them.
  const std::string dir2 = MakeJobDir("model_context_later");
  const std::string db2 = dir2 + "/e2e.db";
  ASSERT_EQ(Reel("run job.yaml", dir2).exit_code, 0);
  server.Reset();
  ASSERT_EQ(ReelEnv(WithEndpoint(server), "run job.yaml", dir2).exit_code, 0);
  report = json::parse(
      QueryJson(db2, "SELECT report_json FROM runs ORDER BY id DESC LIMIT 1")[0]["report_json"]
          .get<std::string>());
  EXPECT_EQ(report["contexts"]["reused"], 0) << report.dump();
  EXPECT_EQ(report["contexts"]["built"], 10) << report.dump();
  EXPECT_EQ(report["frames"]["passes"], 3) << report.dump();
  EXPECT_EQ(report["frames"]["decoded"], 18) << report.dump();
}

}  // namespace
}  // namespace reel::testing
