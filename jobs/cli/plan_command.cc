// reel plan JOB.yaml [--db FILE] [--shard I/N] [--shards N] [--retry-failed] [--format F]
// A dry run: what `reel run` would process or skip, and why. Opens the database read-only.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <system_error>
#include <thread>

#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/table_output.h"
#include "jobs/run/item_plan.h"
#include "jobs/run/runner.h"
#include "pipeline/documents/document.h"
#include "pipeline/probe.h"
#include "storage/database.h"
#include "storage/store.h"

namespace reel::cli {
namespace {

struct PlanFlags {
  std::string job_file;
  std::optional<std::string> db;
  std::optional<std::string> shard;
  std::optional<int> shards;
  bool retry_failed = false;
  bool no_probe = false;
  std::string format = "table";
  std::optional<std::string> fallback_encoding;
};

struct PlannedRow {
  std::vector<storage::Value> values;  // path, kind, action, reason, est_frames
  bool failed = false;
  bool process = false;
  std::optional<int64_t> frames;        // counted towards the total
  bool unknown_frames = false;          // a video (scene policy) or document counted only once read
  std::optional<double> audio_seconds;  // an audio file to process: its duration (probed)
};

// One input's line of the plan. `store` is null when there is no database yet; with
// `database_expected` and no store, the database could not be opened on this thread.
PlannedRow PlanRow(const jobs::JobSpec& job, const jobs::InputFile& input, storage::Store* store,
                   int64_t job_id, const PlanFlags& flags, bool database_expected) {
  PlannedRow out;
  out.values = {Text(DisplayPath(input.path)), Text(jobs::InputKindName(input.kind))};
  auto fail = [&](const std::string& reason) {
    out.failed = true;
    out.values.push_back(Text("fail"));
    out.values.push_back(Text(reason));
    out.values.emplace_back();  // NULL (emplaced: GCC 12 warns of a moved empty variant)
    return out;
  };
  if (database_expected && store == nullptr) return fail("the database could not be opened");
  std::string settings = jobs::ItemSettingsHash(job, input);
  Result<jobs::ItemPlan> plan =
      jobs::PlanItem(store, job_id, input, settings, {.retry_failed = flags.retry_failed});
  if (!plan.ok()) return fail(plan.status().message());
  out.process = plan->action == jobs::PlanAction::kProcess;
  out.values.push_back(Text(out.process ? "process" : "skip"));
  out.values.push_back(Text(plan->reason));
  storage::Value estimate;
  if (out.process) {
    if (input.kind == jobs::InputKind::kImage) {
      estimate = int64_t{1};
      out.frames = 1;
    } else if (input.kind == jobs::InputKind::kVideo && !flags.no_probe) {
      Result<pipeline::MediaInfo> media = pipeline::Probe(input.path, job.limits.media);
      std::optional<int64_t> n;
      if (media.ok()) n = jobs::EstimateFrames(job.sampling, *media);
      if (n) {
        estimate = *n;
        out.frames = *n;
      } else {
        out.unknown_frames = true;
      }
    } else if (input.kind == jobs::InputKind::kDocument && jobs::IsPagedDocument(input.path) &&
               !flags.no_probe) {
      // A document read as pages has one picture per page read (none with `pages: text`): the
      // pages counted without reading their text or rendering them.
      pipeline::DocumentOptions options = jobs::DocumentOptionsFor(job);
      const bool pictures = options.images;
      options.text = false;
      options.images = false;
      options.ocr.enabled = false;
      options.office_render = false;
      Result<pipeline::DocumentReport> pages = pipeline::ReadDocument(
          input.path, options, [](pipeline::DocumentPage&&) { return Status::Ok(); });
      if (pages.ok()) {
        const int64_t n = pictures ? pages->pages_read : 0;
        out.frames = n;
        estimate = n;
      } else {
        out.unknown_frames = true;
      }
    } else if (input.kind != jobs::InputKind::kVideo) {
      estimate = int64_t{0};
      if (input.kind == jobs::InputKind::kAudio && !flags.no_probe) {
        Result<pipeline::MediaInfo> media = pipeline::Probe(input.path, job.limits.media);
        out.audio_seconds = media.ok() ? media->duration_s : 0.0;
      }
    }
  }
  out.values.push_back(std::move(estimate));
  return out;
}

int Plan(const PlanFlags& flags) {
  Result<jobs::JobSpec> job = jobs::LoadJobFile(flags.job_file);
  if (!job.ok()) {
    std::fprintf(stderr, "%s\n", job.status().message().c_str());
    return kExitUsage;
  }
  if (Status set = SetFallbackEncoding(flags.fallback_encoding, *job); !set.ok()) {
    std::fprintf(stderr, "reel plan: %s\n", set.message().c_str());
    return kExitUsage;
  }
  Result<jobs::ShardSpec> shard = jobs::ResolveShard(flags.shard, flags.shards);
  if (!shard.ok()) {
    std::fprintf(stderr, "reel plan: %s\n", shard.status().message().c_str());
    return kExitUsage;
  }
  Result<OutputFormat> format = ParseOutputFormat(flags.format);
  if (!format.ok()) {
    std::fprintf(stderr, "reel plan: %s\n", format.status().message().c_str());
    return kExitUsage;
  }
  std::vector<std::string> warnings;
  Result<std::vector<jobs::InputFile>> inputs = jobs::ShardInputs(*job, *shard, &warnings);
  for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!inputs.ok()) {
    std::fprintf(stderr, "%s\n", inputs.status().message().c_str());
    return kExitUsage;
  }
  const std::string database = jobs::DatabasePathFor(*job, flags.db, *shard);
  std::optional<storage::Store> store;
  int64_t job_id = 0;
  struct stat st {};
  if (stat(database.c_str(), &st) == 0) {
    Result<storage::Database> db = storage::Database::OpenReadOnly(database);
    if (!db.ok() && db.status().code() != ErrorCode::kNotFound) {
      std::fprintf(stderr, "reel plan: %s\n", db.status().message().c_str());
      return kExitFailed;
    }
    // kNotFound: a file with no tables yet (empty, or being created) holds no items: all new.
    if (db.ok()) store.emplace(std::move(db).value());
  }
  if (store) {
    Result<std::optional<storage::JobRecord>> found = store->FindJob(job->name);
    if (!found.ok()) {
      std::fprintf(stderr, "reel plan: %s\n", found.status().message().c_str());
      return kExitFailed;
    }
    if (*found) job_id = (*found)->id;
  }

