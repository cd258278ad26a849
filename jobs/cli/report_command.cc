// reel report [--db FILE] [--job JOB.yaml|NAME] [--item ID|PATH]... -o DIR [--batch]
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/report/report_writer.h"

namespace reel::cli {
namespace {

struct ReportFlags {
  DatabaseChoice database;
  std::vector<std::string> items;
  std::string out_dir;
  bool batch = false;
  int64_t page_size = 200;
  int runs = 20;
  bool quiet = false;
};

int RunReport(const ReportFlags& flags) {
  if (flags.out_dir.empty() && !flags.batch) {
    std::fprintf(stderr, "reel report: -o DIR is required (or --batch for the text summary)\n");
    return kExitUsage;
  }
  if (flags.batch && !flags.items.empty()) {
    std::fprintf(stderr, "reel report: --batch and --item do not go together\n");
    return kExitUsage;
  }
  Result<ResolvedDatabase> db = ResolveDatabase(flags.database);
  if (!db.ok()) {
    std::fprintf(stderr, "reel report: %s\n", db.status().message().c_str());
    return db.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  jobs::report::ReportOptions options;
  options.database = db->path;
  options.job = db->job_name;
  options.items = flags.items;
  options.page_size = flags.page_size;
  options.max_runs = flags.runs;
  options.batch_only = flags.batch;
  std::string scratch;
  if (flags.out_dir.empty()) {
    // --batch without -o: only the text; the pages go to a scratch folder that is removed.
    char pattern[] = "/tmp/reel-report-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
      std::fprintf(stderr, "reel report: cannot make a scratch folder in /tmp\n");
      return kExitFailed;
    }
    scratch = options.out_dir = pattern;
  } else {
    options.out_dir = flags.out_dir;
  }
  const bool progress = !flags.quiet && isatty(STDERR_FILENO);
  if (progress) {
    options.on_progress = [](int64_t done, int64_t total) {
      if (done == total || done % 50 == 0) {
        std::fprintf(stderr, "\rreel report: %lld of %lld items", static_cast<long long>(done),
                     static_cast<long long>(total));
        if (done == total) std::fprintf(stderr, "\n");
      }
    };
  }
  Result<jobs::report::ReportStats> stats = jobs::report::WriteReport(options);
  if (!scratch.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
  }
  if (!stats.ok()) {
    std::fprintf(stderr, "reel report: %s\n", stats.status().message().c_str());
    return kExitFailed;
  }
  if (flags.batch) {
    std::cout << stats->batch_text;
    if (!flags.out_dir.empty()) {
      std::cout << "Batch report: " << flags.out_dir << "/batch.html\n";
    }
    return kExitOk;
  }
  if (!flags.quiet) {
    std::cout << "Wrote " << stats->item_pages << " item pages";
    if (stats->index_pages > 0) std::cout << ", " << stats->index_pages << " index pages";
    std::cout << " and " << stats->thumbnails_written << " thumbnails (" << stats->thumbnails_kept
              << " already there) to " << flags.out_dir << "\n";
    if (flags.items.empty()) {
      std::cout << "Open " << flags.out_dir << "/index.html in a browser.\n";
    } else {
      std::cout << "Open " << flags.out_dir << "/items/ in a browser.\n";
    }
  }
  return kExitOk;
}

}  // namespace

void AddReportCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write a static HTML report: a storyboard page per item, an index, and a page on the "
      "runs (batch.html)");
  cmd->footer(
      "Writes DIR/index.html (paged: index-2.html, ...), DIR/items/ID.html for every item (its\n"
      "frames as a contact sheet with times and subtitles, chapters as a timeline, each\n"
      "prompt's answer with its times linked to the frames, media facts, tokens, cost,\n"
      "failures), DIR/batch.html (per run: outcomes, tokens, tokens/s, latency, first token,\n"
      "cached share, retries, cost, slowest and most expensive items, a throughput plot) and\n"
      "the thumbnails, from the database alone. No server and no network: open index.html\n"
      "from disk, or copy the folder anywhere.\n"
      "With --item, only those items' pages (no index). --batch prints the batch report as\n"
      "text, and with -o also writes DIR/batch.html.\n"
      "Exit status: 0 ok, 1 no database, unknown item or a write error, 2 bad options.");
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_option("--item", flags->items, "Only this item: its id or its path (repeatable)");
  cmd->add_option("-o,--output", flags->out_dir, "The folder to write (created if missing)");
  cmd->add_flag("--batch", flags->batch, "The batch report only: print it, and with -o write it");
  cmd->add_option("--page-size", flags->page_size, "Items per index page")
      ->default_val(200)
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--runs", flags->runs, "Runs in the batch report, newest first")
      ->default_val(20)
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("-q,--quiet", flags->quiet, "No progress and no summary line");
  cmd->callback([flags, &exit_code] { exit_code = RunReport(*flags); });
}

}  // namespace reel::cli
