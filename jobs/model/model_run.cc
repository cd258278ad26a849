#include "jobs/model/model_run.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/utf8.h"
#include "jobs/model/model_plan.h"
#include "jobs/spec/prompt_kinds.h"

namespace reel::jobs {
namespace {

using storage::TaskStatus;
using storage::TaskStep;

// One item whose requests are under way.
struct ItemJob {
  int64_t seq = 0;
  int64_t item_id = 0;
  std::string media_path;
  std::unique_ptr<ItemPlanner> planner;
  std::mutex mutex;             // the planner and everything below
  std::set<int64_t> scheduled;  // tasks queued, held back or in flight
  std::set<int64_t> tried;      // tasks this run has queued: never queued twice
  // Sends held back until the first of their prefix group has returned.
  std::map<std::string, std::vector<PlannedSend>> held;
  std::set<std::string> leaders_out;  // prefix groups whose first send is out
  std::map<size_t, int> outstanding_by_prompt;
  int outstanding = 0;
  std::map<size_t, std::string> server_failed;  // by prompt: why the server failed a send
};

struct Queued {
  std::shared_ptr<ItemJob> job;
  PlannedSend send;
};

// The messages of `inner` (a JSON array, its size known) with `extra` (",{...},{...}") added at
// its end: the same conversation, continued.
class ExtendedMessages final : public llm::BodySource {
 public:
  ExtendedMessages(std::shared_ptr<const llm::BodySource> inner, std::string extra)
      : inner_(std::move(inner)), tail_(std::move(extra) + "]") {}
  int64_t Size() const override {
    const int64_t n = inner_->Size();
    return n < 1 ? -1 : n - 1 + static_cast<int64_t>(tail_.size());
  }
  std::unique_ptr<llm::BodyReader> Open() const override {
    return std::make_unique<Reader>(inner_->Open(), inner_->Size() - 1, tail_);
  }

 private:
  class Reader final : public llm::BodyReader {
   public:
    Reader(std::unique_ptr<llm::BodyReader> inner, int64_t inner_left, const std::string& tail)
        : inner_(std::move(inner)), inner_left_(inner_left), tail_(tail) {}
    Result<size_t> Read(char* out, size_t capacity) override {
      if (inner_left_ > 0) {
        const size_t want = static_cast<size_t>(std::min<int64_t>(inner_left_, capacity));
        REEL_ASSIGN_OR_RETURN(size_t n, inner_->Read(out, want));
        if (n == 0) return IoError("the request's messages ended early");
        inner_left_ -= static_cast<int64_t>(n);
        return n;
      }
      const size_t n = std::min(capacity, tail_.size() - tail_pos_);
      std::memcpy(out, tail_.data() + tail_pos_, n);
      tail_pos_ += n;
      return n;
    }

