// Chapters and answer time references on the database of the end-to-end model job
// (tests/support/model_job_db.h: `reel run` of a generated job against the fake OpenAI-compatible
// server): the chapter checks as the run applied them (good, overlapping, out of range, not JSON,
// malformed then good), read back from the tasks, requests and responses rows, the server's log,
// `reel results`, `reel status` and `reel report`; and every time the model wrote, linked to the
// nearest stored frame (the answer_time_frames view), table-driven.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <optional>

#include "tests/cli/cli_test_util.h"
#include "tests/support/model_job_db.h"

namespace reel::testing {
namespace {

using nlohmann::json;

#define REEL_MODEL_JOB_DB(m)                            \
  const ModelJobDb& m = SharedModelJobDb(ReelPath());   \
  ASSERT_EQ(m.error, "") << "the model job's database"; \
  ASSERT_EQ(m.run_exit_code, 3) << "3 questions fail"   \
                                << "\n"                 \
                                << m.run_err

std::string Sql(const std::string& s) { return "'" + s + "'"; }

// The id of the item whose path ends in `/name`.
int64_t ItemId(const ModelJobDb& m, const std::string& name) {
  return QueryInt(m.db, "SELECT id FROM items WHERE path LIKE " + Sql("%/" + name));
}

// The task of (item, prompt) and its requests, oldest first.
struct TaskRows {
  json task;
  std::vector<json> requests;  // with their response (NULL columns when none)
};

TaskRows Rows(const ModelJobDb& m, const std::string& item, const std::string& prompt) {
  TaskRows r;
  json tasks = QueryJson(m.db,
                         "SELECT t.id, t.custom_id, t.status, t.step FROM tasks t JOIN items i ON "
                         "i.id = t.item_id WHERE i.path LIKE " +
                             Sql("%/" + item) + " AND t.prompt_id = " + Sql(prompt));
  EXPECT_EQ(tasks.size(), 1u) << item << " " << prompt;
  if (tasks.size() != 1) return r;
  r.task = tasks[0];
  for (const json& row :
       QueryJson(m.db,
                 "SELECT r.id, r.status, r.outcome, r.attempts, r.error, r.retry_reasons, r.cost, "
                 "r.prompt_tokens AS request_prompt_tokens, r.cached_tokens AS "
                 "request_cached_tokens, r.completion_tokens AS request_completion_tokens, "
                 "p.content, p.prompt_tokens, p.cached_tokens, p.completion_tokens, "
                 "p.json_answer, p.check_error FROM requests r LEFT JOIN responses p ON "
                 "p.request_id = r.id "
                 "WHERE r.task_id = " +
                     std::to_string(r.task["id"].get<int64_t>()) + " ORDER BY r.id")) {
    r.requests.push_back(row);
  }
  return r;
}

// The chat requests the fake server received for one request row (its X-Request-Id is the
// task's custom id and the request's id): the first question and any follow-up.
std::vector<json> ChatsOf(const ModelJobDb& m, const TaskRows& rows, size_t request = 0) {
  std::vector<json> out;
  if (request >= rows.requests.size()) return out;
  const std::string id = rows.task["custom_id"].get<std::string>() + "-" +
                         std::to_string(rows.requests[request]["id"].get<int64_t>());
  for (const json& e : json::parse(m.server_log)) {
    if (e.value("path", "") != "/v1/chat/completions") continue;
    if (e["headers"].value("x-request-id", "") == id) out.push_back(e);
  }
  return out;
}

// Times of the item's frames by sample index.
std::vector<double> FrameTimes(const ModelJobDb& m, int64_t item) {
  std::vector<double> out;
  for (const json& f : QueryJson(m.db, "SELECT time_seconds FROM frames WHERE item_id = " +
                                           std::to_string(item) + " ORDER BY sample_index")) {
    out.push_back(f["time_seconds"].get<double>());
  }
  return out;
}

struct ExpectedChapter {
  double start, end;              // as the model wrote them (the end clamped to the item)
  double frame_start, frame_end;  // the nearest sampled frames' times
};

void ExpectChapters(const ModelJobDb& m, const std::string& item, const json& stored,
                    const std::vector<ExpectedChapter>& expected) {
  SCOPED_TRACE(item + ": " + stored.dump());
  const std::vector<double> frames = FrameTimes(m, ItemId(m, item));
  ASSERT_EQ(stored.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const json& c = stored[i];
    EXPECT_DOUBLE_EQ(c["start_seconds"].get<double>(), expected[i].start) << i;
    EXPECT_DOUBLE_EQ(c["end_seconds"].get<double>(), expected[i].end) << i;
    const size_t start_frame = c["start_frame"].get<size_t>();
    const size_t end_frame = c["end_frame"].get<size_t>();
    ASSERT_LT(start_frame, frames.size());
    ASSERT_LT(end_frame, frames.size());
    EXPECT_DOUBLE_EQ(frames[start_frame], expected[i].frame_start) << i;
    EXPECT_DOUBLE_EQ(frames[end_frame], expected[i].frame_end) << i;
    EXPECT_FALSE(c["title"].get<std::string>().empty());
  }
}

// The price of usage at the job's prices (2.0 / 0.5 / 8.0 per million).
double Price(double prompt, double cached, double output) {
  return ((prompt - cached) * 2.0 + cached * 0.5 + output * 8.0) / 1e6;
}

// The price of one stored answer (its responses row).
double AnswerPrice(const json& row) {
  return Price(row["prompt_tokens"].get<double>(), row["cached_tokens"].get<double>(),
               row["completion_tokens"].get<double>());
}

// The price of every answer a request received (its requests row's usage).
double RequestPrice(const json& row) {
  return Price(row["request_prompt_tokens"].get<double>(),
               row["request_cached_tokens"].get<double>(),
               row["request_completion_tokens"].get<double>());
}

// The prompt tokens the fake server reported for these chats (its log's count, sent as usage).
int64_t ServerPromptTokens(const std::vector<json>& chats) {
  int64_t sum = 0;
  for (const json& c : chats) sum += c["prompt_tokens"].get<int64_t>();
  return sum;
}

// Sampling at 0.4 fps: a.mp4 (80 s at 10 fps) has frames at 0, 2.5, ..., 77.5 and its last at
// 79.9; b.mp4 and c.mp4 (12 s at 25 fps) at 0, 2.52, 5.04, 7.56, 10.08 and 11.96.
TEST(ModelJobChaptersTest, AGoodAnswerIsStoredAsChaptersSnappedToSampledFrames) {
  REEL_MODEL_JOB_DB(m);
  TaskRows a = Rows(m, "a.mp4", "chapters");
  EXPECT_EQ(a.task["status"], "succeeded");
  ASSERT_EQ(a.requests.size(), 1u);
  EXPECT_EQ(a.requests[0]["outcome"], "ok");
  EXPECT_EQ(a.requests[0]["attempts"], 1);
  EXPECT_EQ(a.requests[0]["content"], kChaptersA);
  ExpectChapters(m, "a.mp4", json::parse(a.requests[0]["json_answer"].get<std::string>()),
                 {{0, 31, 0, 30}, {31, 64, 30, 65}, {64, 80, 65, 79.9}});
  EXPECT_EQ(ChatsOf(m, a).size(), 1u) << "asked once";
  // The question sent: the built-in one with the item's length, and the chapters schema.
  const json body = ChatsOf(m, a)[0]["body"];
  EXPECT_EQ(body["response_format"]["json_schema"]["name"], "chapters");

  // A chapters prompt with its own question, on b.mp4.
  TaskRows b = Rows(m, "b.mp4", "scenes");
  EXPECT_EQ(b.task["status"], "succeeded");
  ASSERT_EQ(b.requests.size(), 1u);
  ExpectChapters(m, "b.mp4", json::parse(b.requests[0]["json_answer"].get<std::string>()),
                 {{0, 6, 0, 5.04}, {6, 12, 5.04, 11.96}});
  EXPECT_EQ(ChatsOf(m, b).size(), 1u);
  EXPECT_EQ(ChatsOf(m, b)[0]["body"]["messages"].back()["content"].back()["text"],
            "Split this video into scenes, as chapters with MM:SS times.");
}

// Overlapping, out of range, not JSON: each a failed check, asked again once in the same
// conversation with the reason, then a recorded failure with that reason; nothing stored as an
// answer; the server saw two questions for each.
TEST(ModelJobChaptersTest, BadAnswersAreRecordedFailuresAskedAgainExactlyOnce) {
  REEL_MODEL_JOB_DB(m);
  struct Case {
    std::string item, prompt, answer, reason;
  };
  const std::vector<Case> cases = {
      {"b.mp4", "chapters", kChaptersBOverlapping,
       "chapter 2 (00:05-00:12) overlaps chapter 1 (00:00-00:08)"},
      {"c.mp4", "chapters", kChaptersCOutOfRange,
       "chapter 2 ends at 00:45, after the end of the video (00:12)"},
      {"c.mp4", "scenes", kScenesCNotJson, "the answer is not JSON (syntax error at byte 1)"},
  };
  CommandResult status = Reel("status --db out.db", m.dir);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.item + " " + c.prompt);
    TaskRows rows = Rows(m, c.item, c.prompt);
    EXPECT_EQ(rows.task["status"], "failed");
    ASSERT_EQ(rows.requests.size(), 1u) << "one request: the re-ask is part of it";
    const json& r = rows.requests[0];
    EXPECT_EQ(r["status"], "failed");
    EXPECT_EQ(r["outcome"], "invalid answer");
    EXPECT_EQ(r["attempts"], 2);
    EXPECT_EQ(r["error"], "the answer failed its check: " + c.reason);
    EXPECT_EQ(json::parse(r["retry_reasons"].get<std::string>()),
              json::array({"answer check: " + c.reason}));
    // The refused answer is kept, marked with why it failed its check; it is not an answer:
    // no JSON answer, and its times link to no frame (answer_time_frames leaves it out).
    EXPECT_EQ(r["content"], c.answer) << "the refused answer is kept";
    EXPECT_EQ(r["check_error"], "the answer failed its check: " + c.reason);
    EXPECT_TRUE(r["json_answer"].is_null());
    // Both answers were paid for, and their usage is stored: the request's tokens are the
    // server's counts of both prompts, its cost their price.
    ASSERT_TRUE(r["cost"].is_number());
    EXPECT_GT(r["cost"].get<double>(), 0);

