// TaskStore: a question's state in the database before, during and after its request; requests
// left in flight by a crash; batch imports; totals for the run report; merging shards.
#include "storage/tasks.h"

#include <gtest/gtest.h>

#include "storage/merge.h"
#include "storage/query.h"
#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

struct Fixture {
  explicit Fixture(const std::string& name) : path(testing::ScratchDir(name) + "/t.db") {
    auto opened = Store::Open(path);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    store.emplace(std::move(opened).value());
    job = store->UpsertJob({.name = "clips", .spec_text = "spec"}).value();
    run = store->BeginRun({.job_id = job}).value();
    item = store->UpsertItem({.job_id = job, .path = "a.mp4", .settings_hash = "s"}).value();
    context = store
                  ->PutContext({.item_id = item,
                                .prompt_id = "describe",
                                .manifest_json = R"({"time_range_s": [1.5, 9.0]})",
                                .settings_key = "key",
                                .segment_index = 0,
                                .segment_count = 1})
                  .value();
  }
  TaskRecord Task(const std::string& id) const {
    TaskRecord t;
    t.custom_id = id;
    t.item_id = item;
    t.prompt_id = "describe";
    t.context_id = context;
    t.local_prompt_tokens = 1000;
    return t;
  }
  int64_t Count(const std::string& sql) {
    auto table = Query(path, sql);
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    return std::get<int64_t>(table->rows.at(0).at(0));
  }
  std::string path;
  std::optional<Store> store;
  int64_t job = 0;
  RunRecord run;
  int64_t item = 0;
  int64_t context = 0;
};