   private:
    std::unique_ptr<llm::BodyReader> inner_;
    int64_t inner_left_;
    const std::string& tail_;
    size_t tail_pos_ = 0;
  };
  std::shared_ptr<const llm::BodySource> inner_;
  std::string tail_;
};

std::string JsonString(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

storage::AnswerRecord AnswerOf(const llm::ChatResult& r) {
  storage::AnswerRecord a;
  a.content = r.answer.content;
  if (!r.answer.reasoning.empty()) a.reasoning = r.answer.reasoning;
  if (!r.answer.finish_reason.empty()) a.finish_reason = r.answer.finish_reason;
  a.prompt_tokens = r.answer.prompt_tokens;
  a.completion_tokens = r.answer.completion_tokens;
  a.cached_tokens = r.answer.cached_tokens;
  a.reasoning_tokens = r.answer.reasoning_tokens;
  if (!r.json_answer.empty()) a.json_answer = r.json_answer;
  a.truncated = r.truncated;
  if (!r.answer.response_id.empty()) a.response_uid = r.answer.response_id;
  return a;
}

}  // namespace

bool AnswerReceived(const llm::ChatResult& r) {
  return r.ok() || r.outcome == llm::ChatOutcome::kSchemaMismatch;
}

void AddUsage(const llm::ChatResult& r, storage::SendOutcome* o) {
  auto add = [](std::optional<int64_t>& sum, const std::optional<int64_t>& v) {
    if (v) sum = sum.value_or(0) + *v;
  };
  add(o->prompt_tokens, r.answer.prompt_tokens);
  add(o->completion_tokens, r.answer.completion_tokens);
  add(o->cached_tokens, r.answer.cached_tokens);
  add(o->reasoning_tokens, r.answer.reasoning_tokens);
}

storage::SendOutcome SendOutcomeOf(const llm::ChatResult& r) {
  storage::SendOutcome o;
  o.outcome = r.ok() ? "ok" : llm::ChatOutcomeName(r.outcome);
  o.error = r.error;
  if (r.http_status > 0) o.http_status = r.http_status;
  if (r.attempts > 0) o.attempts = r.attempts;
  o.retry_reasons = r.retry_reasons;
  if (r.attempts > 0) {
    o.latency_seconds = r.latency_s;
    o.total_seconds = r.total_s;
  }
  o.ttft_seconds = r.ttft_s;
  if (r.request_bytes > 0) o.request_bytes = r.request_bytes;
  if (!r.server_request_id.empty()) o.server_request_id = r.server_request_id;
  if (r.too_long) {
    o.too_long_prompt_tokens = r.too_long->prompt_tokens;
    o.too_long_output_tokens = r.too_long->requested_output;
    o.too_long_context_length = r.too_long->context_length;
  }
  return o;
}

storage::AnswerRecord AnswerRecordOf(const llm::ChatResult& r) { return AnswerOf(r); }

struct ModelRun::Impl {
  Impl(const JobSpec& j, std::shared_ptr<const ModelSetup> s, ModelRunOptions o)
      : job(j), setup(std::move(s)), options(std::move(o)) {}

  const JobSpec& job;
  std::shared_ptr<const ModelSetup> setup;
  ModelRunOptions options;
  std::unique_ptr<llm::ModelClient> client;  // null: prepare only
  std::atomic<bool> cancel{false};
  std::atomic<bool> halted{false};  // stopped early: stop_reason (and maybe fatal) say why

  std::mutex mutex;
  std::condition_variable work_cv;  // senders wait for work
  std::condition_variable room_cv;  // AddItem waits for room, Finish for the end
  std::map<std::pair<int64_t, int64_t>, Queued> queue;  // (item seq, order) -> send
  int64_t next_seq = 0;
  int64_t next_order = 0;
  int active_items = 0;
  bool shutting_down = false;
  ModelRunCounters counters;
  int64_t in_flight = 0;      // sends out to the server now
  int64_t output_tokens = 0;  // completion tokens of the answers received in this run
  std::set<std::string> shapes_checked;
  std::string stop_reason;  // why the stage stopped early ("" when it did not)
  Status fatal;             // a database write failed
  std::vector<std::jthread> senders;

  int max_active() const { return std::max(2, 2 * job.model.concurrency); }

  PlanOptions BaseOptions(const ItemJob& item, bool sending) const {
    PlanOptions p;
    p.build_bodies = sending;
    p.resend_failed = options.retry_failed;
    p.ask_again = options.ask_again;
    p.run_uid = options.run_uid;
    p.scheduled = &item.scheduled;
    p.tried = &item.tried;
    return p;
  }

  // Stops sending at once (requests in flight are cancelled; their questions, and every one not
  // asked yet, wait for the next run). The first reason is kept.
  void Halt(const std::string& reason) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (stop_reason.empty()) stop_reason = reason;
      halted.store(true);
      cancel.store(true);
    }
    room_cv.notify_all();
    work_cv.notify_all();
  }

