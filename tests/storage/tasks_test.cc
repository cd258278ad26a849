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

}  // namespace
}  // namespace reel::storage