TEST(TaskStoreTest, AQuestionIsRecordedOnceAndAnsweredOnce) {
  Fixture f("tasks_once");
  TaskStore tasks(f.store->database());
  auto first = tasks.EnsureTask(f.Task("reel-1"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->status, TaskStatus::kWaiting);
  auto again = tasks.EnsureTask(f.Task("reel-1"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, first->id);
  EXPECT_EQ(f.Count("SELECT count(*) FROM tasks"), 1);

  // The send is in the database before it goes out.
  auto request = tasks.StartSend(first->id, {.run_id = f.run.id, .model = "M"});
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(tasks.GetTask(first->id).value()->status, TaskStatus::kSent);
  EXPECT_EQ(f.Count("SELECT count(*) FROM requests WHERE status = 'sent' AND via = 'online'"), 1);
  SendOutcome ok;
  ok.attempts = 2;
  ok.retry_reasons = {"HTTP 429 \"slow down\""};
  ok.latency_seconds = 0.5;
  AnswerRecord answer;
  answer.content = R"({"n": 2})";
  answer.json_answer = R"({"n":2})";
  answer.prompt_tokens = 1010;
  answer.completion_tokens = 5;
  answer.cached_tokens = 896;
  ASSERT_TRUE(tasks.FinishSend(*request, ok, answer).ok());
  auto done = tasks.GetTask(first->id).value();
  EXPECT_EQ(done->status, TaskStatus::kSucceeded);
  EXPECT_EQ(done->last_outcome, "ok");
  EXPECT_EQ(tasks.GetAnswer(first->id).value()->json_answer, R"({"n":2})");
  EXPECT_EQ(f.Count("SELECT count(*) FROM answers WHERE json_extract(json_answer, '$.n') = 2"), 1);
  EXPECT_EQ(f.Count("SELECT count(*) FROM requests WHERE json_array_length(retry_reasons) = 1"), 1);
  // Never asked twice, never answered twice.
  EXPECT_FALSE(tasks.StartSend(first->id, {}).ok());
  EXPECT_FALSE(tasks.FinishSend(*request, ok, answer).ok());
  EXPECT_EQ(f.Count("SELECT count(*) FROM responses"), 1);
}

TEST(TaskStoreTest, FailuresStayUnlessRequeuedAndInterruptedSendsWaitAgain) {
  Fixture f("tasks_fail");
  TaskStore tasks(f.store->database());
  const int64_t a = tasks.EnsureTask(f.Task("reel-a")).value().id;
  const int64_t b = tasks.EnsureTask(f.Task("reel-b")).value().id;
  const int64_t c = tasks.EnsureTask(f.Task("reel-c")).value().id;
  // a: refused as too long, with the server's numbers.
  const int64_t ra = tasks.StartSend(a, {.run_id = f.run.id}).value();
  SendOutcome too_long;
  too_long.outcome = "prompt too long";
  too_long.error = "You passed 1200 input tokens ...";
  too_long.http_status = 400;
  too_long.too_long_prompt_tokens = 1200;
  too_long.too_long_output_tokens = 128;
  too_long.too_long_context_length = 1024;
  ASSERT_TRUE(tasks.FailSend(ra, too_long, /*requeue=*/false).ok());
  auto ta = tasks.GetTask(a).value();
  EXPECT_EQ(ta->status, TaskStatus::kFailed);
  EXPECT_EQ(ta->last_too_long_tokens, 1200);
  EXPECT_EQ(ta->last_too_long_output, 128);
  EXPECT_EQ(ta->last_too_long_window, 1024);
  EXPECT_EQ(ta->last_run_uid, f.run.uid);
  EXPECT_EQ(f.Count("SELECT count(*) FROM failures WHERE stage = 'request'"), 1);
  // b: cancelled by a stopping run: waits again, is no failure.
  const int64_t rb = tasks.StartSend(b, {}).value();
  SendOutcome cancelled;
  cancelled.outcome = "cancelled";
  ASSERT_TRUE(tasks.FailSend(rb, cancelled, /*requeue=*/true).ok());
  EXPECT_EQ(tasks.GetTask(b).value()->status, TaskStatus::kWaiting);
  // c: in flight when the process died.
  ASSERT_TRUE(tasks.StartSend(c, {}).ok());
  EXPECT_EQ(tasks.RequeueInterrupted().value(), 1);
  EXPECT_EQ(tasks.GetTask(c).value()->status, TaskStatus::kWaiting);
  EXPECT_EQ(tasks.GetTask(c).value()->last_outcome, "interrupted");
  EXPECT_EQ(f.Count("SELECT count(*) FROM requests WHERE status = 'sent'"), 0);
  auto counts = tasks.CountTasks(f.job).value();
  EXPECT_EQ(counts.failed, 1);
  EXPECT_EQ(counts.waiting, 2);
  // --retry-failed.
  EXPECT_EQ(tasks.RequeueFailed(f.item).value(), 1);
  EXPECT_EQ(tasks.GetTask(a).value()->status, TaskStatus::kWaiting);
}

TEST(TaskStoreTest, BatchImportsAreRecognisedAgainAndTotalsAddUp) {
  Fixture f("tasks_totals");
  TaskStore tasks(f.store->database());
  const int64_t a = tasks.EnsureTask(f.Task("reel-a")).value().id;
  const int64_t b = tasks.EnsureTask(f.Task("reel-b")).value().id;
  const int64_t r1 = tasks.StartSend(a, {.run_id = f.run.id, .local_prompt_tokens = 1000}).value();
  SendOutcome ok;
  ok.attempts = 3;
  ok.latency_seconds = 2.0;
  ok.ttft_seconds = 0.5;
  AnswerRecord answer;
  answer.content = "x";
  answer.prompt_tokens = 1010;
  answer.completion_tokens = 50;
  answer.cached_tokens = 512;
  ASSERT_TRUE(tasks.FinishSend(r1, ok, answer).ok());
  const int64_t r2 = tasks.StartSend(b, {.run_id = f.run.id, .local_prompt_tokens = 1000}).value();
  SendOutcome failed;
  failed.outcome = "invalid answer";
  failed.attempts = 3;  // a 503 retried, then an answer that failed its check, asked again
  failed.retry_reasons = {"HTTP 503", std::string(kAnswerCheckRetry) + "not JSON"};
  ASSERT_TRUE(tasks.FailSend(r2, failed, false).ok());
  auto totals = tasks.Totals(f.run.id, std::nullopt).value();
  EXPECT_EQ(totals.sends, 2);
  EXPECT_EQ(totals.succeeded, 1);
  EXPECT_EQ(totals.failed, 1);
  EXPECT_EQ(totals.retries, 3) << "HTTP retries";
  EXPECT_EQ(totals.rechecked, 1) << "answers asked again after a failed check";
  EXPECT_EQ(totals.prompt_tokens, 1010);
  EXPECT_EQ(totals.cached_tokens, 512);
  EXPECT_EQ(totals.completion_tokens, 50);
  EXPECT_EQ(totals.compared, 1);
  EXPECT_EQ(totals.compared_server_tokens - totals.local_prompt_tokens, 10);
  ASSERT_EQ(totals.ttft_seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(totals.ttft_seconds[0], 0.5);
  // A batch line imported once is known by its id.
  ASSERT_TRUE(tasks.RequeueFailed(f.item).ok());
  const int64_t r3 = tasks.StartSend(b, {.via = "batch"}).value();
  SendOutcome line;
  line.server_request_id = "batch-line-7";
  ASSERT_TRUE(tasks.FinishSend(r3, line, answer).ok());
  EXPECT_TRUE(tasks.HasBatchSend(b, "batch-line-7").value());
  EXPECT_FALSE(tasks.HasBatchSend(a, "batch-line-7").value());
  // The contexts' time ranges read back.
  auto rows = tasks.ListContexts(f.item, "describe", "key").value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].start_seconds, 1.5);
  EXPECT_EQ(rows[0].end_seconds, 9.0);
}

// Contexts the job no longer builds: unreferenced ones go (with their never-sent questions), the
// ones a sent question names stay, marked superseded, until the job builds them again.
TEST(TaskStoreTest, RetiredContextsAreDeletedUnlessASentQuestionNamesThem) {
  Fixture f("tasks_retire");
  TaskStore tasks(f.store->database());
  auto put = [&](const std::string& prompt, const std::string& key, const std::string& manifest,
                 std::optional<std::string> base = std::nullopt) {
    return f.store
        ->PutContexts({{.item_id = f.item,
                        .prompt_id = prompt,
                        .manifest_json = manifest,
                        .settings_key = key,
                        .base_key = base,
                        .frame_source = "src"}})
        .value()
        .front();
  };
  // "describe" under "key" (the fixture's, with a sent question), "old" (an unsent question),
  // "older" (no question), and a reduce derived from "new".
  auto sent = tasks.EnsureTask(f.Task("reel-sent"));
  ASSERT_TRUE(sent.ok());
  ASSERT_TRUE(tasks.StartSend(sent->id, {.run_id = f.run.id, .model = "M"}).ok());
  const int64_t old = put("describe", "old", R"({"n": 1})");
  TaskRecord unsent = f.Task("reel-unsent");
  unsent.context_id = old;
  ASSERT_TRUE(tasks.EnsureTask(unsent).ok());
  const int64_t older = put("describe", "older", R"({"n": 2})");
  const int64_t current = put("describe", "new", R"({"n": 3})");
  const int64_t reduce = put("describe", "reduce-of-new", R"({"n": 4})", "new");
  EXPECT_EQ(f.Count("SELECT count(*) FROM contexts WHERE base_key = 'new'"), 2);

  auto retired = f.store->RetireContexts(f.item, {{"describe", "new"}});
  ASSERT_TRUE(retired.ok()) << retired.status().ToString();
  EXPECT_EQ(retired->deleted, 2);     // old, older
  EXPECT_EQ(retired->superseded, 1);  // the fixture's, named by a sent question
  EXPECT_EQ(retired->tasks_deleted, 1);
  ASSERT_EQ(retired->retired.size(), 3u);
  // The current rows sharing their frame source: their frames stay.
  EXPECT_EQ(retired->kept_frames.size(), 2u);
  EXPECT_EQ(f.Count("SELECT count(*) FROM contexts WHERE id IN (" + std::to_string(old) + ", " +
                    std::to_string(older) + ")"),
            0);
  EXPECT_EQ(f.Count("SELECT count(*) FROM contexts WHERE superseded_at IS NOT NULL AND id = " +
                    std::to_string(f.context)),
            1);
  EXPECT_EQ(f.Count("SELECT count(*) FROM contexts WHERE superseded_at IS NULL AND id IN (" +
                    std::to_string(current) + ", " + std::to_string(reduce) + ")"),
            2);
  EXPECT_EQ(f.Count("SELECT count(*) FROM tasks"), 1);
  // Nothing more to do the second time.
  auto again = f.store->RetireContexts(f.item, {{"describe", "new"}});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->retired.empty());
  // The old settings back: the kept row is current again, the others are superseded or gone.
  auto back = f.store->RetireContexts(f.item, {{"describe", "key"}});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->restored, 1);
  EXPECT_EQ(back->deleted, 2);  // new and its reduce: nothing names them
  EXPECT_EQ(f.Count("SELECT count(*) FROM contexts"), 1);
  EXPECT_EQ(f.Count("SELECT count(*) FROM contexts WHERE superseded_at IS NULL"), 1);
}

