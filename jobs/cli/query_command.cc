// reel query [--db FILE | --job JOB.yaml] "SQL" [--format table|csv|json|jsonl]
#include <cstdio>
#include <iostream>
#include <string_view>

#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/cli/table_output.h"
#include "jobs/spec/job_values.h"
#include "storage/query.h"

namespace reel::cli {
namespace {

struct QueryFlags {
  DatabaseChoice database;
  std::string sql;
  std::string format = "table";
  size_t max_rows = 100000;
  size_t width = 60;
  std::string timeout = "60s";
  std::string max_memory = "1GiB";
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
  std::optional<double> timeout = jobs::ParseSeconds(flags.timeout);
  if (!timeout || *timeout < 0) {
    std::fprintf(stderr,
                 "reel query: --timeout must be a time (e.g. 30, 90s, 5m; 0 for none), got '%s'\n",
                 flags.timeout.c_str());
    return kExitUsage;
  }
  std::optional<int64_t> max_memory = jobs::ParseByteSize(flags.max_memory);
  if (!max_memory || *max_memory < 0) {
    std::fprintf(stderr,
                 "reel query: --max-memory must be a size (e.g. 512MiB, 2GiB; 0 for none), got "
                 "'%s'\n",
                 flags.max_memory.c_str());
    return kExitUsage;
  }
  Result<storage::Table> table = storage::Query(
      db->path, flags.sql,
      {.max_rows = flags.max_rows, .timeout_s = *timeout, .max_memory_bytes = *max_memory});
  if (!table.ok()) {
    std::string_view message = table.status().message();
    if (message.starts_with("query: ")) message.remove_prefix(7);  // "reel query: " says it
    std::fprintf(stderr, "reel query: %.*s\n", static_cast<int>(message.size()), message.data());
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

// `text` broken into lines of at most `width` characters, at spaces.
std::string WrapText(const std::string& text, size_t width) {
  std::string out;
  size_t line = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t space = text.find(' ', at);
    if (space == std::string::npos) space = text.size();
    const std::string word = text.substr(at, space - at);
    if (line > 0 && line + 1 + word.size() > width) {
      out += "\n";
      line = 0;
    } else if (line > 0) {
      out += " ";
      ++line;
    }
    out += word;
    line += word.size();
    at = space + 1;
  }
  return out;
}

}  // namespace

void AddQueryCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<QueryFlags>();
  CLI::App* cmd = app.add_subcommand(
      "query", "Run one read-only SQL statement on a results database and print the rows");
  AddDatabaseOptions(cmd, &flags->database);
  // Generated from the schema (made in memory, only when the help is shown), so it names every
  // table and view this build has. Set after AddDatabaseOptions, which reads the footer text so
  // far; CLI11 prints a footer function's text before that text (the database rule).
  cmd->footer([]() -> std::string {
    std::string tables;
    std::string views;
    if (auto names = storage::SchemaTablesAndViews(); names.ok()) {
      for (const auto& [type, name] : *names) {
        std::string& list = type == "view" ? views : tables;
        list += (list.empty() ? "" : ", ") + name;
      }
    }
    return "The database is opened read-only: statements that would write are refused.\n" +
           WrapText("Tables: " + tables + ".", 90) + "\n" +
           WrapText("Views: " + views + " (docs/database.md).", 90) +
           "\n"
           "Example: reel query --db results.db \"SELECT path, status FROM items\" --format csv\n"
           "Limits: a statement is stopped after --timeout (default 60s) or once it needs more\n"
           "than --max-memory (default 1GiB; SQLite's heap and the rows kept for printing); 0 "
           "turns\n"
           "either off, e.g. for a long report run from a script.\n"
           "Exit status: 0 ok, 1 no database / database error / a limit was hit, 2 bad SQL or\n"
           "options.\n";
  });
  cmd->add_option("SQL", flags->sql, "One SELECT (or other read-only) statement")->required();
  cmd->add_option("--format", flags->format,
                  "table (aligned, long cells cut), csv (RFC 4180), json (array of objects), "
                  "jsonl (one object per line), md (a Markdown table, cells whole)")
      ->check(CLI::IsMember({"table", "csv", "json", "jsonl", "md"}))
      ->default_val("table");
  cmd->add_option("--max-rows", flags->max_rows, "Print at most this many rows")
      ->default_val(100000)
      ->check(CLI::PositiveNumber);
  cmd->add_option("--width", flags->width,
                  "Table format: cut cells to this many characters (0: never)")
      ->default_val(60);
  cmd->add_option("--timeout", flags->timeout,
                  "Stop the statement after this long (seconds, or 90s, 5m; 0: no limit)")
      ->default_val("60s");
  cmd->add_option("--max-memory", flags->max_memory,
                  "Stop the statement once it needs more memory than this (512MiB, 2GiB; 0: no "
                  "limit)")
      ->default_val("1GiB");
  cmd->callback([flags, &exit_code] { exit_code = RunQuery(*flags); });
}

}  // namespace reel::cli
