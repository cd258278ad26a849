// reel search [--db FILE] [--job JOB.yaml|NAME] "words" [--limit N] [--fts] [--format F]
#include <cstdio>
#include <iostream>
#include <set>

#include "base/clock.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/cli/table_output.h"
#include "storage/database.h"
#include "storage/store.h"

namespace reel::cli {
namespace {

struct SearchFlags {
  DatabaseChoice database;
  std::string query;
  int limit = 20;
  bool fts = false;
  bool answers_only = false;
  bool segments_only = false;
  std::string format = "table";
  size_t width = 80;
};

// An answer hit's time references that the snippet shows, with the frame each one means:
// "01:15 -> frame 75 (0:01:15.000); ..."; null when there are none.
storage::Value FramesMeant(const storage::SearchHit& hit) {
  std::string text;
  // An answer that names the same time more than once links it once.
  std::set<std::string> shown;
  for (const storage::AnswerTimeRecord& t : hit.times) {
    std::string link = t.text + " -> ";
    if (t.frame_index && t.frame_seconds) {
      link += "frame " + std::to_string(*t.frame_index) + " (" + MediaClock(*t.frame_seconds) + ")";
    } else {
      link += "outside the item";
    }
    if (!shown.insert(link).second) continue;
    text += (text.empty() ? "" : "; ") + link;
  }
  return text.empty() ? storage::Value() : storage::Value(text);
}

int RunSearch(const SearchFlags& flags) {
  Result<ResolvedDatabase> resolved = ResolveDatabase(flags.database);
  if (!resolved.ok()) {
    std::fprintf(stderr, "reel search: %s\n", resolved.status().message().c_str());
    return resolved.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  Result<OutputFormat> format = ParseOutputFormat(flags.format);
  if (!format.ok()) {
    std::fprintf(stderr, "reel search: %s\n", format.status().message().c_str());
    return kExitUsage;
  }
  Result<storage::Database> db = storage::Database::OpenReadOnly(resolved->path);
  if (!db.ok()) {
    std::fprintf(stderr, "reel search: %s\n", db.status().message().c_str());
    return kExitFailed;
  }
  storage::Store store(std::move(db).value());
  storage::SearchOptions options;
  options.limit = flags.limit;
  options.job = resolved->job_name;
  options.fts_syntax = flags.fts;
  options.answers = !flags.segments_only;
  options.segments = !flags.answers_only;
  Result<std::vector<storage::SearchHit>> hits = store.Search(flags.query, options);
  if (!hits.ok()) {
    std::fprintf(stderr, "reel search: %s\n", hits.status().message().c_str());
    return hits.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  storage::Table table;
  table.columns = {"rank",  "job",           "item_id",     "path",    "source",
                   "where", "start_seconds", "end_seconds", "snippet", "frames"};
  int rank = 0;
  for (const storage::SearchHit& hit : *hits) {
    const bool answer = hit.source == storage::SearchHit::Source::kAnswer;
    std::string where;
    if (answer) {
      where = "answer " + hit.origin;
    } else if (hit.origin == "document") {
      where = "chunk " + std::to_string(static_cast<int64_t>(hit.start_seconds.value_or(0)));
    } else if (hit.start_seconds) {
      where = MediaClock(*hit.start_seconds) + "-" +
              MediaClock(hit.end_seconds.value_or(*hit.start_seconds));
    }
    auto optional = [](const std::optional<double>& v) {
      return v ? storage::Value(*v) : storage::Value();
    };
    table.rows.push_back({int64_t{++rank}, Text(hit.job), hit.item_id, Text(hit.path),
                          Text(answer ? "answer:" + hit.origin : hit.origin), Text(where),
                          answer ? storage::Value() : optional(hit.start_seconds),
                          answer ? storage::Value() : optional(hit.end_seconds), Text(hit.snippet),
                          FramesMeant(hit)});
  }
  WriteTable(std::cout, table, *format, {.max_cell_width = flags.width});
  std::cout.flush();
  return kExitOk;
}

}  // namespace

void AddSearchCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SearchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "search", "Full-text search over subtitles, transcripts, documents and answers, best first");
  cmd->footer(
      "Every word must occur (unless --fts). Each hit names its job, item and path, where it\n"
      "comes from (answer:PROMPT, subtitle:N, sidecar:FILE, subtitles, speech, document) and where "
      "in the "
      "item\n"
      "(h:mm:ss.mmm-h:mm:ss.mmm for timed text, chunk N for documents); the snippet shows the\n"
      "matches in [ ]. For an answer, `frames` links the times the model wrote in the snippet\n"
      "(01:15, 0:01:15, at 75 seconds) to the nearest stored frame.\n"
      "Exit status: 0 ok (also with no hits), 1 no database, 2 empty or bad query.");
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_option("WORDS", flags->query, "Words to find")->required();
  cmd->add_option("-n,--limit", flags->limit, "Most hits to show")
      ->default_val(20)
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--fts", flags->fts, "WORDS is FTS5 syntax: AND/OR/NOT, \"phrases\", prefix*");
  cmd->add_flag("--answers", flags->answers_only, "Search answers only");
  cmd->add_flag("--segments", flags->segments_only, "Search text segments only");
  cmd->add_option("--format", flags->format,
                  "table, csv, json, jsonl or md (a Markdown table, cells whole)")
      ->check(CLI::IsMember({"table", "csv", "json", "jsonl", "md"}))
      ->default_val("table");
  cmd->add_option("--width", flags->width, "Table format: cut cells to this many characters")
      ->default_val(80);
  cmd->callback([flags, &exit_code] { exit_code = RunSearch(*flags); });
}

}  // namespace reel::cli