// Every answer the server gave is billed: a request's usage is the sum over its answers (one that
// failed its check and was asked again too), stored on the request whether it succeeded or
// failed; the response keeps the stored answer's own usage; the run totals count every request's.
TEST(TaskStoreTest, EveryAnswersUsageIsStoredAndCountedRefusedOnesToo) {
  Fixture f("tasks_usage");
  TaskStore tasks(f.store->database());
  const int64_t a = tasks.EnsureTask(f.Task("reel-a")).value().id;
  const int64_t b = tasks.EnsureTask(f.Task("reel-b")).value().id;
  const int64_t c = tasks.EnsureTask(f.Task("reel-c")).value().id;
  // a: a refused answer (1000 prompt, 30 output, 512 cached), then a good one (1100, 40, 1000).
  const int64_t ra = tasks.StartSend(a, {.run_id = f.run.id, .local_prompt_tokens = 1000}).value();
  SendOutcome two;
  two.retry_reasons = {std::string(kAnswerCheckRetry) + "not JSON"};
  two.attempts = 2;
  two.prompt_tokens = 2100;
  two.completion_tokens = 70;
  two.cached_tokens = 1512;
  two.cost = 0.01;
  AnswerRecord good;
  good.content = "{}";
  good.prompt_tokens = 1100;
  good.completion_tokens = 40;
  good.cached_tokens = 1000;
  ASSERT_TRUE(tasks.FinishSend(ra, two, good).ok());
  // b: refused twice, no answer stored; its usage is still the request's.
  const int64_t rb = tasks.StartSend(b, {.run_id = f.run.id}).value();
  SendOutcome refused;
  refused.outcome = "invalid answer";
  refused.attempts = 2;
  refused.retry_reasons = {std::string(kAnswerCheckRetry) + "overlaps"};
  refused.prompt_tokens = 2000;
  refused.completion_tokens = 60;
  refused.cached_tokens = 0;
  ASSERT_TRUE(tasks.FailSend(rb, refused, false).ok());
  // c: one answer, no usage given with the outcome: the answer's is the request's.
  const int64_t rc = tasks.StartSend(c, {.run_id = f.run.id}).value();
  ASSERT_TRUE(tasks.FinishSend(rc, {}, good).ok());

  auto row = [&](int64_t request, const std::string& column) {
    return f.Count("SELECT " + column + " FROM requests WHERE id = " + std::to_string(request));
  };
  EXPECT_EQ(row(ra, "prompt_tokens"), 2100);
  EXPECT_EQ(row(ra, "completion_tokens"), 70);
  EXPECT_EQ(row(ra, "cached_tokens"), 1512);
  EXPECT_EQ(f.Count("SELECT prompt_tokens FROM responses WHERE request_id = " + std::to_string(ra)),
            1100)
      << "the stored answer's own usage";
  EXPECT_EQ(row(rb, "prompt_tokens"), 2000);
  EXPECT_EQ(row(rb, "completion_tokens"), 60);
  EXPECT_EQ(f.Count("SELECT count(*) FROM responses WHERE request_id = " + std::to_string(rb)), 0);
  EXPECT_EQ(row(rc, "prompt_tokens"), 1100);
  EXPECT_EQ(row(rc, "cached_tokens"), 1000);

  auto totals = tasks.Totals(f.run.id, std::nullopt).value();
  EXPECT_EQ(totals.prompt_tokens, 2100 + 2000 + 1100);
  EXPECT_EQ(totals.completion_tokens, 70 + 60 + 40);
  EXPECT_EQ(totals.cached_tokens, 1512 + 0 + 1000);
  EXPECT_EQ(totals.rechecked, 2);
  // Reel's count is compared with the server's count of the stored answers' prompts.
  EXPECT_EQ(totals.compared, 1);
  EXPECT_EQ(totals.compared_server_tokens, 1100);
  // The same through the job's totals (reel status, reel report).
  auto job = tasks.Totals(std::nullopt, f.job).value();
  EXPECT_EQ(job.prompt_tokens, totals.prompt_tokens);
  EXPECT_EQ(job.completion_tokens, totals.completion_tokens);
}