    std::vector<json> chats = ChatsOf(m, rows);
    ASSERT_EQ(chats.size(), 2u) << "asked again exactly once";
    ASSERT_TRUE(r["request_prompt_tokens"].is_number()) << r.dump();
    EXPECT_EQ(r["request_prompt_tokens"].get<int64_t>(), ServerPromptTokens(chats));
    EXPECT_GT(r["request_completion_tokens"].get<int64_t>(), 0);
    EXPECT_NEAR(r["cost"].get<double>(), RequestPrice(r), 1e-12);
    const json& first = chats[0]["body"]["messages"];
    const json& again = chats[1]["body"]["messages"];
    ASSERT_EQ(again.size(), first.size() + 2);
    EXPECT_EQ(again[first.size()]["role"], "assistant");
    EXPECT_EQ(again[first.size()]["content"], c.answer);
    EXPECT_EQ(again.back()["role"], "user");
    EXPECT_NE(again.back()["content"].get<std::string>().find(c.reason), std::string::npos);
    EXPECT_EQ(json(first).dump(), json(std::vector<json>(again.begin(), again.end() - 2)).dump())
        << "the same conversation, continued";

    EXPECT_NE(status.out.find("the answer failed its check: " + c.reason), std::string::npos)
        << status.out;
  }
  // The failed questions are what `reel run` and `reel status` count as failed; the HTTP retry
  // (a 503 for c.mp4's describe) is counted apart from the re-asks.
  EXPECT_NE(m.run_err.find("model: 10 requests (7 ok, 3 failed, 1 retried, 4 asked again after a "
                           "failed answer check, 0 sent again)"),
            std::string::npos)
      << m.run_err;
  EXPECT_NE(status.out.find("Questions to the model: 7 answered, 3 failed, 0 waiting"),
            std::string::npos)
      << status.out;
  // `reel results` lists answers only: none for these.
  CommandResult results = Reel("results --db out.db --prompt chapters --format json", m.dir);
  ASSERT_EQ(results.exit_code, 0) << results.err;
  json answers = json::parse(results.out);
  ASSERT_EQ(answers.size(), 1u) << results.out;
  EXPECT_TRUE(answers[0]["path"].get<std::string>().ends_with("/a.mp4"));
}

