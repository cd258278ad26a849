// reel export [--db FILE] [--job JOB.yaml|NAME] --format openai-batch OUT.jsonl
//             [--dialect vllm|sglang|openai] [--retry-failed]
// reel import [--db FILE] [--job JOB.yaml|NAME] RESULTS.jsonl [--dialect vllm|sglang|openai]
#include <cstdio>

#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/model/batch_files.h"

namespace reel::cli {
namespace {

struct ExportFlags {
  DatabaseChoice database;
  std::string format;
  std::string out;
  std::string dialect = "vllm";
  bool retry_failed = false;
};

struct ImportFlags {
  DatabaseChoice database;
  std::string results;
  std::string dialect = "vllm";
};

int RunExport(const ExportFlags& flags) {
  Result<ResolvedDatabase> db = ResolveDatabase(flags.database);
  if (!db.ok()) {
    std::fprintf(stderr, "reel export: %s\n", db.status().message().c_str());
    return db.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  Result<jobs::JobSpec> job = ResolveJob(*db);
  if (!job.ok()) {
    std::fprintf(stderr, "reel export: %s\n", job.status().message().c_str());
    return job.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  jobs::ExportOptions options;
  options.database = db->path;
  options.out_path = flags.out;
  options.dialect = flags.dialect;
  options.retry_failed = flags.retry_failed;
  Result<jobs::ExportResult> result = jobs::ExportBatch(*job, options);
  if (!result.ok()) {
    std::fprintf(stderr, "reel export: %s\n", result.status().message().c_str());
    return result.status().code() == ErrorCode::kUnavailable ? kExitLocked : kExitFailed;
  }
  for (const std::string& w : result->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (result->lines == 0) {
    std::fprintf(stderr, "reel export: nothing waits for a model in %s; wrote an empty %s\n",
                 db->path.c_str(), flags.out.c_str());
  } else {
    std::fprintf(stderr,
                 "reel export: %lld requests of %lld items (%lld bytes) -> %s\n"
                 "Run them (e.g. `vllm run-batch -i %s -o RESULTS.jsonl --model NAME`), then "
                 "`reel import RESULTS.jsonl --db %s`.\n",
                 static_cast<long long>(result->lines), static_cast<long long>(result->items),
                 static_cast<long long>(result->bytes), flags.out.c_str(), flags.out.c_str(),
                 db->path.c_str());
  }
  return result->warnings.empty() ? kExitOk : kExitPartial;
}

int RunImport(const ImportFlags& flags) {
  Result<ResolvedDatabase> db = ResolveDatabase(flags.database);
  if (!db.ok()) {
    std::fprintf(stderr, "reel import: %s\n", db.status().message().c_str());
    return db.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  // The job (for prompt kinds and prices), when the database says which: optional here.
  Result<jobs::JobSpec> job = ResolveJob(*db);
  jobs::ImportOptions options;
  options.database = db->path;
  if (job.ok()) options.job = &*job;
  options.results_path = flags.results;
  options.dialect = flags.dialect;
  Result<jobs::ImportResult> result = jobs::ImportBatch(options);
  if (!result.ok()) {
    std::fprintf(stderr, "reel import: %s\n", result.status().message().c_str());
    return result.status().code() == ErrorCode::kUnavailable ? kExitLocked : kExitFailed;
  }
  const jobs::ImportResult& r = *result;
  if (r.interrupted > 0) {
    std::fprintf(stderr,
                 "reel import: %lld requests left 'sent' by an import or run that was killed are "
                 "marked interrupted; their questions take this file's answers\n",
                 static_cast<long long>(r.interrupted));
  }
  for (const std::string& p : r.problems) std::fprintf(stderr, "warning: %s\n", p.c_str());
  std::fprintf(stderr,
               "reel import: %lld lines: %lld answers stored, %lld failures stored, %lld imported "
               "before, %lld unknown, %lld unreadable, %lld too long, %lld repeated -> %s\n",
               static_cast<long long>(r.lines), static_cast<long long>(r.answered),
               static_cast<long long>(r.failed), static_cast<long long>(r.already),
               static_cast<long long>(r.unknown), static_cast<long long>(r.bad),
               static_cast<long long>(r.too_long), static_cast<long long>(r.duplicates),
               db->path.c_str());
  // What follows an import, said only when it applies.
  if (r.segment_answers > 0 || r.refit > 0) {
    std::string what;
    if (r.segment_answers > 0) {
      what = std::to_string(r.segment_answers) +
             " answers are about segments of split videos (each video is asked again over its "
             "segments' answers)";
    }
    if (r.refit > 0) {
      what += (what.empty() ? "" : "; ") + std::to_string(r.refit) +
              " prompts were too long for the server (they are re-fitted)";
    }
    std::fprintf(stderr, "reel import: %s: `reel export` again writes what is left.\n",
                 what.c_str());
  }
  return r.unknown + r.bad + r.too_long + r.duplicates > 0 ? kExitPartial : kExitOk;
}

}  // namespace

void AddExportCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write the questions that wait for a model as an OpenAI Batch / vllm run-batch input file");
  cmd->footer(
      "Each line is one request as `reel run` would send it, keyed by the question's stable\n"
      "custom_id. Answer it with `vllm run-batch` (or the OpenAI Batch API) and read the results\n"
      "back with `reel import`. Exit status: 0 written, 1 failed, 2 bad options, 3 written but\n"
      "some items could not be (listed), 4 a run holds the database.");
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_option("--format", flags->format, "Output format: openai-batch")
      ->required()
      ->check(CLI::IsMember({"openai-batch"}));
  cmd->add_option("OUT", flags->out, "The file to write (JSON lines)")->required();
  cmd->add_option("--dialect", flags->dialect,
                  "Request fields for: vllm (default), sglang, or openai (no top_k, no "
                  "chat_template_kwargs)")
      ->check(CLI::IsMember({"vllm", "sglang", "openai"}));
  cmd->add_flag("--retry-failed", flags->retry_failed,
                "Also questions that failed (not those refused as too long: they are re-fitted)");
  cmd->callback([flags, &exit_code] { exit_code = RunExport(*flags); });
}

void AddImportCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ImportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "import", "Read an OpenAI Batch / vllm run-batch output file back into the database");
  cmd->footer(
      "Answers and errors are stored with the question their custom_id names; importing a file\n"
      "twice changes nothing. Lines longer than an answer may be (256 MiB) are skipped; a\n"
      "custom_id repeated in the file keeps the answer stored first.\n"
      "Exit status: 0 imported, 1 failed, 3 some lines were unknown, unreadable, too long or\n"
      "repeated (listed with their numbers), 4 a run holds the database.");
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_option("RESULTS", flags->results, "The output file (JSON lines)")->required();
  cmd->add_option("--dialect", flags->dialect,
                  "Where the answers keep their reasoning: vllm (default), sglang, openai")
      ->check(CLI::IsMember({"vllm", "sglang", "openai"}));
  cmd->callback([flags, &exit_code] { exit_code = RunImport(*flags); });
}

}  // namespace reel::cli