// Schemas 11, 10 and 9 undone: the transcripts, tasks.question and responses.check_error gone (the
// views that name them stand in as stubs; the migrations make them again).
const char* UndoSchema9() {
  return "DROP TABLE transcript_chunks; DROP TABLE transcripts; "
         "ALTER TABLE segments DROP COLUMN words_json; "
         "ALTER TABLE segments DROP COLUMN confidence; "
         "DROP VIEW latest_answers; DROP VIEW answers; DROP VIEW item_summary; "
         "ALTER TABLE tasks DROP COLUMN question; "
         "ALTER TABLE responses DROP COLUMN check_error; "
         "CREATE VIEW answers AS SELECT 1 AS stub; CREATE VIEW latest_answers AS SELECT 1 AS stub; "
         "CREATE VIEW item_summary AS SELECT 1 AS stub; PRAGMA user_version = 8";
}

// A database made before migration 7 gets each request's usage from its stored answer (the usage of
// answers refused back then was never stored).
TEST(TaskStoreTest, MigrationSevenFillsRequestUsageFromTheStoredAnswers) {
  std::string path;
  int64_t answered = 0, refused = 0;
  {
    Fixture f("tasks_usage_migration");
    path = f.path;
    TaskStore tasks(f.store->database());
    answered = tasks.StartSend(tasks.EnsureTask(f.Task("reel-a")).value().id, {}).value();
    AnswerRecord good;
    good.content = "x";
    good.prompt_tokens = 900;
    good.completion_tokens = 9;
    good.cached_tokens = 512;
    good.reasoning_tokens = 3;
    ASSERT_TRUE(tasks.FinishSend(answered, {}, good).ok());
    refused = tasks.StartSend(tasks.EnsureTask(f.Task("reel-b")).value().id, {}).value();
    SendOutcome invalid;
    invalid.outcome = "invalid answer";
    ASSERT_TRUE(tasks.FailSend(refused, invalid, false).ok());
    // Back to schema 6.
    Database& db = f.store->database();
    for (const char* sql :
         {UndoSchema9(), "ALTER TABLE requests DROP COLUMN prompt_tokens",
          "ALTER TABLE requests DROP COLUMN completion_tokens",
          "ALTER TABLE requests DROP COLUMN cached_tokens",
          "ALTER TABLE requests DROP COLUMN reasoning_tokens",
          "ALTER TABLE tasks DROP COLUMN retired_at", "PRAGMA user_version = 6"}) {
      ASSERT_TRUE(db.Execute(sql).ok()) << sql;
    }
  }
  auto reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(reopened->database().SchemaVersion().value(), Database::LatestSchemaVersion());
  auto usage = Query(path,
                     "SELECT id, prompt_tokens, completion_tokens, cached_tokens, "
                     "reasoning_tokens FROM requests ORDER BY id");
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  ASSERT_EQ(usage->rows.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(usage->rows[0][1]), 900);
  EXPECT_EQ(std::get<int64_t>(usage->rows[0][2]), 9);
  EXPECT_EQ(std::get<int64_t>(usage->rows[0][3]), 512);
  EXPECT_EQ(std::get<int64_t>(usage->rows[0][4]), 3);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(usage->rows[1][1])) << "nothing to fill";
}