  // Rows are independent (hash or stat, look up, probe): planned on a few threads, each with its
  // own read-only connection, and printed in input order.
  std::vector<PlannedRow> rows(inputs->size());
  std::atomic<size_t> next{0};
  auto plan_rows = [&] {
    std::optional<storage::Store> own;
    if (store) {
      Result<storage::Database> db = storage::Database::OpenReadOnly(database);
      if (db.ok()) own.emplace(std::move(db).value());
    }
    for (size_t i = next++; i < rows.size(); i = next++) {
      rows[i] = PlanRow(*job, (*inputs)[i], store ? (own ? &*own : nullptr) : nullptr, job_id,
                        flags, store.has_value());
    }
  };
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(threads, rows.size()); ++t) {
    try {
      pool.emplace_back(plan_rows);
    } catch (const std::system_error&) {
      break;  // out of threads: this one plans the rest
    }
  }
  plan_rows();
  for (std::thread& t : pool) t.join();

  storage::Table table;
  table.columns = {"path", "kind", "action", "reason", "est_frames"};
  int64_t to_process = 0, to_skip = 0, errors = 0, frames = 0, unknown_frames = 0;
  int64_t audio_files = 0;
  double audio_seconds = 0;
  for (PlannedRow& row : rows) {
    if (row.failed) {
      ++errors;
    } else {
      (row.process ? to_process : to_skip) += 1;
    }
    if (row.frames) frames += *row.frames;
    if (row.unknown_frames) ++unknown_frames;
    if (row.audio_seconds) {
      ++audio_files;
      audio_seconds += *row.audio_seconds;
    }
    table.rows.push_back(std::move(row.values));
  }
  WriteTable(std::cout, table, *format, {.max_cell_width = 70, .row_count = false});
  std::cout.flush();
  std::fprintf(stderr,
               "reel plan: %s -> %s: %lld to process, %lld to skip%s; about %lld frames%s%s\n",
               job->name.c_str(), database.c_str(), static_cast<long long>(to_process),
               static_cast<long long>(to_skip),
               errors ? (", " + std::to_string(errors) + " unreadable").c_str() : "",
               static_cast<long long>(frames),
               unknown_frames ? (" (+ " + std::to_string(unknown_frames) +
                                 " inputs whose count is known only once read)")
                                    .c_str()
                              : "",
               audio_files ? ("; " + std::to_string(audio_files) +
                              (audio_files == 1 ? " audio file" : " audio files") + " (" +
                              std::to_string(static_cast<int64_t>(audio_seconds + 0.5)) +
                              " s of sound) to transcribe")
                                 .c_str()
                           : "");
  return kExitOk;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Dry run: list what `reel run` would process or skip, and why (writes nothing)");
  cmd->footer(
      "Columns: path, kind, action (process / skip / fail), reason, est_frames (from a probe:\n"
      "trimmed duration x fps, the count, or the timestamps; empty for keyframes and scene).\n"
      "Exit status: 0 planned, 1 the database could not be read, 2 invalid job file.");
  cmd->add_option("JOB", flags->job_file, "Job file (YAML)")->required();
  cmd->add_option("--db", flags->db, "Database to compare with (default: the job's)");
  cmd->add_option("--shard", flags->shard, "Plan only shard I of N, e.g. 0/4");
  cmd->add_option("--shards", flags->shards, "Shard count with JOB_COMPLETION_INDEX")
      ->check(CLI::Range(1, 1000000));
  cmd->add_flag("--retry-failed", flags->retry_failed, "Plan as `reel run --retry-failed`");
  cmd->add_flag("--no-probe", flags->no_probe, "Do not probe videos (no frame estimates)");
  cmd->add_option("--fallback-encoding", flags->fallback_encoding,
                  "Plan as `reel run --fallback-encoding ENC`");
  cmd->add_option("--format", flags->format, "table, csv, json or jsonl")
      ->check(CLI::IsMember({"table", "csv", "json", "jsonl"}))
      ->default_val("table");
  cmd->callback([flags, &exit_code] { exit_code = Plan(*flags); });
}

}  // namespace reel::cli
