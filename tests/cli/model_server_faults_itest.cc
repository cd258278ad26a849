// What a misbehaving model server leaves behind (`reel run` against the fake OpenAI-compatible
// server): questions the server failed (it went down and the circuit gave up; a read timed out)
// wait and the next plain run asks them; a key refused on chat stops the model stage at once
// with one message, the questions waiting; an answer that does not match its JSON schema is kept,
// marked as failing its check.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_test_util.h"
#include "tests/support/fake_model_server.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// `documents` notes and the prompts "describe" and (with `facts`) "facts" with a JSON schema;
// `model_extra` goes into the model section.
std::string MakeNotesJob(const std::string& name, int documents, bool facts,
                         const std::string& model_extra) {
  const std::string dir = ScratchDir(name);
  fs::remove_all(dir);
  for (int i = 0; i < documents; ++i) {
    WriteText(dir + "/notes/note" + std::to_string(i) + ".md",
              "# Note " + std::to_string(i) + "\n\nThe clips are test patterns, number " +
                  std::to_string(i) + ".\n");
  }
  std::string job =
      "name: faults\n"
      "inputs:\n"
      "  - notes/*.md\n"
      "context:\n"
      "  token_budget: 1400\n"
      "model:\n"
      "  endpoint: ${EP:-}\n"
      "  max_output_tokens: 64\n" +
      model_extra +
      "prompts:\n"
      "  - id: describe\n"
      "    question: Describe what happens.\n";
  if (facts) {
    job +=
        "  - id: facts\n"
        "    question: List the facts.\n"
        "    json_schema: {type: object, properties: {facts: {type: array, items: {type: "
        "string}}}, required: [facts]}\n";
  }
  WriteText(dir + "/job.yaml", job);
  return dir;
}

CommandResult RunWith(const FakeModelServer& server, const std::string& dir,
                      const std::string& flags = "") {
  return RunCommand("cd " + ShellQuote(dir) + " && EP=" + ShellQuote(server.endpoint()) + " " +
                    ShellQuote(ReelPath()) + " run job.yaml " + flags);
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The server dies mid-run and stays down past circuit_give_up: the stage stops, nothing is
// failed, and the next plain run (cron) asks every question; a read that timed out is the
// server's fault too.
TEST(ModelServerFaultTest, QuestionsTheServerFailedAreAskedByTheNextPlainRun) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = MakeNotesJob("server_faults_down", 4, true,
                                       "  concurrency: 2\n  retries: 1\n  circuit_give_up: 1\n");
  const std::string db = dir + "/faults.db";
  // The first question's answer comes; then the server goes down (every connection reset).
  server.Script(R"([{"kind": "ok", "times": 1}, {"kind": "down", "seconds": 600, "reset": true}])");
  CommandResult down = RunWith(server, dir);
  EXPECT_EQ(down.exit_code, 3) << down.err;  // the items are fine, the questions wait
  EXPECT_NE(down.err.find("the model stage stopped: the model server at " + server.endpoint() +
                          " stayed unreachable"),
            std::string::npos)
      << down.err;
  // It was set: say the server failed, never how to set it.
  EXPECT_EQ(down.err.find("set model.endpoint"), std::string::npos) << down.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status = 'failed'"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status = 'waiting'"), 7);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM failures"), 0);
  EXPECT_GT(QueryInt(db,
                     "SELECT count(*) FROM requests WHERE outcome IN ('server down', "
                     "'connection error')"),
            0);
  CommandResult status = Reel("status --db " + ShellQuote(db));
  EXPECT_NE(status.out.find("1 answered, 0 failed, 7 waiting"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("could not reach the model server"), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find("run the job with model.endpoint"), std::string::npos) << status.out;

  // The server is back: the next plain run asks the 7 questions and succeeds.
  server.Reset();
  CommandResult cron = RunWith(server, dir);
  EXPECT_EQ(cron.exit_code, 0) << cron.err;
  EXPECT_EQ(server.ChatLog().size(), 7u);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM latest_answers"), 8);

  // A read that times out (the server stalls on one question): that question waits.
  const std::string dir2 =
      MakeNotesJob("server_faults_timeout", 2, false, "  retries: 0\n  read_timeout: 1\n");
  const std::string db2 = dir2 + "/faults.db";
  server.Reset();
  server.Script(R"([{"kind": "stall", "seconds": 3, "match": "number 1", "times": 1}])");
  CommandResult stalled = RunWith(server, dir2);
  EXPECT_EQ(stalled.exit_code, 3) << stalled.err;
  EXPECT_NE(stalled.err.find("1 question the model server failed"), std::string::npos)
      << stalled.err;
  EXPECT_EQ(QueryInt(db2,
                     "SELECT count(*) FROM tasks t JOIN requests r ON r.id = t.request_id WHERE "
                     "t.status = 'waiting' AND r.outcome = 'timeout'"),
            1);
  server.Reset();
  CommandResult again = RunWith(server, dir2);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.ChatLog().size(), 1u);
  EXPECT_EQ(QueryInt(db2, "SELECT count(*) FROM latest_answers"), 2);
}

