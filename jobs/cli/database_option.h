// Which database a reporting command (query, status, results, search) reads.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "jobs/cli/commands.h"

namespace reel::cli {

struct DatabaseChoice {
  std::optional<std::string> db;   // --db FILE
  std::optional<std::string> job;  // --job JOB.yaml, or --job NAME
};

// Adds --db and --job to `cmd`.
void AddDatabaseOptions(CLI::App* cmd, DatabaseChoice* choice);

struct ResolvedDatabase {
  std::string path;
  // The job to report on: --job NAME, or the name inside --job JOB.yaml; nullopt = all jobs.
  std::optional<std::string> job_name;
};

// --job is a job file when it ends in .yaml / .yml or names an existing file, else a job name.
// The database is the first of: --db; the database of the --job file (its storage.database,
// beside the job file); $REEL_DB; ./reel.db. Errors: kInvalidArgument for a bad job file;
// kNotFound if the database does not exist (the message says which rule chose it and what to
// pass instead).
Result<ResolvedDatabase> ResolveDatabase(const DatabaseChoice& choice);

}  // namespace reel::cli
