// The database boundary and the commands that echo stored text. Each input is split at NUL
// bytes into an item path, a segment source, segment text, a language, an event message and a
// search query; they are stored through Store the way the runner stores them (raw bytes: the
// storage layer is the last line of defence), then read back with `reel results`, `reel query`,
// `reel search` (plain and FTS5 syntax) and `reel status`, all --format json, in process.
// Invariants: no crash or uncaught exception; every command's output is valid UTF-8 JSON; no
// stored TEXT value is invalid UTF-8.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/json_output.h"
#include "storage/query.h"
#include "storage/store.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

namespace {

const std::string& DatabasePath() {
  static const std::string path = reel::fuzz::ScratchDir() + "/fuzz.db";
  return path;
}

reel::storage::Store& TheStore() {
  static reel::storage::Store* store = [] {
    auto opened = reel::storage::Store::Open(DatabasePath());
    Require(opened.ok(), "open the fuzz database", opened.status().ToString());
    return new reel::storage::Store(std::move(opened).value());
  }();
  return *store;
}

// Runs `reel ARGS` in process and returns what it wrote to std::cout.
std::string RunReel(std::vector<std::string> args) {
  CLI::App app;
  int exit_code = 0;
  reel::cli::AddResultsCommand(app, exit_code);
  reel::cli::AddQueryCommand(app, exit_code);
  reel::cli::AddSearchCommand(app, exit_code);
  reel::cli::AddStatusCommand(app, exit_code);
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  {
    reel::fuzz::QuietStderr quiet;
    std::reverse(args.begin(), args.end());  // CLI11's parse(vector) reads them back to front
    app.parse(args);
  }
  std::cout.rdbuf(old);
  return captured.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> fields;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (fields.size() < 5) {
    const size_t nul = rest.find('\0');
    fields.emplace_back(rest.substr(0, nul));
    rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  }
  const std::string query(rest);
  reel::storage::Store& store = TheStore();

  static int iterations = 0;
  if (++iterations % 20 == 0) {  // keep the database small: every read below is O(rows)
    Require(store.database().Execute("DELETE FROM jobs").ok(), "clear the database");
  }
  auto job = store.UpsertJob({.name = "fuzz", .spec_text = "name: fuzz"});
  Require(job.ok(), "UpsertJob", job.status().ToString());
  reel::storage::ItemRecord item;
  item.job_id = *job;
  item.path = fields[0].empty() ? "x" : fields[0];
  item.settings_hash = "s";
  item.kind = reel::storage::ItemKind::kSubtitle;
  auto id = store.UpsertItem(item);
  Require(id.ok(), "UpsertItem", id.status().ToString());
  Require(store.MarkItemRunning(*id, std::nullopt).ok(), "MarkItemRunning");
  reel::storage::ItemOutputs outputs;
  outputs.segments.push_back({.source = fields[1],
                              .start_seconds = 0,
                              .end_seconds = 1,
                              .text = fields[2],
                              .language = fields[3]});
  outputs.media_json = reel::jobs::DumpJson(nlohmann::json{{"title", fields[2]}});
  reel::Status done = store.MarkItemDone(*id, outputs);
  Require(done.ok(), "MarkItemDone", done.ToString());
  Require(store.LogEvent({.item_id = *id, .message = fields[4]}).ok(), "LogEvent");
  auto context = store.PutContext(
      {.item_id = *id, .prompt_id = "p", .manifest_json = reel::jobs::DumpJson(fields[2])});
  Require(context.ok(), "PutContext", context.status().ToString());
  auto request = store.BeginRequest({.item_id = *id, .context_id = *context, .prompt_id = "p"});
  Require(request.ok(), "BeginRequest", request.status().ToString());
  Require(store.FinishRequest(*request, {.content = fields[2] + " " + fields[4]}).ok(),
          "FinishRequest");

  const std::string& db = DatabasePath();
  reel::fuzz::RequireValidJson(RunReel({"results", "--db", db, "--format", "json"}), "results");
  reel::fuzz::RequireValidJson(RunReel({"results", "--db", db, "--items", "--format", "jsonl"}),
                               "results --items", /*lines=*/true);
  reel::fuzz::RequireValidJson(
      RunReel({"query", "--db", db, "SELECT * FROM segments", "--format", "json"}), "query");
  reel::fuzz::RequireValidJson(
      RunReel({"query", "--db", db, "SELECT * FROM events", "--format", "json"}), "query events");
  reel::fuzz::RequireValidJson(RunReel({"status", "--db", db, "--format", "json"}), "status");
  if (!query.empty() && query[0] != '-') {
    const std::string plain = RunReel({"search", "--db", db, query, "--format", "json"});
    if (!plain.empty()) reel::fuzz::RequireValidJson(plain, "search");
    const std::string fts = RunReel({"search", "--db", db, "--fts", query, "--format", "json"});
    if (!fts.empty()) reel::fuzz::RequireValidJson(fts, "search --fts");
  }

  // SQLite does not validate UTF-8: every stored TEXT value is checked here.
  auto all = reel::storage::Query(
      db,
      "SELECT path FROM items UNION ALL SELECT text FROM segments UNION ALL SELECT source FROM "
      "segments UNION ALL SELECT language FROM segments UNION ALL SELECT message FROM events "
      "UNION ALL SELECT content FROM responses");
  Require(all.ok(), "read back", all.status().ToString());
  for (const auto& row : all->rows) {
    if (const auto* text = std::get_if<std::string>(&row[0])) {
      Require(reel::IsValidUtf8(*text), "stored TEXT is UTF-8", *text);
    }
  }
  return 0;
}