// Questions the job no longer asks (their prompt no longer applies to the item, e.g. chapters of a
// document asked by an older version, or their context was superseded) do not wait for a model
// forever: never-sent ones are deleted; ones sent before (a stopped send, back to waiting) are
// kept for their requests and marked retired, not counted; they count again when asked again.
TEST(TaskStoreTest, WaitingQuestionsOfAPromptThatNoLongerAppliesAreRetired) {
  Fixture f("tasks_stale");
  TaskStore tasks(f.store->database());
  const int64_t chapters_context = f.store
                                       ->PutContexts({{.item_id = f.item,
                                                       .prompt_id = "chapters",
                                                       .manifest_json = R"({"n": 1})",
                                                       .settings_key = "ckey"}})
                                       .value()
                                       .front();
  auto chapters_task = [&](const std::string& id, std::optional<int64_t> context) {
    TaskRecord t = f.Task(id);
    t.prompt_id = "chapters";
    t.context_id = context;
    return tasks.EnsureTask(t).value().id;
  };
  ASSERT_TRUE(tasks.EnsureTask(f.Task("reel-describe")).ok());  // the current question
  chapters_task("reel-never-sent", chapters_context);
  chapters_task("reel-no-context", std::nullopt);  // its context gone
  const int64_t stopped = chapters_task("reel-stopped", chapters_context);
  SendOutcome cancelled;
  cancelled.outcome = "cancelled";
  ASSERT_TRUE(tasks
                  .FailSend(tasks.StartSend(stopped, {.run_id = f.run.id}).value(), cancelled,
                            /*requeue=*/true)
                  .ok());
  const int64_t failed = chapters_task("reel-failed", chapters_context);
  SendOutcome refused;
  refused.outcome = "invalid answer";
  ASSERT_TRUE(
      tasks.FailSend(tasks.StartSend(failed, {.run_id = f.run.id}).value(), refused, false).ok());
  EXPECT_EQ(tasks.CountTasks(f.job).value().waiting, 4);

  // The job asks "describe" only (chapters no longer applies to the item).
  auto retired = f.store->RetireContexts(f.item, {{"describe", "key"}});
  ASSERT_TRUE(retired.ok()) << retired.status().ToString();
  EXPECT_EQ(retired->tasks_deleted, 2);  // never sent, and without a context
  EXPECT_EQ(retired->tasks_retired, 1);  // the stopped one
  EXPECT_EQ(retired->superseded, 1);     // the chapters context: questions name it
  const TaskCounts counts = tasks.CountTasks(f.job).value();
  EXPECT_EQ(counts.waiting, 1) << "describe only";
  EXPECT_EQ(counts.failed, 1) << "a failure stays a failure";
  EXPECT_EQ(f.Count("SELECT count(*) FROM tasks WHERE custom_id IN ('reel-never-sent', "
                    "'reel-no-context')"),
            0);
  EXPECT_EQ(f.Count("SELECT count(*) FROM tasks WHERE retired_at IS NOT NULL AND id = " +
                    std::to_string(stopped)),
            1);
  EXPECT_EQ(f.Count("SELECT count(*) FROM requests WHERE task_id = " + std::to_string(stopped)), 1)
      << "its request stays, with its task";
  EXPECT_TRUE(tasks.ItemsWithTasks(f.job, TaskStatus::kWaiting).value() ==
              std::vector<int64_t>{f.item});
  // Nothing more the second time.
  auto again = f.store->RetireContexts(f.item, {{"describe", "key"}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->tasks_deleted + again->tasks_retired, 0);
  EXPECT_EQ(tasks.CountTasks(f.job).value().waiting, 1);

  // The prompt applies again with the same context: the retired question waits again.
  auto back = f.store->RetireContexts(f.item, {{"describe", "key"}, {"chapters", "ckey"}});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->restored, 1);
  EXPECT_EQ(tasks.CountTasks(f.job).value().waiting, 2);
  EXPECT_EQ(f.Count("SELECT count(*) FROM tasks WHERE retired_at IS NOT NULL"), 0);
}