// GET /v1/models accepts the key, every chat request is refused with 401: the stage stops after
// the requests already out (one at a time here), one message says why, and the questions wait.
TEST(ModelServerFaultTest, AKeyRefusedOnChatStopsTheStageAndTheQuestionsWait) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = MakeNotesJob("server_faults_401", 6, false, "  concurrency: 1\n");
  const std::string db = dir + "/faults.db";
  server.Script(R"([{"kind": "status", "status": 401, "times": 1000,
                     "body": {"error": {"message": "Incorrect API key provided.",
                                        "type": "invalid_request_error", "code": 401}}}])");
  CommandResult refused = RunWith(server, dir);
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  EXPECT_EQ(server.ChatLog().size(), 1u) << "sent after the key was refused";
  EXPECT_EQ(Occurrences(refused.err, "refused the API key"), 1u) << refused.err;
  EXPECT_NE(refused.err.find("HTTP 401"), std::string::npos) << refused.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items WHERE status = 'done'"), 6);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status = 'waiting'"), 6);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status = 'failed'"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM requests"), 1);

  // With the key accepted again, the next plain run asks all six.
  server.Reset();
  CommandResult fixed = RunWith(server, dir);
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(server.ChatLog().size(), 6u);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM latest_answers"), 6);
}

// An answer that is not JSON for a prompt with a JSON schema: the question fails (schema
// mismatch), the answer's content is kept in `responses`, marked with why, and is never the
// item's answer; --retry-failed asks again and the good answer becomes the item's.
TEST(ModelServerFaultTest, AnAnswerThatDoesNotMatchItsSchemaIsKeptMarked) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = MakeNotesJob("server_faults_schema", 1, true, "");
  const std::string db = dir + "/faults.db";
  const std::string kNotJson = "The facts are: the clips are test patterns.";
  server.Script(
      json::array(
          {{{"kind", "content"}, {"content", kNotJson}, {"match", "List the facts"}, {"times", 1}}})
          .dump());
  CommandResult run = RunWith(server, dir);
  EXPECT_EQ(run.exit_code, 3) << run.err;
  json kept =
      QueryJson(db,
                "SELECT p.content, p.check_error, p.json_answer, r.status, r.outcome, "
                "t.status AS task FROM responses p JOIN requests r ON r.id = "
                "p.request_id JOIN tasks t ON t.id = r.task_id WHERE r.prompt_id = 'facts'");
  ASSERT_EQ(kept.size(), 1u) << kept.dump();
  EXPECT_EQ(kept[0]["content"], kNotJson);
  EXPECT_NE(kept[0]["check_error"].get<std::string>().find("not JSON"), std::string::npos)
      << kept.dump();
  EXPECT_TRUE(kept[0]["json_answer"].is_null());
  EXPECT_EQ(kept[0]["status"], "failed");
  EXPECT_EQ(kept[0]["outcome"], "schema mismatch");
  EXPECT_EQ(kept[0]["task"], "failed");
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM latest_answers WHERE prompt_id = 'facts'"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM failures WHERE prompt_id = 'facts'"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT answers FROM item_summary"), 1);  // the describe answer
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM answers WHERE check_error IS NOT NULL"), 1);

  CommandResult retried = RunWith(server, dir, "--retry-failed");
  EXPECT_EQ(retried.exit_code, 0) << retried.err;
  json latest = QueryJson(db, "SELECT json_answer FROM latest_answers WHERE prompt_id = 'facts'");
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_TRUE(json::parse(latest[0]["json_answer"].get<std::string>())["facts"].is_array());
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM responses WHERE check_error IS NOT NULL"), 1);
}

