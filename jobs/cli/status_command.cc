// reel status [--db FILE] [--job JOB.yaml|NAME] [--format table|json]
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string_view>

#include "base/terminal_text.h"
#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/cli/table_output.h"
#include "jobs/json_output.h"
#include "jobs/model/usage_report.h"
#include "jobs/run/runner.h"
#include "jobs/run_lock.h"
#include "storage/database.h"
#include "storage/prune.h"
#include "storage/store.h"
#include "storage/tasks.h"

namespace reel::cli {
namespace {

struct StatusFlags {
  DatabaseChoice database;
  std::string format = "table";
  int runs = 5;
  int failures = 10;
};

// Stored text in the human format: control characters shown as `\xHH` (base/terminal_text.h),
// so an error message quoting a server or a file cannot drive the terminal.
std::string Shown(std::string_view text) { return EscapeControlCharacters(text); }

std::string ThisHost() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "";
  return buffer;
}

// Why a run the database still calls 'running' is not running any more, or nullopt if it is.
// A live run holds the database's lock (jobs/run_lock.h) for its whole life; on this host its
// pid says more.
std::optional<std::string> GoneReason(const storage::RunRecord& run,
                                      const std::optional<jobs::LockOwner>& holder) {
  if (run.status != storage::RunStatus::kRunning) return std::nullopt;
  if (holder && holder->pid == run.pid && holder->host == run.host) return std::nullopt;
  std::string why;
  if (run.host == ThisHost()) {
    const bool exists =
        run.pid > 0 && (kill(static_cast<pid_t>(run.pid), 0) == 0 || errno == EPERM);
    why = exists ? "process " + std::to_string(run.pid) +
                       " on this host no longer runs it (it does not hold the database's lock)"
                 : "process " + std::to_string(run.pid) +
                       " is gone from this host (killed or crashed)";
  } else {
    why = "no process holds the database's lock (the run was on " + run.host +
          "): it ended without finishing";
  }
  return "not running: " + why +
         "; the next `reel run` marks it interrupted and resumes its unfinished items";
}

storage::Table RunsTable(const std::vector<storage::RunRecord>& runs,
                         const std::optional<jobs::LockOwner>& holder) {
  storage::Table table;
  table.columns = {"run",   "job_id", "status", "started_at", "finished_at", "host",   "pid",
                   "shard", "items",  "done",   "skipped",    "failed",      "frames", "message"};
  for (const storage::RunRecord& r : runs) {
    std::optional<std::string> message = r.message;
    if (std::optional<std::string> gone = GoneReason(r, holder)) message = gone;
    table.rows.push_back(
        {r.id, r.job_id, Text(storage::RunStatusName(r.status)), Text(r.started_at),
         r.finished_at ? storage::Value(*r.finished_at) : storage::Value(), Text(r.host), r.pid,
         Text(std::to_string(r.shard_index) + "/" + std::to_string(r.shard_count)),
         r.counters.items_seen, r.counters.items_done, r.counters.items_skipped,
         r.counters.items_failed, r.counters.frames,
         message ? storage::Value(*message) : storage::Value()});
  }
  return table;
}

storage::Table PartialTable(const std::vector<storage::PartialItem>& items) {
  storage::Table table;
  table.columns = {"time",     "job",     "item_id",       "path",      "requested",
                   "returned", "missing", "decode_errors", "truncation"};
  for (const storage::PartialItem& p : items) {
    table.rows.push_back({Text(p.time), Text(p.job), p.item_id, Text(p.path), p.requested,
                          p.returned, p.missing, p.decode_errors,
                          p.truncation.empty() ? storage::Value() : Text(p.truncation)});
  }
  return table;
}

// Items done with a partial sample, as a list like the failures.
void WritePartialList(std::ostream& out, const std::vector<storage::PartialItem>& items) {
  for (const storage::PartialItem& p : items) {
    out << "  " << Shown(p.time) << "  job " << Shown(p.job) << "\n    " << Shown(p.path)
        << "\n    " << p.returned << " of " << p.requested << " chosen frames stored; " << p.missing
        << " could not be decoded, " << p.decode_errors << " decoding errors";
    if (!p.truncation.empty()) out << "; " << Shown(p.truncation);
    out << "\n";
  }
}

storage::Table FailuresTable(const std::vector<storage::FailureRecord>& failures) {
  storage::Table table;
  table.columns = {"time", "job", "path", "stage", "error"};
  for (const storage::FailureRecord& f : failures) {
    table.rows.push_back({Text(f.time), Text(f.job), Text(f.path), Text(f.stage), Text(f.error)});
  }
  return table;
}

// Failures as a list rather than a table: paths and messages are long, and a table cell would
// cut exactly the part that says what went wrong. The message's own leading "PATH: " repeats the
// path line, so it is dropped there.
void WriteFailureList(std::ostream& out, const std::vector<storage::FailureRecord>& failures) {
  for (const storage::FailureRecord& f : failures) {
    out << "  " << Shown(f.time) << "  job " << Shown(f.job) << "  " << Shown(f.stage);
    if (f.prompt_id) out << " " << Shown(*f.prompt_id);
    out << "\n    " << Shown(f.path) << "\n";
    std::string_view error = f.error;
    const std::string prefix = f.path + ": ";
    if (error.starts_with(prefix)) error.remove_prefix(prefix.size());
    out << "    " << Shown(error) << "\n";
  }
}

int RunStatus(const StatusFlags& flags) {
  Result<ResolvedDatabase> resolved = ResolveDatabase(flags.database);
  if (!resolved.ok()) {
    std::fprintf(stderr, "reel status: %s\n", resolved.status().message().c_str());
    return resolved.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  const std::string* path = &resolved->path;
  Result<storage::Database> db = storage::Database::OpenReadOnly(*path);
  if (!db.ok()) {
    // A run that has just started may still be creating the file: say who, not only "no tables".
    if (db.status().code() == ErrorCode::kNotFound && jobs::RunLock::IsHeld(*path)) {
      jobs::LockOwner owner = jobs::RunLock::ReadOwner(*path).value_or(jobs::LockOwner{});
      std::fprintf(stderr,
                   "reel status: %s: a run is creating this database right now (%s); try again "
                   "in a moment\n",
                   path->c_str(), owner.Describe().c_str());
      return kExitFailed;
    }
    std::fprintf(stderr, "reel status: %s\n", db.status().message().c_str());
    return kExitFailed;
  }
  storage::Store store(std::move(db).value());
  Result<storage::StatusSummary> summary = store.Summarize({.job = resolved->job_name,
                                                            .max_runs = flags.runs,
                                                            .max_failures = flags.failures,
                                                            .max_partial = flags.failures});
  if (!summary.ok()) {
    std::fprintf(stderr, "reel status: %s\n", summary.status().message().c_str());
    return kExitFailed;
  }
  // The model's questions (tasks) and the newest run report, for the job (or all jobs).
  std::optional<int64_t> job_id;
  if (resolved->job_name) {
    Result<std::optional<storage::JobRecord>> job = store.FindJob(*resolved->job_name);
    if (job.ok() && *job) job_id = (*job)->id;
  }
  storage::TaskStore tasks(store.database());
  Result<storage::TaskCounts> questions = tasks.CountTasks(job_id);
  Result<std::optional<std::pair<int64_t, std::string>>> latest_report =
      tasks.LatestRunReport(job_id);
  std::optional<jobs::RunReport> report;
  int64_t report_run = 0;
  if (latest_report.ok() && *latest_report) {
    report = jobs::RunReport::FromJson((*latest_report)->second);
    report_run = (*latest_report)->first;
  }
  // Items whose input file was deleted or moved since (`reel prune` lists and drops them).
  Result<std::vector<storage::GoneItem>> gone =
      storage::ListGoneItems(store.database(), resolved->job_name);
  const size_t gone_count = gone.ok() ? gone->size() : 0;
  const storage::ItemStatusCounts& items = summary->items;
  const int64_t total = items.pending + items.running + items.done + items.failed;
  std::optional<jobs::LockOwner> holder;
  if (jobs::RunLock::IsHeld(*path)) {
    holder = jobs::RunLock::ReadOwner(*path).value_or(jobs::LockOwner{});
  }

  if (flags.format == "json") {
    auto rows = [](const storage::Table& t) {
      std::ostringstream out;
      WriteTable(out, t, OutputFormat::kJson);
      return nlohmann::json::parse(out.str());
    };
    nlohmann::json j = {
        {"database", DisplayPath(*path)},
        {"items",
         {{"total", total},
          {"pending", items.pending},
          {"running", items.running},
          {"done", items.done},
          {"partial", items.partial},
          {"failed", items.failed},
          {"input_gone", gone_count}}},
        {"runs", rows(RunsTable(summary->recent_runs, holder))},
        {"failures", rows(FailuresTable(summary->recent_failures))},
        {"partial", rows(PartialTable(summary->recent_partial))},
        {"running_now", holder ? nlohmann::json(holder->Describe()) : nlohmann::json(nullptr)}};
    if (questions.ok()) {
      j["questions"] = {{"answered", questions->succeeded},
                        {"failed", questions->failed},
                        {"waiting", questions->waiting},
                        {"sent", questions->sent}};
    }
    if (report) {
      j["model_report"] = nlohmann::json::parse(report->ToJson());
      j["model_report"]["run"] = report_run;
    }
    std::cout << jobs::DumpJson(j, 2) << "\n";
    return kExitOk;
  }
  std::cout << "Database: " << Shown(DisplayPath(*path)) << "\n";
  if (holder) std::cout << "Running now: " << Shown(holder->Describe()) << "\n";
  std::cout << "\nItems: " << total << " (done " << items.done << ", failed " << items.failed
            << ", pending " << items.pending << ", running " << items.running << ")\n";
  if (gone_count > 0) {
    std::cout << "  " << gone_count
              << (gone_count > 1 ? " items' input files are" : " item's input file is")
              << " gone (deleted or moved): `reel prune` lists such items, `reel prune --yes` "
                 "drops them\n";
  }
  if (items.partial > 0) {
    std::cout << "  " << items.partial << " of the done items "
              << (items.partial > 1 ? "have" : "has")
              << " a partial sample (a damaged or truncated video; listed below)\n";
  }
  if (questions.ok() &&
      questions->succeeded + questions->failed + questions->waiting + questions->sent > 0) {
    std::cout << "Questions to the model: " << questions->succeeded << " answered, "
              << questions->failed << " failed, " << questions->waiting + questions->sent
              << " waiting for a model\n";
    // The newest run found the server unreachable: it was set, so say that, not how to set it.
    const storage::RunRecord* latest =
        summary->recent_runs.empty() ? nullptr : &summary->recent_runs.front();
    const bool unreachable = latest != nullptr && latest->message &&
                             latest->message->find(jobs::kModelUnreachable) != std::string::npos;
    const bool server_failed = latest != nullptr && latest->message &&
                               latest->message->find("model server") != std::string::npos;
    if (questions->waiting + questions->sent > 0 && !holder) {
      if (unreachable || server_failed) {
        std::cout << "  run " << latest->id
                  << (unreachable ? " could not reach the model server"
                                  : " did not get every answer from the model server")
                  << " (below); the next run that reaches it asks them\n";
      } else {
        std::cout << "  `reel export --db " << Shown(DisplayPath(*path))
                  << " --format openai-batch OUT.jsonl` writes them for a batch run; or run the "
                     "job with model.endpoint (REEL_MODEL_URL) set\n";
      }
    }
  }
  if (report && report->requests > 0) {
    std::cout << "\nModel report of run " << report_run << ":\n";
    for (const std::string& line : report->Lines()) std::cout << "  " << Shown(line) << "\n";
  }
  for (const storage::RunRecord& run : summary->recent_runs) {
    if (std::optional<std::string> gone = GoneReason(run, holder)) {
      std::cout << "\nRun " << run.id << " is marked running but is " << Shown(*gone) << ".\n";
    }
  }
  std::cout << "\nRecent runs (newest first):\n";
  constexpr size_t kMessageWidth = 40;
  WriteTable(std::cout, RunsTable(summary->recent_runs, holder), OutputFormat::kTable,
             {.max_cell_width = kMessageWidth, .row_count = false});
  // The table cuts long messages, which say what went wrong: those in full.
  for (const storage::RunRecord& run : summary->recent_runs) {
    if (run.message && run.message->size() > kMessageWidth) {
      std::cout << "  run " << run.id << ": " << SafeUtf8(*run.message) << "\n";
    }
  }
  if (summary->recent_failures.empty()) {
    std::cout << "\nNo failures.\n";
  } else {
    std::cout << "\nLatest failures (newest first; `reel run --retry-failed` retries them):\n";
    WriteFailureList(std::cout, summary->recent_failures);
  }
  if (!summary->recent_partial.empty()) {
    std::cout << "\nDone with a partial sample (newest first; the frames that could be decoded "
                 "are stored):\n";
    WritePartialList(std::cout, summary->recent_partial);
  }
  return kExitOk;
}

}  // namespace

void AddStatusCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<StatusFlags>();
  CLI::App* cmd = app.add_subcommand(
      "status", "Summarise a results database: recent runs, items by status, latest failures");
  cmd->footer("Exit status: 0 ok, 1 no database or unreadable.");
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_option("--format", flags->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_val("table");
  cmd->add_option("--runs", flags->runs, "How many recent runs to show")->default_val(5);
  cmd->add_option("--failures", flags->failures, "How many failures to show")->default_val(10);
  cmd->callback([flags, &exit_code] { exit_code = RunStatus(*flags); });
}

}  // namespace reel::cli