// A malformed first answer (JSON cut short) and a good one when asked again: the good chapters are
// the stored answer, the request records the re-ask, and both answers are in its cost.
TEST(ModelJobChaptersTest, AMalformedAnswerThenAGoodOneEndsWithTheGoodChapters) {
  REEL_MODEL_JOB_DB(m);
  TaskRows a = Rows(m, "a.mp4", "scenes");
  EXPECT_EQ(a.task["status"], "succeeded");
  ASSERT_EQ(a.requests.size(), 1u);
  const json& r = a.requests[0];
  EXPECT_EQ(r["status"], "succeeded");
  EXPECT_EQ(r["outcome"], "ok");
  EXPECT_EQ(r["attempts"], 2);
  EXPECT_TRUE(r["error"].is_null());
  json reasons = json::parse(r["retry_reasons"].get<std::string>());
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_TRUE(reasons[0].get<std::string>().starts_with(
      "answer check: the answer is not JSON (syntax error at byte "))
      << reasons;
  EXPECT_EQ(r["content"], kScenesA);
  // H:MM:SS times in the answer; the end (80 s, the clip's length) snaps to the last frame.
  ExpectChapters(m, "a.mp4", json::parse(r["json_answer"].get<std::string>()),
                 {{0, 40, 0, 40}, {40, 80, 40, 79.9}});
  std::vector<json> chats = ChatsOf(m, a);
  ASSERT_EQ(chats.size(), 2u);
  EXPECT_EQ(chats[1]["body"]["messages"][chats[1]["body"]["messages"].size() - 2]["content"],
            kScenesACutShort);
  // The cost covers the cut-short answer too: more than the stored answer's own price. The
  // request's usage is both answers' (the server's counts of both prompts); the response keeps
  // the stored answer's own.
  EXPECT_GT(r["cost"].get<double>(), AnswerPrice(r) + 1e-9);
  EXPECT_EQ(r["request_prompt_tokens"].get<int64_t>(), ServerPromptTokens(chats));
  EXPECT_EQ(r["prompt_tokens"].get<int64_t>(), chats[1]["prompt_tokens"].get<int64_t>());
  EXPECT_GT(r["request_completion_tokens"].get<int64_t>(), r["completion_tokens"].get<int64_t>());
  EXPECT_NEAR(r["cost"].get<double>(), RequestPrice(r), 1e-12);

  CommandResult results = Reel("results --db out.db --prompt scenes --format json", m.dir);
  ASSERT_EQ(results.exit_code, 0) << results.err;
  json answers = json::parse(results.out);
  ASSERT_EQ(answers.size(), 2u) << results.out;  // a.mp4 and b.mp4
  for (const json& answer : answers) {
    if (answer["path"].get<std::string>().ends_with("/a.mp4")) {
      EXPECT_EQ(answer["content"], kScenesA);
    }
  }
}