TEST(TaskStoreTest, MergingShardsKeepsOneTaskPerCustomIdWithItsAnswer) {
  Fixture a("tasks_merge_a");
  Fixture b("tasks_merge_b");
  for (Fixture* f : {&a, &b}) {
    TaskStore tasks(f->store->database());
    const int64_t id = tasks.EnsureTask(f->Task("reel-shared")).value().id;
    if (f == &b) {
      const int64_t r = tasks.StartSend(id, {.run_id = f->run.id}).value();
      AnswerRecord answer;
      answer.content = "from b";
      ASSERT_TRUE(tasks.FinishSend(r, {}, answer).ok());
    }
  }
  const std::string out = testing::ScratchDir("tasks_merge_out") + "/out.db";
  auto stats = Merge(out, {a.path, b.path});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->tasks, 2);  // inserted by a, answered by b
  auto merged = Store::Open(out).value();
  TaskStore tasks(merged.database());
  auto t = tasks.FindTask("reel-shared").value();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->status, TaskStatus::kSucceeded);
  ASSERT_TRUE(t->request_id);
  EXPECT_EQ(tasks.GetAnswer(t->id).value()->content, "from b");
  // Merging again changes nothing.
  auto again = Merge(out, {a.path, b.path});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->tasks, 0);
  EXPECT_EQ(again->responses, 0);
}