  // A write to the database failed: the stage stops and the run must end.
  void Fail(const Status& status) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (fatal.ok()) fatal = status;
    }
    Halt(status.message());
  }

  std::string StopReason() {
    std::lock_guard<std::mutex> lock(mutex);
    return stop_reason;
  }

  // Adds what the planner's last calls cost to the run's counters.
  void Tally(ItemPlanner& planner) {
    const PlannerCounters c = planner.TakeCounters();
    std::lock_guard<std::mutex> lock(mutex);
    counters.contexts_built += c.contexts_built;
    counters.contexts_reused += c.contexts_reused;
    counters.frame_passes += c.frame_passes;
    counters.frames_decoded += c.frames_decoded;
  }

  void Warn(const std::string& message) {
    if (options.progress != nullptr) options.progress->Warning(SafeUtf8(message));
  }

  // Tells the progress line where the questions stand (mutex not held).
  void ShowQuestions() {
    if (options.progress == nullptr) return;
    ProgressReporter::Questions q;
    {
      std::lock_guard<std::mutex> lock(mutex);
      q.answered = counters.prompts_answered;
      q.failed = counters.prompts_failed;
      q.waiting = static_cast<int64_t>(queue.size());
      q.in_flight = in_flight;
      q.output_tokens = output_tokens;
    }
    options.progress->QuestionsChanged(q);
  }

  void Report(const PromptOutcome& outcome) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      switch (outcome.state) {
        case PromptOutcome::State::kAnswered:
          ++counters.prompts_answered;
          break;
        case PromptOutcome::State::kFailed:
          ++(outcome.answered_before ? counters.prompts_failed_before : counters.prompts_failed);
          break;
        case PromptOutcome::State::kWaiting:
          ++counters.prompts_waiting;
          break;
      }
    }
    // An old failure is listed by `reel status`, not repeated by every run.
    if (outcome.state == PromptOutcome::State::kFailed && !outcome.answered_before) {
      Warn(outcome.item_path + ": prompt '" + outcome.prompt_id + "': " + outcome.message);
    }
    if (outcome.state != PromptOutcome::State::kWaiting) ShowQuestions();
    if (options.on_prompt) options.on_prompt(outcome);
  }

  // Reports a prompt that needs nothing sent (answered or failed before, or waiting). `why`: the
  // error of the send that just failed it ("" when none), so the message says the cause.
  void ReportSettled(storage::Store& store, ItemJob& job, size_t prompt_index,
                     const PromptPlan& plan, bool before, const std::string& why = "") {
    PromptOutcome o;
    o.item_path = job.planner->item_path();
    o.prompt_id = this->job.prompts[prompt_index].id;
    o.answered_before = before;
    if (plan.state == PromptState::kDone) {
      o.state = PromptOutcome::State::kAnswered;
      if (plan.final_task_id) {
        storage::TaskStore tasks(store.database());
        Result<std::optional<storage::AnswerRecord>> a = tasks.GetAnswer(*plan.final_task_id);
        if (a.ok()) o.answer = *a;
      }
    } else if (plan.state == PromptState::kFailed) {
      o.state = PromptOutcome::State::kFailed;
      o.message = plan.message + (why.empty() ? "" : ": " + why);
    } else {
      o.state = PromptOutcome::State::kWaiting;
      o.message = StopReason();
      auto why = job.server_failed.find(prompt_index);
      if (o.message.empty() && why != job.server_failed.end()) o.message = why->second;
    }
    Report(o);
  }

  // Queues sends of `job` (job->mutex held). Caller holds no other lock.
  void EnqueueLocked(const std::shared_ptr<ItemJob>& job, std::vector<PlannedSend> sends,
                     bool group_by_prefix) {
    std::vector<Queued> ready;
    for (PlannedSend& send : sends) {
      job->scheduled.insert(send.task.id);
      job->tried.insert(send.task.id);
      ++job->outstanding;
      ++job->outstanding_by_prompt[send.prompt_index];
      if (group_by_prefix && !send.prefix_key.empty()) {
        if (job->leaders_out.count(send.prefix_key) > 0) {
          job->held[send.prefix_key].push_back(std::move(send));
          continue;
        }
        job->leaders_out.insert(send.prefix_key);
      }
      ready.push_back({job, std::move(send)});
    }
    std::lock_guard<std::mutex> lock(mutex);
    for (Queued& q : ready) queue.emplace(std::make_pair(job->seq, next_order++), std::move(q));
    work_cv.notify_all();
  }

  Status AddItem(storage::Store& store, int64_t item_id, const std::string& media_path,
                 std::vector<std::shared_ptr<const ItemContext>> built) {
    auto job = std::make_shared<ItemJob>();
    job->item_id = item_id;
    job->media_path = media_path;
    job->planner = std::make_unique<ItemPlanner>(this->job, *setup, item_id, media_path);
    bool sending = client != nullptr;
    if (sending) {
      std::unique_lock<std::mutex> lock(mutex);
      room_cv.wait(lock, [&] { return active_items < max_active() || cancel.load(); });
      if (halted.load()) {
        sending = false;  // the stage stopped: the item's questions are recorded, and wait
      } else if (cancel.load()) {
        return Cancelled(media_path + ": the run is stopping");
      } else {
        job->seq = next_seq++;
        ++active_items;
        ++counters.items;
      }
    }
    if (sending) job->planner->Adopt(std::move(built));  // else nothing is built
    std::string errors;
    Status disk_full;
    {
      std::lock_guard<std::mutex> item_lock(job->mutex);
      std::vector<PlannedSend> initial;
      for (size_t p = 0; p < this->job.prompts.size(); ++p) {
        Result<PromptPlan> plan = job->planner->Plan(store, p, BaseOptions(*job, sending));
        if (!plan.ok()) {
          if (plan.status().code() == ErrorCode::kDiskFull) {
            if (disk_full.ok()) disk_full = plan.status();
            Fail(plan.status());
          }
          errors += (errors.empty() ? "" : "; ") + std::string("prompt '") +
                    this->job.prompts[p].id + "': " + plan.status().message();
          continue;
        }
        if (plan->state == PromptState::kNoContext) continue;
        if (!plan->message.empty() && plan->state != PromptState::kFailed) {
          Warn(job->planner->item_path() + ": prompt '" + this->job.prompts[p].id +
               "': " + plan->message);
        }
        if (!sending || plan->sends.empty()) {
          ReportSettled(store, *job, p, *plan, /*before=*/true);
          continue;
        }
        for (PlannedSend& s : plan->sends) initial.push_back(std::move(s));
      }
      Tally(*job->planner);
      if (!initial.empty()) EnqueueLocked(job, std::move(initial), /*group_by_prefix=*/true);
    }
    bool finished = false;
    {
      std::lock_guard<std::mutex> item_lock(job->mutex);
      finished = job->outstanding == 0;
    }
    if (sending && finished) ItemFinished(*job);
    if (!disk_full.ok()) return disk_full.WithPrefix(media_path);
    if (!errors.empty()) return IoError(media_path + ": " + errors);
    return Status::Ok();
  }

  void ItemFinished(ItemJob& job) {
    std::lock_guard<std::mutex> lock(mutex);
    --active_items;
    room_cv.notify_all();
  }

  // One request, start to stored answer.
  llm::ChatResult Send(storage::Store& store, PlannedSend& send, const std::string& item_path,
                       const std::function<llm::ChapterTimeline()>& timeline_of) {
    storage::TaskStore tasks(store.database());
    const bool final_step = send.final_step;
    // verify_tokens: the server's count of the first request of each shape.
    if (job.model.verify_tokens) {
      bool first = false;
      {
        std::lock_guard<std::mutex> lock(mutex);
        first = shapes_checked.insert(send.shape).second;
      }
      if (first) {
        Result<int64_t> count = client->CountPromptTokens(send.request);
        if (count.ok()) {
          Status s = tasks.SetServerCount(send.task.id, *count);
          if (s.code() == ErrorCode::kDiskFull) Fail(s);  // else the count is only a note
          std::lock_guard<std::mutex> lock(mutex);
          ++counters.tokenize_checks;
        } else {
          Warn("verify_tokens: " + send.shape + ": " + count.status().message());
        }
      }
    }
    storage::SendRecord record;
    record.run_id = options.run_id;
    record.model = job.model.name;
    record.via = "online";
    record.local_prompt_tokens = send.request.prompt_tokens_estimate;
    Result<int64_t> request_id = tasks.StartSend(send.task.id, record);
    llm::ChatResult result;
    if (!request_id.ok()) {
      // Nothing goes out unrecorded, and the question is not tried again in this run: a
      // database that cannot be written ends the stage (the question waits for the next run).
      Fail(request_id.status().WithPrefix(item_path + ": could not record the request"));
      result.outcome = llm::ChatOutcome::kCancelled;
      result.error = "not sent: " + request_id.status().message();
      return result;
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++counters.sends;
    }
    send.request.client_request_id = send.task.custom_id + "-" + std::to_string(*request_id);
    std::unique_ptr<llm::ChatObserver> observer;
    if (final_step && options.observer) {
      observer = options.observer(item_path, job.prompts[send.prompt_index].id);
    }
    result = client->Chat(send.request, &cancel, observer.get());
    // The prompt's kind checks the answer (jobs/spec/prompt_kinds.h); a failed check is answered
    // once more in the same conversation, then the failure stands. For such a kind the check judges
    // the answer, not the client's schema validation: an answer that is not JSON is a failed
    // check (asked again with its reason), and one the check accepts is kept.
    const PromptSpec& prompt = job.prompts[send.prompt_index];
    auto checked_by_kind = [&prompt](llm::ChatResult& r) {
      if (AnswerCheckedByKind(prompt) && r.outcome == llm::ChatOutcome::kSchemaMismatch) {
        r.outcome = llm::ChatOutcome::kOk;
        r.error.clear();
        r.json_answer.clear();
      }
    };
    checked_by_kind(result);
    // What the request used and cost: every answer the server gave, the ones that failed the
    // check (or the schema) too.
    std::optional<double> spent;
    storage::SendOutcome used;  // usage sums only
    auto add_cost = [&](const llm::ChatResult& r) {
      if (!AnswerReceived(r)) return;
      AddUsage(r, &used);
      if (std::optional<double> c = AnswerCost(job.model, AnswerOf(r))) {
        spent = spent.value_or(0) + *c;
      }
    };
    add_cost(result);
    std::optional<std::string> checked_json;
    std::string check_failure;
    if (result.ok()) {
      const llm::ChapterTimeline timeline = timeline_of();
      Result<std::optional<std::string>> check =
          CheckPromptAnswer(prompt, result.answer.content, timeline);
      for (int retry = 0; !check.ok() && retry < kAnswerCheckRetries && !cancel.load() &&
                          send.request.messages->Size() > 0;
           ++retry) {
        const std::string reason = check.status().message();
        if (observer) observer->OnRetry("the answer failed its check: " + reason);
        llm::ChatRequest follow = send.request;
        follow.messages = std::make_shared<ExtendedMessages>(
            send.request.messages,
            ",{\"role\":\"assistant\",\"content\":" + JsonString(result.answer.content) +
                "},{\"role\":\"user\",\"content\":" + JsonString(PromptRetryFor(prompt, reason)) +
                "}");
        llm::ChatResult second = client->Chat(follow, &cancel, observer.get());
        checked_by_kind(second);
        add_cost(second);
        second.attempts += result.attempts;
        second.retry_reasons.insert(second.retry_reasons.begin(), result.retry_reasons.begin(),
                                    result.retry_reasons.end());
        second.retry_reasons.insert(second.retry_reasons.begin() + result.retry_reasons.size(),
                                    std::string(storage::kAnswerCheckRetry) + reason);
        second.total_s += result.total_s;
        result = std::move(second);
        if (!result.ok()) break;
        check = CheckPromptAnswer(prompt, result.answer.content, timeline);
      }
      if (result.ok()) {
        if (check.ok()) {
          checked_json = *check;
        } else {
          check_failure = check.status().message();
        }
      }
    }
    storage::SendOutcome outcome = SendOutcomeOf(result);
    outcome.prompt_tokens = used.prompt_tokens;
    outcome.completion_tokens = used.completion_tokens;
    outcome.cached_tokens = used.cached_tokens;
    outcome.reasoning_tokens = used.reasoning_tokens;
    outcome.cost = spent;  // also of answers that failed their check, and of a failed re-ask
    const std::optional<int> http =
        result.http_status > 0 ? std::optional<int>(result.http_status) : std::nullopt;
    Status stored;
    if (result.ok() && check_failure.empty()) {
      storage::AnswerRecord answer = AnswerOf(result);
      if (checked_json) answer.json_answer = *checked_json;
      stored = tasks.FinishSend(*request_id, outcome, answer);
      if (!stored.ok()) {
        stored = stored.WithPrefix(
            "the answer arrived but could not be stored (the next run asks "
            "the question again)");
        // The answer came but is not stored: the question must be asked again, never counted
        // as answered. Best effort: record why (a failed write leaves the request 'sent', which
        // the next run requeues the same way).
        storage::SendOutcome lost = outcome;
        lost.outcome = std::string(kNotStoredOutcome);
        lost.error = stored.message();
        (void)tasks.FailSend(*request_id, lost, /*requeue=*/true);
      }
    } else if (result.ok() || result.outcome == llm::ChatOutcome::kSchemaMismatch) {
      // An answer that failed its check (the prompt kind's, or the JSON schema): the question
      // failed; the answer is kept, marked so.
      if (result.ok()) {
        outcome.outcome = std::string(kInvalidAnswerOutcome);
        outcome.error = std::string(kAnswerCheckFailed) + check_failure;
      }
      stored = tasks.RefuseAnswer(*request_id, outcome, AnswerOf(result));
    } else if (storage::IsServerFailure(outcome.outcome, http)) {
      // Not the question's fault: it waits for the next run (never sent twice by this one).
      stored = tasks.FailSend(*request_id, outcome, /*requeue=*/true);
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++counters.server_failures;
      }
      if (http == 401 || http == 403) {
        Halt("the model server refused the API key (" + result.error +
             "); no more questions are sent: set the right key (model.api_key_env) and run "
             "again");
      } else if (result.outcome == llm::ChatOutcome::kServerDown) {
        Halt("the model server at " + job.model.endpoint.value_or("?") +
             " stayed unreachable: " + result.error);
      }
    } else {
      stored = tasks.FailSend(*request_id, outcome,
                              /*requeue=*/result.outcome == llm::ChatOutcome::kCancelled);
    }
    if (!stored.ok()) Fail(stored.WithPrefix(item_path + ": prompt '" + prompt.id + "'"));
    return result;
  }

  // After a send: release followers, re-plan the prompt when none of its sends is left.
  void After(storage::Store& store, Queued& q, const llm::ChatResult& result, bool sent) {
    ItemJob& job = *q.job;
    const size_t p = q.send.prompt_index;
    bool finished = false;
    {
      std::lock_guard<std::mutex> item_lock(job.mutex);
      if (sent &&
          storage::IsServerFailure(
              llm::ChatOutcomeName(result.outcome),
              result.http_status > 0 ? std::optional<int>(result.http_status) : std::nullopt)) {
        job.server_failed[p] = "the model server failed it: " + result.error;
      }
      job.scheduled.erase(q.send.task.id);
      --job.outstanding;
      const int left = --job.outstanding_by_prompt[p];
      std::vector<PlannedSend> released;
      auto held = job.held.find(q.send.prefix_key);
      if (held != job.held.end()) {
        released = std::move(held->second);
        job.held.erase(held);
      }
      if (!released.empty()) {
        std::lock_guard<std::mutex> lock(mutex);
        for (PlannedSend& s : released) {
          queue.emplace(std::make_pair(job.seq, next_order++), Queued{q.job, std::move(s)});
        }
        work_cv.notify_all();
      }
      if (left == 0) {
        Result<PromptPlan> plan = Status(ErrorCode::kCancelled, "not planned");
        if (sent && !cancel.load()) {
          plan = job.planner->Plan(store, p, BaseOptions(job, /*sending=*/true));
          Tally(*job.planner);
          if (!plan.ok() && plan.status().code() == ErrorCode::kDiskFull) Fail(plan.status());
        }
        if (!sent || cancel.load()) {
          PromptOutcome o;
          o.item_path = job.planner->item_path();
          o.prompt_id = this->job.prompts[p].id;
          o.state = PromptOutcome::State::kWaiting;
          o.message = StopReason();
          Report(o);
        } else {
          if (!plan.ok()) {
            PromptOutcome o;
            o.item_path = job.planner->item_path();
            o.prompt_id = this->job.prompts[p].id;
            o.state = PromptOutcome::State::kFailed;
            o.message = plan.status().message();
            Report(o);
          } else if (!plan->sends.empty()) {
            if (!plan->message.empty()) {
              Warn(job.planner->item_path() + ": prompt '" + this->job.prompts[p].id +
                   "': " + plan->message);
            }
            EnqueueLocked(q.job, std::move(plan->sends), /*group_by_prefix=*/false);
          } else {
            ReportSettled(store, job, p, *plan, /*before=*/false,
                          result.ok() ? std::string() : result.error);
          }
        }
      }
      finished = job.outstanding == 0;
    }
    if (finished) ItemFinished(job);
  }

  void SenderLoop() {
    std::optional<storage::Store> store;
    while (true) {
      Queued q;
      {
        std::unique_lock<std::mutex> lock(mutex);
        work_cv.wait(lock, [&] { return !queue.empty() || shutting_down; });
        if (queue.empty()) return;
        auto first = queue.begin();
        q = std::move(first->second);
        queue.erase(first);
        ++in_flight;
      }
      ShowQuestions();
      if (!store) {
        Result<storage::Store> opened = storage::Store::Open(options.database);
        if (!opened.ok()) {
          Fail(opened.status().WithPrefix("model requests"));
        } else {
          store.emplace(std::move(opened).value());
        }
      }
      llm::ChatResult result;
      bool sent = false;
      if (!cancel.load() && store) {
        result = Send(*store, q.send, q.job->planner->item_path(), [&q] {
          std::lock_guard<std::mutex> item_lock(q.job->mutex);
          return q.job->planner->Timeline();
        });
        sent = result.outcome != llm::ChatOutcome::kCancelled;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        --in_flight;
        if (sent) output_tokens += result.answer.completion_tokens.value_or(0);
      }
      if (store) {
        After(*store, q, result, sent);
      } else {
        std::lock_guard<std::mutex> item_lock(q.job->mutex);
        --q.job->outstanding;
      }
    }
  }

  void StartSenders() {
    const int n = std::max(1, job.model.concurrency);
    for (int i = 0; i < n; ++i) senders.emplace_back([this] { SenderLoop(); });
  }

  void Shutdown() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      shutting_down = true;
      work_cv.notify_all();
      room_cv.notify_all();
    }
    senders.clear();  // joins
  }
};

