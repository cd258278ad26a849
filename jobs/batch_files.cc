#include "jobs/batch_files.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "base/utf8.h"
#include "jobs/model_plan.h"
#include "jobs/model_run.h"
#include "jobs/model_setup.h"
#include "jobs/prompt_kinds.h"
#include "jobs/run_lock.h"
#include "llm/client/batch_lines.h"
#include "llm/client/dialect.h"
#include "storage/store.h"
#include "storage/tasks.h"

namespace reel::jobs {
namespace {

// The database's run lock, or kUnavailable saying who holds it (the command names itself).
Result<RunLock> LockFor(const std::string& database) {
  LockOwner owner;
  Result<RunLock> lock = RunLock::TryAcquire(database, &owner);
  if (!lock.ok() && lock.status().code() == ErrorCode::kUnavailable) {
    return Unavailable("a run holds " + database + " (" + owner.Describe() +
                       "); try again when it has finished");
  }
  return lock;
}

}  // namespace

Result<ExportResult> ExportBatch(const JobSpec& job_as_given, const ExportOptions& options) {
  const JobSpec& job = job_as_given;
  REEL_ASSIGN_OR_RETURN(const llm::Dialect* dialect, llm::DialectByName(options.dialect));
  REEL_ASSIGN_OR_RETURN(RunLock lock, LockFor(options.database));
  REEL_ASSIGN_OR_RETURN(storage::Store store, storage::Store::Open(options.database));
  REEL_ASSIGN_OR_RETURN(std::optional<storage::JobRecord> job_record, store.FindJob(job.name));
  if (!job_record) {
    return NotFound(options.database + " holds no job named '" + job.name + "'; run it first");
  }
  REEL_ASSIGN_OR_RETURN(ModelSetup setup, LoadModelSetup(job, options.database));
  storage::TaskStore tasks(store.database());
  REEL_ASSIGN_OR_RETURN(auto items, tasks.DoneItems(job_record->id));

  const std::string tmp = options.out_path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return IoError(tmp + ": cannot write");
  ExportResult result;
  PlanOptions plan_options;
  plan_options.build_bodies = true;
  plan_options.include_sent = true;
  plan_options.resend_failed = options.retry_failed;
  for (const auto& [item_id, path] : items) {
    ItemPlanner planner(job, setup, item_id, UnescapeInvalidUtf8(path));
    int64_t lines_before = result.lines;
    for (size_t p = 0; p < job.prompts.size(); ++p) {
      Result<PromptPlan> plan = planner.Plan(store, p, plan_options);
      if (!plan.ok()) {
        result.warnings.push_back(path + ": prompt '" + job.prompts[p].id +
                                  "': " + plan.status().message());
        continue;
      }
      for (PlannedSend& send : plan->sends) {
        send.request.stream = false;  // a Batch answer comes whole
        Result<std::unique_ptr<llm::BodySource>> body =
            llm::BuildChatBody(*dialect, job.model.name, send.request);
        if (!body.ok()) {
          result.warnings.push_back(path + ": prompt '" + job.prompts[p].id +
                                    "': " + body.status().message());
          continue;
        }
        std::shared_ptr<const llm::BodySource> shared(std::move(body).value());
        const std::streampos before = out.tellp();
        Status written = llm::WriteBatchInputLine(send.task.custom_id, shared, out);
        if (!written.ok()) return written.WithPrefix(tmp);
        result.bytes += static_cast<int64_t>(out.tellp() - before);
        ++result.lines;
      }
    }
    if (result.lines > lines_before) ++result.items;
  }
  out.close();
  if (!out) return IoError(tmp + ": write failed");
  std::error_code ec;
  std::filesystem::rename(tmp, options.out_path, ec);
  if (ec) return IoError(options.out_path + ": " + ec.message());
  return result;
}

Result<ImportResult> ImportBatch(const ImportOptions& options) {
  const JobSpec* job = options.job;
  REEL_ASSIGN_OR_RETURN(const llm::Dialect* dialect, llm::DialectByName(options.dialect));
  std::ifstream in(options.results_path, std::ios::binary);
  if (!in) return NotFound(options.results_path + ": cannot read");
  REEL_ASSIGN_OR_RETURN(RunLock lock, LockFor(options.database));
  REEL_ASSIGN_OR_RETURN(storage::Store store, storage::Store::Open(options.database));
  storage::TaskStore tasks(store.database());
  ImportResult result;
  auto problem = [&](const std::string& text) {
    if (result.problems.size() < 20) result.problems.push_back(text);
  };
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++result.lines;
    const std::string where = options.results_path + ":" + std::to_string(number);
    Result<llm::BatchOutput> output = llm::ParseBatchOutputLine(line);
    if (!output.ok()) {
      ++result.bad;
      problem(where + ": " + output.status().message());
      continue;
    }
    REEL_ASSIGN_OR_RETURN(std::optional<storage::TaskRecord> task,
                          tasks.FindTask(output->custom_id));
    if (!task) {
      ++result.unknown;
      problem(where + ": custom_id '" + SafeUtf8(output->custom_id) +
              "' is no question of this database");
      continue;
    }
    const std::string line_id = !output->id.empty() ? output->id : output->request_id;
    if (task->status == storage::TaskStatus::kSucceeded) {
      ++result.already;
      continue;
    }
    if (!line_id.empty()) {
      REEL_ASSIGN_OR_RETURN(bool seen, tasks.HasBatchSend(task->id, line_id));
      if (seen) {
        ++result.already;
        continue;
      }
    }
    llm::ChatResult chat =
        llm::ChatResultFromBatchOutput(*output, *dialect, task->json_schema.value_or(""));
    // The prompt's kind checks the answer (jobs/prompt_kinds.h).
    const PromptSpec* prompt = nullptr;
    if (job != nullptr) {
      for (const PromptSpec& p : job->prompts) {
        if (p.id == task->prompt_id) prompt = &p;
      }
    }
    std::optional<std::string> checked_json;
    std::string check_failure;
    if (chat.ok() && prompt != nullptr && prompt->kind != PromptKind::kQuestion) {
      llm::ChapterTimeline timeline;
      Result<llm::ContextInput> input = LoadContextInput(store, task->item_id);
      if (input.ok()) {
        for (const llm::ContextFrame& f : input->frames) timeline.frame_times.push_back(f.time_s);
        if (input->duration_s > 0) timeline.duration_seconds = input->duration_s;
      }
      Result<std::optional<std::string>> check =
          CheckPromptAnswer(*prompt, chat.answer.content, timeline);
      if (check.ok()) {
        checked_json = *check;
      } else {
        check_failure = check.status().message();
      }
    }
    storage::SendRecord send;
    send.via = "batch";
    send.local_prompt_tokens = task->local_prompt_tokens;
    if (!chat.answer.model.empty()) send.model = chat.answer.model;
    REEL_ASSIGN_OR_RETURN(int64_t request_id, tasks.StartSend(task->id, send));
    storage::SendOutcome outcome = SendOutcomeOf(chat);
    outcome.server_request_id = line_id.empty() ? std::optional<std::string>() : line_id;
    if (!outcome.attempts) outcome.attempts = 1;
    if (chat.ok() && check_failure.empty()) {
      storage::AnswerRecord answer = AnswerRecordOf(chat);
      if (checked_json) answer.json_answer = *checked_json;
      if (job != nullptr) outcome.cost = AnswerCost(job->model, answer);
      REEL_RETURN_IF_ERROR(tasks.FinishSend(request_id, outcome, answer));
      ++result.answered;
    } else if (chat.ok()) {
      // Refused by its check, but answered (and billed): its usage and cost are the request's.
      AddUsage(chat, &outcome);
      if (job != nullptr) outcome.cost = AnswerCost(job->model, AnswerRecordOf(chat));
      outcome.outcome = std::string(kInvalidAnswerOutcome);
      outcome.error = std::string(kAnswerCheckFailed) + check_failure;
      REEL_RETURN_IF_ERROR(tasks.RefuseAnswer(request_id, outcome, AnswerRecordOf(chat)));
      ++result.failed;
    } else if (AnswerReceived(chat)) {  // refused by its schema: the answer is kept
      AddUsage(chat, &outcome);
      if (job != nullptr) outcome.cost = AnswerCost(job->model, AnswerRecordOf(chat));
      REEL_RETURN_IF_ERROR(tasks.RefuseAnswer(request_id, outcome, AnswerRecordOf(chat)));
      ++result.failed;
    } else {
      // The server's failure (storage::IsServerFailure) leaves the question waiting: the next
      // export writes it again.
      const bool servers = storage::IsServerFailure(outcome.outcome, outcome.http_status);
      REEL_RETURN_IF_ERROR(tasks.FailSend(request_id, outcome, /*requeue=*/servers));
      ++result.failed;
    }
  }
  if (in.bad()) return IoError(options.results_path + ": read failed");
  if (result.answered > 0) {
    Result<int64_t> indexed = store.IndexAnswerTimes();  // time references in the answers
    (void)indexed;
  }
  return result;
}

}  // namespace reel::jobs