// A chapters prompt is not asked about a document (it has no timeline): no context, no task, no
// request; its describe question is asked as usual.
TEST(ModelJobChaptersTest, ChaptersAreNotAskedAboutADocument) {
  REEL_MODEL_JOB_DB(m);
  const std::string notes = std::to_string(ItemId(m, "notes.md"));
  EXPECT_EQ(QueryInt(m.db, "SELECT count(*) FROM contexts WHERE item_id = " + notes +
                               " AND prompt_id IN ('chapters', 'scenes')"),
            0);
  EXPECT_EQ(QueryInt(m.db, "SELECT count(*) FROM tasks WHERE item_id = " + notes +
                               " AND prompt_id IN ('chapters', 'scenes')"),
            0);
  EXPECT_EQ(QueryInt(m.db, "SELECT count(*) FROM requests WHERE item_id = " + notes), 1);
  int document_chats = 0;
  for (const json& e : json::parse(m.server_log)) {
    if (e.value("path", "") == "/v1/chat/completions" &&
        e["body"].dump().find("The clips are a test pattern") != std::string::npos) {
      ++document_chats;
    }
  }
  EXPECT_EQ(document_chats, 1);
  // Every video was asked all three questions.
  EXPECT_EQ(QueryInt(m.db,
                     "SELECT count(*) FROM tasks t JOIN items i ON i.id = t.item_id WHERE "
                     "i.kind = 'video'"),
            9);
}