ModelRun::ModelRun(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ModelRun::~ModelRun() {
  if (impl_) {
    impl_->cancel.store(true);
    impl_->Shutdown();
  }
}

Result<std::unique_ptr<ModelRun>> ModelRun::Start(const JobSpec& job,
                                                  std::shared_ptr<const ModelSetup> setup,
                                                  ModelRunOptions options) {
  auto impl = std::make_unique<Impl>(job, std::move(setup), std::move(options));
  REEL_ASSIGN_OR_RETURN(llm::ModelClientOptions client_options, ClientOptionsFor(job));
  ProgressReporter* progress = impl->options.progress;
  client_options.on_event = [progress](const std::string& message) {
    if (progress != nullptr && message.find("circuit") != std::string::npos) {
      progress->Warning(message);
    }
  };
  REEL_ASSIGN_OR_RETURN(impl->client, llm::ModelClient::Create(std::move(client_options)));
  REEL_ASSIGN_OR_RETURN(llm::ServerInfo info, impl->client->CheckModel());
  (void)info;
  REEL_RETURN_IF_ERROR(impl->client->CheckBudget(job.context.token_budget));
  impl->StartSenders();
  return std::unique_ptr<ModelRun>(new ModelRun(std::move(impl)));
}

std::unique_ptr<ModelRun> ModelRun::PrepareOnly(const JobSpec& job,
                                                std::shared_ptr<const ModelSetup> setup,
                                                ModelRunOptions options) {
  auto impl = std::make_unique<Impl>(job, std::move(setup), std::move(options));
  return std::unique_ptr<ModelRun>(new ModelRun(std::move(impl)));
}

Status ModelRun::AddItem(storage::Store& store, int64_t item_id, const std::string& media_path,
                         std::vector<std::shared_ptr<const ItemContext>> built) {
  return impl_->AddItem(store, item_id, media_path, std::move(built));
}

void ModelRun::Finish(const std::function<bool()>& stop_requested,
                      const std::function<void()>& tick) {
  if (impl_->client != nullptr) {
    std::unique_lock<std::mutex> lock(impl_->mutex);
    while (impl_->active_items > 0) {
      if (stop_requested && stop_requested()) impl_->cancel.store(true);
      impl_->room_cv.wait_for(lock, std::chrono::milliseconds(100));
      if (tick) {
        lock.unlock();
        tick();
        lock.lock();
      }
    }
  }
  impl_->Shutdown();
}

void ModelRun::Cancel() {
  impl_->cancel.store(true);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->room_cv.notify_all();
}

bool ModelRun::sending() const { return impl_->client != nullptr; }

std::string ModelRun::stop_reason() const { return impl_->StopReason(); }

Status ModelRun::fatal_error() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->fatal;
}

ModelRunCounters ModelRun::counters() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->counters;
}

}  // namespace reel::jobs
