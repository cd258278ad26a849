#include "jobs/cli/database_option.h"

#include <sys/stat.h>

#include <cstdlib>

#include "jobs/job_spec.h"
#include "jobs/runner.h"
#include "storage/query.h"
#include "storage/store.h"

namespace reel::cli {

void AddDatabaseOptions(CLI::App* cmd, DatabaseChoice* choice) {
  cmd->add_option("--db", choice->db,
                  "Results database (default: --job's database, else $REEL_DB, else ./reel.db)");
  cmd->add_option("--job", choice->job,
                  "A job file (JOB.yaml: read its database, report on its job) or a job name");
}

Result<ResolvedDatabase> ResolveDatabase(const DatabaseChoice& choice) {
  ResolvedDatabase resolved;
  std::string& path = resolved.path;
  std::string why;
  std::optional<jobs::JobSpec> job;
  if (choice.job) {
    const std::string& j = *choice.job;
    struct stat st {};
    if (j.ends_with(".yaml") || j.ends_with(".yml") || stat(j.c_str(), &st) == 0) {
      REEL_ASSIGN_OR_RETURN(job, jobs::LoadJobFile(j));
      resolved.job_name = job->name;
      resolved.job = job;
    } else {
      resolved.job_name = j;
    }
  }
  if (choice.db) {
    path = *choice.db;
    why = "--db";
  } else if (job) {
    path = jobs::DatabasePathFor(*job, std::nullopt, jobs::ShardSpec{});
    why = "the database of " + *choice.job;
  } else if (const char* env = std::getenv("REEL_DB"); env != nullptr && *env != '\0') {
    path = env;
    why = "$REEL_DB";
  } else {
    path = "reel.db";
    why = "the default";
    struct stat here {};
    struct stat asked {};
    const std::string ask_db = DefaultAskDatabase();
    if (stat(path.c_str(), &here) != 0 && stat(ask_db.c_str(), &asked) == 0) {
      path = ask_db;
      why = "reel ask's database";
    }
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return NotFound("no database at " + path + " (" + why +
                    "); pass --db FILE or --job JOB.yaml, or run a job first");
  }
  return resolved;
}

std::string DefaultAskDatabase() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && *xdg == '/') return std::string(xdg) + "/reel/reel.db";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.local/share/reel/reel.db";
}

Result<jobs::JobSpec> ResolveJob(const ResolvedDatabase& database) {
  if (database.job) return *database.job;
  std::string name;
  if (database.job_name) {
    name = *database.job_name;
  } else {
    REEL_ASSIGN_OR_RETURN(storage::Table jobs,
                          storage::Query(database.path, "SELECT name FROM jobs ORDER BY name"));
    if (jobs.rows.empty()) return NotFound(database.path + " holds no job; run one first");
    if (jobs.rows.size() > 1) {
      std::string names;
      for (const auto& row : jobs.rows) {
        names += (names.empty() ? "" : ", ") + storage::FormatValue(row[0]);
      }
      return InvalidArgument(database.path + " holds several jobs (" + names +
                             "); pass --job NAME or --job JOB.yaml");
    }
    name = storage::FormatValue(jobs.rows[0][0]);
  }
  REEL_ASSIGN_OR_RETURN(storage::Store store, storage::Store::Open(database.path));
  REEL_ASSIGN_OR_RETURN(std::optional<storage::JobRecord> record, store.FindJob(name));
  if (!record) return NotFound(database.path + " holds no job named '" + name + "'");
  // Relative paths in it start where they did for the run that stored it: the job file's
  // directory, which the stored spec names.
  Result<jobs::JobSpec> spec =
      jobs::ParseJobText(record->spec_text, database.path + " (job '" + name + "' as stored)",
                         jobs::ResolvedJobBaseDir(record->spec_text));
  if (!spec.ok()) return spec.status();
  return spec;
}

}  // namespace reel::cli
