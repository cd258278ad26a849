#include "jobs/model/batch_files.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <unordered_map>

#include "base/utf8.h"
#include "jobs/context/group_context.h"
#include "jobs/model/model_plan.h"
#include "jobs/model/model_run.h"
#include "jobs/model/request_setup.h"
#include "jobs/run_lock.h"
#include "jobs/spec/prompt_kinds.h"
#include "llm/client/batch_lines.h"
#include "llm/client/dialect.h"
#include "llm/client/http_client.h"
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

// The lines of a stream, each without its "\n"; a line longer than `max_bytes` is skipped
// without being held (only its length is counted), so one huge line costs a buffer, not memory
// in proportion to it.
class BoundedLineReader {
 public:
  BoundedLineReader(std::istream& in, int64_t max_bytes)
      : in_(in), max_bytes_(static_cast<uint64_t>(std::max<int64_t>(max_bytes, 0))) {}

  enum class Outcome { kLine, kTooLong, kEnd };

  // kLine: `line` holds the next line. kTooLong: the next line was longer than the limit;
  // `length` says how long. kEnd: no more lines (or a read error: see bad()).
  Outcome Next(std::string& line, uint64_t& length) {
    line.clear();
    length = 0;
    bool any = false;
    while (true) {
      if (pos_ == size_ && !Fill()) {
        if (!any) return Outcome::kEnd;
        return length > max_bytes_ ? Outcome::kTooLong : Outcome::kLine;
      }
      any = true;
      const char* start = buffer_.data() + pos_;
      const size_t available = size_ - pos_;
      const void* newline = std::memchr(start, '\n', available);
      const size_t take = newline != nullptr
                              ? static_cast<size_t>(static_cast<const char*>(newline) - start)
                              : available;
      length += take;
      if (length <= max_bytes_) {
        // A long line gets room for the longest allowed once (pages are touched only as they
        // are written), instead of doubling: a line near the limit never costs twice the limit.
        if (length > line.capacity() && line.size() >= kReserveAfter && max_bytes_ <= kMaxReserve) {
          line.reserve(max_bytes_);
        }
        line.append(start, take);
      } else if (!line.empty()) {
        std::string().swap(line);  // over the limit: let go of what was kept
      }
      pos_ += take;
      if (newline != nullptr) {
        ++pos_;
        return length > max_bytes_ ? Outcome::kTooLong : Outcome::kLine;
      }
    }
  }

  bool bad() const { return in_.bad(); }

 private:
  bool Fill() {
    buffer_.resize(size_t{1} << 16);
    in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    size_ = static_cast<size_t>(in_.gcount());
    pos_ = 0;
    return size_ > 0;
  }

  static constexpr size_t kReserveAfter = size_t{1} << 20;
  static constexpr uint64_t kMaxReserve = uint64_t{1} << 30;

  std::istream& in_;
  const uint64_t max_bytes_;
  std::vector<char> buffer_;
  size_t pos_ = 0, size_ = 0;
};

}  // namespace

const int64_t ImportOptions::kDefaultMaxImportLineBytes =
    llm::HttpClient::Options{}.max_response_bytes;

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
    // A file read into a question over several files (context.group) is not asked about alone:
    // the group's item has the one request over all of them.
    if (IsGroupMember(job, UnescapeInvalidUtf8(path))) continue;
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
  // Requests left 'sent' by an import or a run that was killed (no process holds the lock):
  // their questions wait again, so this file's lines for them are stored now.
  REEL_ASSIGN_OR_RETURN(result.interrupted, tasks.RequeueInterrupted());
  auto problem = [&](const std::string& text) {
    if (result.problems.size() < 20) result.problems.push_back(text);
  };
  std::unordered_map<std::string, int64_t> first_lines;  // custom_id -> the line it was first on
  BoundedLineReader reader(in, options.max_line_bytes);
  std::string line;
  uint64_t length = 0;
  int64_t number = 0;
  while (true) {
    const BoundedLineReader::Outcome next = reader.Next(line, length);
    if (next == BoundedLineReader::Outcome::kEnd) break;
    ++number;
    const std::string where = options.results_path + ":" + std::to_string(number);
    if (next == BoundedLineReader::Outcome::kTooLong) {
      ++result.lines;
      ++result.too_long;
      problem(where + ": a line of " + std::to_string(length) + " bytes, longer than an answer " +
              "may be (" + std::to_string(options.max_line_bytes) + " bytes): not read");
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++result.lines;
    Result<llm::BatchOutput> output = llm::ParseBatchOutputLine(line);
    if (!output.ok()) {
      ++result.bad;
      problem(where + ": " + output.status().message());
      continue;
    }
    std::string().swap(line);  // parsed: the line's text is not needed any more
    const auto [first, is_new] = first_lines.try_emplace(output->custom_id, number);
    const int64_t first_line = first->second;
    REEL_ASSIGN_OR_RETURN(std::optional<storage::TaskRecord> task,
                          tasks.FindTask(output->custom_id));
    if (!task) {
      ++result.unknown;
      problem(where + ": custom_id '" + SafeUtf8(output->custom_id) +
              "' is no question of this database");
      continue;
    }
    const std::string line_id = !output->id.empty() ? output->id : output->request_id;
    // A custom_id an earlier line of this file has: ignored once its question is answered (or
    // this very line was stored), imported when the earlier line stored no answer.
    const std::string repeats = where + ": custom_id '" + SafeUtf8(output->custom_id) +
                                "' repeats line " + std::to_string(first_line);
    bool stored_before = task->status == storage::TaskStatus::kSucceeded;
    if (!stored_before && !line_id.empty()) {
      REEL_ASSIGN_OR_RETURN(stored_before, tasks.HasBatchSend(task->id, line_id));
    }
    if (stored_before) {
      if (is_new) {
        ++result.already;
      } else {
        ++result.duplicates;
        problem(repeats + ": its question has an answer (or this line was stored), ignored");
      }
      continue;
    }
    if (!is_new) problem(repeats + ", which stored no answer: this line is imported");
    llm::ChatResult chat =
        llm::ChatResultFromBatchOutput(*output, *dialect, task->json_schema.value_or(""));
    // The prompt's kind checks the answer (jobs/spec/prompt_kinds.h).
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
      Result<llm::ContextInput> input = LoadContextInput(store, task->item_id, job);
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
      if (task->step == storage::TaskStep::kMap) ++result.segment_answers;
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
      if (chat.outcome == llm::ChatOutcome::kTooLong) ++result.refit;
      const bool servers = storage::IsServerFailure(outcome.outcome, outcome.http_status);
      REEL_RETURN_IF_ERROR(tasks.FailSend(request_id, outcome, /*requeue=*/servers));
      ++result.failed;
    }
  }
  if (reader.bad()) return IoError(options.results_path + ": read failed");
  if (result.answered > 0) {
    Result<int64_t> indexed = store.IndexAnswerTimes();  // time references in the answers
    (void)indexed;
  }
  return result;
}

}  // namespace reel::jobs
