// reel query [--db FILE | --job JOB.yaml] "SQL" [--format table|csv|json|jsonl]
#include <cstdio>
#include <iostream>

#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/cli/table_output.h"
#include "storage/query.h"

namespace reel::cli {
namespace {

struct QueryFlags {
  DatabaseChoice database;
  std::string sql;
  std::string format = "table";
  size_t max_rows = 100000;
  size_t width = 60;
};

int RunQuery(const QueryFlags& flags) {
  Result<ResolvedDatabase> db = ResolveDatabase(flags.database);
  if (!db.ok()) {
    std::fprintf(stderr, "reel query: %s\n", db.status().message().c_str());
    return db.status().code() == ErrorCode::kNotFound ? kExitFailed : kExitUsage;
  }
  Result<OutputFormat> format = ParseOutputFormat(flags.format);
  if (!format.ok()) {
    std::fprintf(stderr, "reel query: %s\n", format.status().message().c_str());
    return kExitUsage;
  }
  Result<storage::Table> table = storage::Query(db->path, flags.sql, {.max_rows = flags.max_rows});
  if (!table.ok()) {
    std::fprintf(stderr, "reel query: %s\n", table.status().message().c_str());
    return table.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  WriteTable(std::cout, *table, *format, {.max_cell_width = flags.width});
  std::cout.flush();
  if (table->truncated && *format != OutputFormat::kTable) {
    std::fprintf(stderr, "reel query: only the first %zu rows were printed (--max-rows)\n",
                 flags.max_rows);
  }
  return kExitOk;
}

}  // namespace

void AddQueryCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<QueryFlags>();
  CLI::App* cmd = app.add_subcommand(
      "query", "Run one read-only SQL statement on a results database and print the rows");
  cmd->footer(
      "The database is opened read-only: statements that would write are refused.\n"
      "Tables and views: jobs, runs, items, frames, segments, blobs, events, item_summary,\n"
      "job_summary, failures, answers, latest_answers (docs/database.md).\n"
      "Example: reel query --db results.db \"SELECT path, status FROM items\" --format csv\n"
      "Exit status: 0 ok, 1 no database / database error, 2 bad SQL or options.");
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_option("SQL", flags->sql, "One SELECT (or other read-only) statement")->required();
  cmd->add_option("--format", flags->format,
                  "table (aligned, long cells cut), csv (RFC 4180), json (array of objects), "
                  "jsonl (one object per line)")
      ->check(CLI::IsMember({"table", "csv", "json", "jsonl"}))
      ->default_val("table");
  cmd->add_option("--max-rows", flags->max_rows, "Print at most this many rows")
      ->default_val(100000)
      ->check(CLI::PositiveNumber);
  cmd->add_option("--width", flags->width,
                  "Table format: cut cells to this many characters (0: never)")
      ->default_val(60);
  cmd->callback([flags, &exit_code] { exit_code = RunQuery(*flags); });
}

}  // namespace reel::cli
