// A model's answer that holds control characters (ESC sequences that set the window title,
// clear the screen and recolour, a NUL, an 8-bit CSI) never reaches a terminal raw (issue 18
// item 12): every command that prints stored text is run on a pseudo-terminal (isatty true) and
// through a pipe. To a terminal, and in the table format and `reel status`, the characters show
// as `\xHH`; to a pipe, `reel ask` writes the answer's bytes as they are (NUL included: it was
// cut there), and JSON and CSV keep them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "tests/cli/cli_test_util.h"
#include "tests/support/fake_model_server.h"

namespace reel::testing {
namespace {

using nlohmann::json;

// Sets the window title, clears the screen, turns text red, a NUL, then an 8-bit CSI (U+009B).
const std::string kAnswer = std::string("Hi \x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m") +
                            std::string(1, '\0') + "after \xc2\x9b" + "31m end";
// The same as the terminal shows it.
const std::string kShown =
    "Hi \\x1B]0;pwned\\x07\\x1B[2J\\x1B[31mred\\x1B[0m\\x00after \\xC2\\x9B31m end";

// Nothing in `out` a terminal would act on: no ESC, no NUL, no BEL, no C1 CSI.
void ExpectInert(const std::string& out) {
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\0'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << out;
}

class TerminalOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.started());
    dir_ = ScratchDir("terminal_output");
    WriteText(dir_ + "/notes.md", "# Notes\n\nThe clips are test patterns.\n");
    db_ = dir_ + "/ask.db";
    server_.Script(json::array({{{"kind", "content"},
                                 {"content", kAnswer},
                                 {"reasoning", "Thinking \x1b[8mhidden"},
                                 {"times", 100}}})
                       .dump());
  }

  // `reel ask` on the notes, through a pipe or on a terminal.
  std::string Ask(bool terminal, const std::string& flags) {
    const std::string command = "cd " + ShellQuote(dir_) + " && " + ShellQuote(ReelPath()) +
                                " ask notes.md 'What is this?' --endpoint " + server_.endpoint() +
                                " --db " + ShellQuote(db_) + " " + flags;
    CommandResult r = terminal ? RunInTerminal(command) : RunCommand(command + " | cat");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return r.out;
  }
  std::string ReelOut(bool terminal, const std::string& args) {
    const std::string command = ShellQuote(ReelPath()) + " " + args;
    CommandResult r = terminal ? RunInTerminal(command) : RunCommand(command + " | cat");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return r.out;
  }

  FakeModelServer server_;
  std::string dir_, db_;
};

TEST_F(TerminalOutputTest, AskWritesTheAnswerWholeToAPipeAndEscapedToATerminal) {
  // Through a pipe: the answer's bytes, the NUL and what follows it included.
  EXPECT_EQ(Ask(false, "--no-stream"), kAnswer + "\n");
  EXPECT_EQ(Ask(false, ""), kAnswer + "\n");
  // On a terminal, streamed or not (with the reasoning, on the same terminal): escaped.
  for (const std::string flags : {"--no-stream --reasoning", "--reasoning"}) {
    SCOPED_TRACE(flags);
    const std::string out = Ask(true, flags);
    ExpectInert(out);
    EXPECT_NE(out.find(kShown), std::string::npos) << out;
    EXPECT_NE(out.find("Thinking \\x1B[8mhidden"), std::string::npos) << out;
  }
  // Stored as the model sent it.
  EXPECT_EQ(QueryJson(db_, "SELECT content FROM latest_answers")[0]["content"], kAnswer);
}

TEST_F(TerminalOutputTest, ReportingCommandsEscapeInTablesAndKeepJsonAndCsv) {
  Ask(false, "--no-stream");
  const std::string db = " --db " + ShellQuote(db_);
  for (bool terminal : {true, false}) {
    SCOPED_TRACE(terminal ? "terminal" : "pipe");
    // The table format shows the characters escaped, on a terminal or not.
    for (const std::string& args :
         {"results" + db + " --width 0", "query" + db + " 'SELECT content FROM answers' --width 0",
          "search" + db + " pwned --width 0"}) {
      SCOPED_TRACE(args);
      const std::string out = ReelOut(terminal, args);
      ExpectInert(out);
      EXPECT_NE(out.find("\\x1B[31mred"), std::string::npos) << out;
    }
  }
  // JSON and CSV keep them.
  json rows = json::parse(ReelOut(false, "results" + db + " --format json"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["content"], kAnswer);
  rows =
      json::parse(ReelOut(false, "query" + db + " 'SELECT content FROM answers' --format jsonl"));
  EXPECT_EQ(rows["content"], kAnswer);
  EXPECT_NE(
      ReelOut(false, "query" + db + " 'SELECT content FROM answers' --format csv").find(kAnswer),
      std::string::npos);
}

TEST_F(TerminalOutputTest, StatusEscapesAStoredErrorMessage) {
  server_.Reset();
  // A server error whose message holds the same characters: the question fails with it.
  server_.Script(json::array({{{"kind", "status"},
                               {"status", 400},
                               {"body", {{"error", {{"message", kAnswer}, {"code", 400}}}}},
                               {"times", 100}}})
                     .dump());
  const std::string command = "cd " + ShellQuote(dir_) + " && " + ShellQuote(ReelPath()) +
                              " ask notes.md 'What is this?' --endpoint " + server_.endpoint() +
                              " --db " + ShellQuote(db_);
  CommandResult failed = RunInTerminal(command);
  EXPECT_EQ(failed.exit_code, 1) << failed.out;
  ExpectInert(failed.out);
  // The client stores a server's message with C0 controls as spaces; the 8-bit CSI (U+009B)
  // stays, and `reel status` shows it escaped.
  for (bool terminal : {true, false}) {
    SCOPED_TRACE(terminal ? "terminal" : "pipe");
    const std::string out = ReelOut(terminal, "status --db " + ShellQuote(db_));
    ExpectInert(out);
    EXPECT_NE(out.find("after \\xC2\\x9B31m end"), std::string::npos) << out;
  }
  // `reel status --format json` keeps the message as it is.
  const json status =
      json::parse(ReelOut(false, "status --db " + ShellQuote(db_) + " --format json"));
  EXPECT_NE(status["failures"][0]["error"].get<std::string>().find("after \xc2\x9b"
                                                                   "31m end"),
            std::string::npos)
      << status.dump();
}

}  // namespace
}  // namespace reel::testing