// Questions an older Reel failed for the server's reasons wait again after migration 9; those
// that failed on their own merits stay failed. A refused answer is kept, and no item's answer.
TEST(TaskStoreTest, MigrationNineRequeuesWhatTheServerFailedAndKeepsRefusedAnswers) {
  std::string path;
  {
    Fixture f("tasks_server_failures");
    path = f.path;
    TaskStore tasks(f.store->database());
    struct Case {
      const char* id;
      const char* outcome;
      std::optional<int> http;
      bool servers;  // the server's failure, not the question's
    } cases[] = {{"reel-down", "server down", std::nullopt, true},
                 {"reel-refused", "connection error", std::nullopt, true},
                 {"reel-timeout", "timeout", std::nullopt, true},
                 {"reel-503", "server error", 503, true},
                 {"reel-429", "server error", 429, true},
                 {"reel-401", "rejected", 401, true},
                 {"reel-500", "server error", 500, false},
                 {"reel-400", "rejected", 400, false},
                 {"reel-malformed", "malformed response", 200, false},
                 {"reel-schema", "schema mismatch", 200, false}};
    for (const Case& c : cases) {
      SCOPED_TRACE(c.id);
      EXPECT_EQ(IsServerFailure(c.outcome, c.http), c.servers);
      const int64_t r = tasks.StartSend(tasks.EnsureTask(f.Task(c.id)).value().id, {}).value();
      SendOutcome o;
      o.outcome = c.outcome;
      o.http_status = c.http;
      o.error = std::string("why: ") + c.outcome;
      ASSERT_TRUE(tasks.FailSend(r, o, /*requeue=*/false).ok());
    }
    EXPECT_EQ(f.Count("SELECT count(*) FROM tasks WHERE status = 'failed'"), 10);
    // A refused answer (this version): kept with why, never the item's answer.
    const int64_t r = tasks.StartSend(tasks.EnsureTask(f.Task("reel-kept")).value().id, {}).value();
    AnswerRecord answer;
    answer.content = "not JSON";
    answer.json_answer = "{}";
    SendOutcome o;
    o.outcome = "schema mismatch";
    o.error = "the answer is not JSON";
    ASSERT_TRUE(tasks.RefuseAnswer(r, o, answer).ok());
    EXPECT_EQ(f.Count("SELECT count(*) FROM responses WHERE content = 'not JSON' AND "
                      "check_error = 'the answer is not JSON' AND json_answer IS NULL"),
              1);
    EXPECT_EQ(f.Count("SELECT count(*) FROM tasks WHERE custom_id = 'reel-kept' AND "
                      "status = 'failed'"),
              1);
    EXPECT_EQ(f.Count("SELECT count(*) FROM latest_answers"), 0);
    EXPECT_EQ(f.Count("SELECT count(*) FROM answers WHERE check_error IS NOT NULL"), 1);
    EXPECT_EQ(f.Count("SELECT answers FROM item_summary"), 0);
    EXPECT_FALSE(tasks.GetAnswer(tasks.FindTask("reel-kept").value()->id).value().has_value());
    ASSERT_TRUE(f.store->database()
                    .Execute("DELETE FROM responses; UPDATE tasks SET status = 'failed' WHERE "
                             "custom_id = 'reel-kept'")
                    .ok());
    ASSERT_TRUE(f.store->database().Execute(UndoSchema9()).ok());
  }
  auto reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto waiting = Query(path,
                       "SELECT group_concat(custom_id, ' ') FROM (SELECT custom_id FROM tasks "
                       "WHERE status = 'waiting' ORDER BY custom_id)");
  ASSERT_TRUE(waiting.ok()) << waiting.status().ToString();
  EXPECT_EQ(std::get<std::string>(waiting->rows[0][0]),
            "reel-401 reel-429 reel-503 reel-down reel-refused reel-timeout");
  auto failed = Query(path,
                      "SELECT group_concat(custom_id, ' ') FROM (SELECT custom_id FROM tasks "
                      "WHERE status = 'failed' ORDER BY custom_id)");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(std::get<std::string>(failed->rows[0][0]),
            "reel-400 reel-500 reel-kept reel-malformed reel-schema");
}

}  // namespace
}  // namespace reel::storage
