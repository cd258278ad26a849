// reel results [--db FILE] [--job JOB.yaml|NAME] [--prompt ID] [--items] [--format F]
#include <cstdio>
#include <iostream>

#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/cli/gone_inputs.h"
#include "jobs/cli/table_output.h"
#include "storage/query.h"
#include "storage/store.h"

namespace reel::cli {
namespace {

struct ResultsFlags {
  DatabaseChoice database;
  std::optional<std::string> prompt;
  bool items = false;
  std::optional<std::string> status;
  std::string format = "table";
  size_t width = 60;
};

int RunResults(const ResultsFlags& flags) {
  Result<ResolvedDatabase> db = ResolveDatabase(flags.database);
  if (!db.ok()) {
    std::fprintf(stderr, "reel results: %s\n", db.status().message().c_str());
    return db.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  // Brings an older file to the current schema (latest_answers.question).
  if (Status ready = ReadyForReading(db->path); !ready.ok()) {
    std::fprintf(stderr, "reel results: %s\n", ready.message().c_str());
    return kExitFailed;
  }
  Result<OutputFormat> format = ParseOutputFormat(flags.format);
  if (!format.ok()) {
    std::fprintf(stderr, "reel results: %s\n", format.status().message().c_str());
    return kExitUsage;
  }
  std::vector<std::string> where;  // conditions on the bound values ?1, ?2, ...
  storage::QueryOptions query;
  auto bound = [&](const std::string& column, const std::string& value) {
    query.parameters.emplace_back(value);
    where.push_back(column + " = ?" + std::to_string(query.parameters.size()));
  };
  if (db->job_name) bound("job", *db->job_name);
  bool answers = false;
  if (!flags.items) {
    if (flags.prompt) {
      answers = true;
    } else {
      Result<storage::Table> count =
          storage::Query(db->path, "SELECT count(*) FROM latest_answers");
      answers = count.ok() && !count->rows.empty() &&
                std::get_if<int64_t>(&count->rows[0][0]) != nullptr &&
                std::get<int64_t>(count->rows[0][0]) > 0;
    }
  }
  std::string sql;
  if (answers) {
    if (flags.prompt) bound("prompt_id", *flags.prompt);
    sql =
        "SELECT job, item_id, path, prompt_id, question, model, finish_reason, "
        "completion_tokens, created_at, content FROM latest_answers";
  } else {
    if (flags.status) bound("status", *flags.status);
    sql =
        "SELECT job, item_id, path, kind, status, frames, round(duration_seconds, 3) AS "
        "duration_seconds, segments, answers, attempts, error FROM item_summary";
  }
  for (size_t i = 0; i < where.size(); ++i) sql += (i ? " AND " : " WHERE ") + where[i];
  sql += answers ? " ORDER BY job, path, prompt_id" : " ORDER BY job, path";
  Result<storage::Table> table = storage::Query(db->path, sql, query);
  if (!table.ok()) {
    std::fprintf(stderr, "reel results: %s\n", table.status().message().c_str());
    return kExitFailed;
  }
  if (*format == OutputFormat::kTable || *format == OutputFormat::kMarkdown) {
    MarkGoneInputs(*table);
  }
  WriteTable(std::cout, *table, *format, {.max_cell_width = flags.width});
  std::cout.flush();
  return kExitOk;
}

}  // namespace

void AddResultsCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ResultsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "results", "List the results: answers once the model has given some, else the items");
  cmd->footer(
      "Items view (item_summary): job, item_id, path, kind, status, frames, duration_seconds,\n"
      "segments, answers, attempts, error. Answers view (latest_answers, the newest answer\n"
      "per item and prompt): job, item_id, path, prompt_id, question (as asked), model,\n"
      "finish_reason, completion_tokens, created_at, content. `reel show ITEM` prints an\n"
      "item's every answer in full, with its question. In table and md formats the path of an\n"
      "item whose input file is gone starts with [deleted] (`reel prune` drops such items).\n"
      "Exit status: 0 ok, 1 no database or unreadable, 2 bad options.");
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_option("--prompt", flags->prompt, "Answers to this prompt id only");
  cmd->add_flag("--items", flags->items, "List items even when answers exist");
  cmd->add_option("--status", flags->status, "Items view: only items with this status")
      ->check(CLI::IsMember({"pending", "running", "done", "failed"}));
  cmd->add_option("--format", flags->format,
                  "table, csv, json, jsonl or md (a Markdown table, cells whole)")
      ->check(CLI::IsMember({"table", "csv", "json", "jsonl", "md"}))
      ->default_val("table");
  cmd->add_option("--width", flags->width, "Table format: cut cells to this many characters")
      ->default_val(60);
  cmd->callback([flags, &exit_code] { exit_code = RunResults(*flags); });
}

}  // namespace reel::cli