// Every time the model wrote in a stored answer, as answer_time_frames links it to the nearest
// stored frame: the text, the seconds it means, and the frame (none when outside the item or the
// item has no frames). A time of day ("10:30 am") is no reference.
TEST(ModelJobTimeReferencesTest, EveryTimeInTheAnswersLinksToTheNearestStoredFrame) {
  REEL_MODEL_JOB_DB(m);
  struct Row {
    std::string item, prompt, text, form;
    double seconds;
    std::optional<double> end_seconds;
    std::optional<double> frame;  // the nearest frame's time
    std::optional<double> end_frame;
  };
  const std::vector<Row> table = {
      // a.mp4, describe: MM:SS, a range, H:MM:SS, "at 75 seconds", past the end.
      {"a.mp4", "describe", "00:03", "clock", 3, {}, 2.5, {}},
      {"a.mp4", "describe", "00:06-00:09", "clock", 6, 9, 5, 10},
      {"a.mp4", "describe", "0:01:04", "clock", 64, {}, 65, {}},
      {"a.mp4", "describe", "75 seconds", "words", 75, {}, 75, {}},
      {"a.mp4", "describe", "2:00", "clock", 120, {}, {}, {}},
      // a.mp4, chapters (JSON): each boundary as written.
      {"a.mp4", "chapters", "00:00", "clock", 0, {}, 0, {}},
      {"a.mp4", "chapters", "00:31", "clock", 31, {}, 30, {}},
      {"a.mp4", "chapters", "00:31", "clock", 31, {}, 30, {}},
      {"a.mp4", "chapters", "01:04", "clock", 64, {}, 65, {}},
      {"a.mp4", "chapters", "01:04", "clock", 64, {}, 65, {}},
      {"a.mp4", "chapters", "01:20", "clock", 80, {}, 79.9, {}},
      // a.mp4, scenes: the good answer after the re-ask, in H:MM:SS.
      {"a.mp4", "scenes", "0:00:00", "clock", 0, {}, 0, {}},
      {"a.mp4", "scenes", "0:00:40", "clock", 40, {}, 40, {}},
      {"a.mp4", "scenes", "0:00:40", "clock", 40, {}, 40, {}},
      {"a.mp4", "scenes", "0:01:20", "clock", 80, {}, 79.9, {}},
      // b.mp4: 11 s is nearer 10.08 than 11.96.
      {"b.mp4", "describe", "0:11", "clock", 11, {}, 10.08, {}},
      {"b.mp4", "scenes", "00:00", "clock", 0, {}, 0, {}},
      {"b.mp4", "scenes", "00:06", "clock", 6, {}, 5.04, {}},
      {"b.mp4", "scenes", "00:06", "clock", 6, {}, 5.04, {}},
      {"b.mp4", "scenes", "00:12", "clock", 12, {}, 11.96, {}},
      // The document has no frames to link to.
      {"notes.md", "describe", "00:30", "clock", 30, {}, {}, {}},
  };
  // Every reference the database holds is in the table...
  EXPECT_EQ(QueryInt(m.db, "SELECT count(*) FROM answer_time_frames"),
            static_cast<int64_t>(table.size()));
  // ... and each (item, prompt) has the table's, in the order of the answer.
  for (size_t begin = 0; begin < table.size();) {
    size_t end = begin;
    while (end < table.size() && table[end].item == table[begin].item &&
           table[end].prompt == table[begin].prompt) {
      ++end;
    }
    json rows = QueryJson(
        m.db,
        "SELECT t.text, t.form, t.seconds, t.end_seconds, t.frame_seconds, t.end_frame_seconds, "
        "substr(p.content, t.char_start + 1, t.char_end - t.char_start) AS span "
        "FROM answer_time_frames t JOIN items i ON i.id = t.item_id "
        "JOIN responses p ON p.id = t.response_id WHERE i.path LIKE " +
            Sql("%/" + table[begin].item) + " AND t.prompt_id = " + Sql(table[begin].prompt) +
            " ORDER BY t.char_start");
    ASSERT_EQ(rows.size(), end - begin) << table[begin].item << " " << table[begin].prompt;
    for (size_t i = begin; i < end; ++i) {
      const Row& want = table[i];
      const json& got = rows[i - begin];
      SCOPED_TRACE(want.item + " " + want.prompt + " '" + want.text + "': " + got.dump());
      EXPECT_EQ(got["text"], want.text);
      EXPECT_EQ(got["span"], want.text) << "char_start/char_end index the answer";
      EXPECT_EQ(got["form"], want.form);
      EXPECT_DOUBLE_EQ(got["seconds"].get<double>(), want.seconds);
      if (want.end_seconds) {
        EXPECT_DOUBLE_EQ(got["end_seconds"].get<double>(), *want.end_seconds);
      } else {
        EXPECT_TRUE(got["end_seconds"].is_null());
      }
      if (want.frame) {
        ASSERT_TRUE(got["frame_seconds"].is_number());
        EXPECT_DOUBLE_EQ(got["frame_seconds"].get<double>(), *want.frame);
      } else {
        EXPECT_TRUE(got["frame_seconds"].is_null());
      }
      if (want.end_frame) {
        ASSERT_TRUE(got["end_frame_seconds"].is_number());
        EXPECT_DOUBLE_EQ(got["end_frame_seconds"].get<double>(), *want.end_frame);
      } else {
        EXPECT_TRUE(got["end_frame_seconds"].is_null());
      }
    }
    begin = end;
  }
  // The answers as the model wrote them (a time of day and the answers that failed their check
  // left no references).
  EXPECT_EQ(QueryJson(m.db,
                      "SELECT content FROM latest_answers WHERE prompt_id = 'describe' AND "
                      "path LIKE '%/a.mp4'")[0]["content"],
            kDescribeA);
  EXPECT_EQ(QueryInt(m.db, "SELECT count(*) FROM answer_times WHERE text LIKE '10:30%'"), 0);

  // `reel search` shows, on an answer hit, the frames the model meant.
  for (const auto& [words, frames] : std::vector<std::pair<std::string, std::string>>{
           {"left", "00:03 -> frame 1 (0:00:02.500)"},
           {"fades", "75 seconds -> frame 30 (0:01:15.000)"},
           {"'nothing happens'", "2:00 -> outside the item"}}) {
    CommandResult search = Reel("search --db out.db " + words + " --answers --format json", m.dir);
    ASSERT_EQ(search.exit_code, 0) << search.err;
    json hits = json::parse(search.out);
    ASSERT_EQ(hits.size(), 1u) << search.out;
    EXPECT_EQ(hits[0]["source"], "answer:describe");
    ASSERT_TRUE(hits[0]["frames"].is_string()) << hits[0].dump();
    EXPECT_NE(hits[0]["frames"].get<std::string>().find(frames), std::string::npos)
        << hits[0].dump();
  }
}

}  // namespace
}  // namespace reel::testing
