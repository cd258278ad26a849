// Which database a reporting command (query, status, results, search) reads.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "jobs/cli/commands.h"
#include "jobs/spec/job_spec.h"

namespace reel::cli {

struct DatabaseChoice {
  std::optional<std::string> db;   // --db FILE
  std::optional<std::string> job;  // --job JOB.yaml, or --job NAME
  bool ask = false;                // --ask-db: `reel ask`'s database (DefaultAskDatabase)
};

// The rule every command that reads a database follows, for --help and messages.
inline constexpr char kDatabaseRule[] =
    "Which database: --db FILE; else --ask-db (reel ask's database); else the database of --job\n"
    "JOB.yaml; else $REEL_DB; else ./reel.db if it exists; else the database of the one job file\n"
    "(*.yaml, *.yml) in this folder.";

// Adds --db, --ask-db and --job to `cmd`.
void AddDatabaseOptions(CLI::App* cmd, DatabaseChoice* choice);

struct ResolvedDatabase {
  std::string path;
  // The job to report on: --job NAME, or the name inside --job JOB.yaml; nullopt = all jobs.
  std::optional<std::string> job_name;
  std::optional<jobs::JobSpec> job;  // --job JOB.yaml, loaded
};

// The database `reel ask` writes by default: $XDG_DATA_HOME/reel/reel.db, or
// ~/.local/share/reel/reel.db.
std::string DefaultAskDatabase();

// The job a command about one job's questions works on: --job JOB.yaml as loaded, else the spec
// stored in the database for --job NAME, or for its only job. Errors: no such job; several jobs
// and no --job (the message lists them).
Result<jobs::JobSpec> ResolveJob(const ResolvedDatabase& database);

// --job is a job file when it ends in .yaml / .yml or names an existing file, else a job name.
// The database is the first of (kDatabaseRule): --db; --ask-db (DefaultAskDatabase); the
// database of the --job file (its storage.database, beside the job file); $REEL_DB; ./reel.db
// when it exists; the database of the only job file in the current folder (files there that do
// not parse as job files are passed over). `reel ask`'s database is read only when named
// (--ask-db, --db, $REEL_DB). Errors: kInvalidArgument for a bad job file or several job files
// here naming different databases; kNotFound if the database does not exist (the message says
// which rule chose it and what to pass instead, --ask-db when reel ask's database exists).
Result<ResolvedDatabase> ResolveDatabase(const DatabaseChoice& choice);

// For a command that reads: refuses a file that is not (yet) a Reel database or is newer than this
// build (Database::OpenReadOnly's messages) and brings an older one to the current schema. An
// empty file stays empty.
Status ReadyForReading(const std::string& path);

}  // namespace reel::cli