// `reel search`'s frames column links each time the answer names once, however often it names it.
TEST(ModelServerFaultTest, SearchLinksARepeatedTimeOnce) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = MakeNotesJob("search_times_once", 1, false, "");
  server.Script(json::array({{{"kind", "content"},
                              // Short enough for the snippet (about 12 tokens) to show all.
                              {"content", "00:01 walrus, 00:01 walrus again, 00:02 walrus gone."},
                              {"times", 1}}})
                    .dump());
  ASSERT_EQ(RunWith(server, dir).exit_code, 0);
  CommandResult search = Reel("search --db faults.db walrus --answers --format json", dir);
  ASSERT_EQ(search.exit_code, 0) << search.err;
  json hits = json::parse(search.out);
  ASSERT_EQ(hits.size(), 1u) << search.out;
  ASSERT_TRUE(hits[0]["frames"].is_string()) << search.out;
  const std::string frames = hits[0]["frames"];
  EXPECT_EQ(Occurrences(frames, "00:01 ->"), 1u) << frames;
  EXPECT_EQ(Occurrences(frames, "00:02 ->"), 1u) << frames;
}

// Cron's view (`reel run` exit status): a run says what it did. A question that fails gives 3
// (the items are fine); the next runs, with nothing to do, exit 0, are recorded succeeded, cost
// nothing and do not repeat the old failure, which `reel status` lists. A server that cannot be
// reached fails only a run that has questions to ask, and the message names its URL.
TEST(ModelServerFaultTest, TheExitStatusSaysWhatThisRunDid) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir =
      MakeNotesJob("server_faults_cron", 1, true, "  price: {gpu_hour: 2, gpus: 1}\n");
  const std::string db = dir + "/faults.db";
  server.Script(json::array({{{"kind", "content"},
                              {"content", "no JSON here"},
                              {"match", "List the facts"},
                              {"times", 10}}})
                    .dump());
  CommandResult first = RunWith(server, dir, "-v");
  EXPECT_EQ(first.exit_code, 3) << first.err;
  EXPECT_NE(first.err.find("1 questions failed"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("prompt 'facts'"), std::string::npos) << first.err;

  // Nothing to do: 0, succeeded, no cost line, no word of the old failure.
  CommandResult nightly = RunWith(server, dir, "-v");
  EXPECT_EQ(nightly.exit_code, 0) << nightly.err;
  EXPECT_EQ(nightly.err.find("prompt 'facts'"), std::string::npos) << nightly.err;
  EXPECT_EQ(nightly.err.find("failed (`reel status`"), std::string::npos) << nightly.err;
  EXPECT_EQ(nightly.err.find("cost:"), std::string::npos) << nightly.err;
  json runs = QueryJson(db, "SELECT status, message FROM runs ORDER BY id");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["status"], "failed");
  EXPECT_EQ(runs[1]["status"], "succeeded") << runs.dump();
  EXPECT_TRUE(runs[1]["message"].is_null()) << runs.dump();
  CommandResult status = Reel("status --db " + ShellQuote(db));
  EXPECT_EQ(Occurrences(status.out, "prompt 'facts'") + Occurrences(status.out, "facts\n"), 1u)
      << status.out;
  EXPECT_NE(status.out.find("facts"), std::string::npos) << status.out;

  // The server is gone but nothing waits for it: still 0.
  const std::string gone = "http://127.0.0.1:9/v1";
  const std::string run_gone =
      "cd " + ShellQuote(dir) + " && EP=" + gone + " " + ShellQuote(ReelPath()) + " run job.yaml";
  CommandResult idle = RunCommand(run_gone);
  EXPECT_EQ(idle.exit_code, 0) << idle.err;
  // A new note has questions to ask: 3, naming the server that could not be reached.
  WriteText(dir + "/notes/note9.md", "# Note 9\n\nA new note.\n");
  CommandResult waiting = RunCommand(run_gone);
  EXPECT_EQ(waiting.exit_code, 3) << waiting.err;
  EXPECT_NE(waiting.err.find("the server at " + gone + " could not be reached"), std::string::npos)
      << waiting.err;
  EXPECT_EQ(waiting.err.find("set model.endpoint"), std::string::npos) << waiting.err;
}

}  // namespace
}  // namespace reel::testing
