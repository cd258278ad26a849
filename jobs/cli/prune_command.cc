// reel prune [--db FILE|--ask-db|--job JOB] [--yes] [--format F]: the items whose input file is
// gone, listed; with --yes dropped with everything stored for them (storage/prune.h).
#include <cstdio>
#include <iostream>

#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/cli/table_output.h"
#include "jobs/run_lock.h"
#include "storage/prune.h"

namespace reel::cli {
namespace {

struct PruneFlags {
  DatabaseChoice database;
  bool yes = false;
  std::string format = "table";
};

std::string Bytes(int64_t n) {
  char buf[32];
  if (n >= (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
  }
  return buf;
}

int RunPrune(const PruneFlags& flags) {
  Result<ResolvedDatabase> db = ResolveDatabase(flags.database);
  if (!db.ok()) {
    std::fprintf(stderr, "reel prune: %s\n", db.status().message().c_str());
    return db.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  Result<OutputFormat> format = ParseOutputFormat(flags.format);
  if (!format.ok()) {
    std::fprintf(stderr, "reel prune: %s\n", format.status().message().c_str());
    return kExitUsage;
  }
  if (Status ready = ReadyForReading(db->path); !ready.ok()) {
    std::fprintf(stderr, "reel prune: %s\n", ready.message().c_str());
    return kExitFailed;
  }
  // Nothing is dropped under a running `reel run`: take its lock (listing needs none).
  std::optional<jobs::RunLock> lock;
  if (flags.yes) {
    Result<jobs::RunLock> taken = jobs::RunLock::TryAcquire(db->path);
    if (!taken.ok()) {
      std::fprintf(stderr, "reel prune: %s\n", taken.status().message().c_str());
      return taken.status().code() == ErrorCode::kUnavailable ? kExitLocked : kExitFailed;
    }
    lock.emplace(std::move(taken).value());
  }
  Result<storage::Database> database = storage::Database::Open(db->path);
  if (!database.ok()) {
    std::fprintf(stderr, "reel prune: %s\n", database.status().message().c_str());
    return kExitFailed;
  }
  Result<std::vector<storage::GoneItem>> gone = storage::ListGoneItems(*database, db->job_name);
  if (!gone.ok()) {
    std::fprintf(stderr, "reel prune: %s: %s\n", db->path.c_str(), gone.status().message().c_str());
    return kExitFailed;
  }
  storage::Table table;
  table.columns = {"job", "item_id", "path", "kind", "answers"};
  std::vector<int64_t> ids;
  int64_t answers = 0;
  for (const storage::GoneItem& item : *gone) {
    table.rows.push_back({Text(item.job), storage::Value(item.id), Text(item.path), Text(item.kind),
                          storage::Value(item.answers)});
    ids.push_back(item.id);
    answers += item.answers;
  }
  WriteTable(std::cout, table, *format, {.max_cell_width = 0});
  std::cout.flush();
  if (ids.empty()) {
    std::fprintf(stderr, "reel prune: %s: every item's input file is there; nothing to drop\n",
                 db->path.c_str());
    return kExitOk;
  }
  if (!flags.yes) {
    std::fprintf(stderr,
                 "reel prune: %s: %zu item(s) whose input file is gone, with %lld stored "
                 "answer(s); `reel prune --yes` drops them and everything stored for them\n",
                 db->path.c_str(), ids.size(), static_cast<long long>(answers));
    return kExitOk;
  }
  Result<storage::DropCounts> dropped = storage::DropItems(*database, ids);
  if (!dropped.ok()) {
    std::fprintf(stderr, "reel prune: %s: nothing dropped: %s\n", db->path.c_str(),
                 dropped.status().message().c_str());
    return kExitFailed;
  }
  std::fprintf(stderr,
               "reel prune: %s: dropped %lld item(s), %lld answer(s), %lld stored picture(s) "
               "and feature(s) no other item uses (%s)\n",
               db->path.c_str(), static_cast<long long>(dropped->items),
               static_cast<long long>(dropped->answers), static_cast<long long>(dropped->blobs),
               Bytes(dropped->blob_bytes).c_str());
  return kExitOk;
}

}  // namespace

void AddPruneCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PruneFlags>();
  CLI::App* cmd = app.add_subcommand(
      "prune", "List the items whose input file is gone; --yes drops them and their results");
  cmd->footer(
      "An item whose input file was deleted or moved keeps its results; `reel results`, `reel\n"
      "show`, `reel status` and the report mark it. `reel prune` lists such items (job, item_id,\n"
      "path, kind, answers); `reel prune --yes` drops them with their frames, transcripts,\n"
      "contexts, questions and answers, and the stored pictures and features no other item\n"
      "uses (the file does not shrink: run `sqlite3 FILE VACUUM` for that). A moved file is\n"
      "a new item at its new path.\n"
      "Exit status: 0 ok (also nothing to drop), 1 no database or a database error, 2 bad\n"
      "options, 4 a run holds the database (--yes).");
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_flag("--yes", flags->yes, "Drop the listed items (without it, only list them)");
  cmd->add_option("--format", flags->format, "table, csv, json, jsonl or md")
      ->check(CLI::IsMember({"table", "csv", "json", "jsonl", "md"}))
      ->default_val("table");
  cmd->callback([flags, &exit_code] { exit_code = RunPrune(*flags); });
}

}  // namespace reel::cli
