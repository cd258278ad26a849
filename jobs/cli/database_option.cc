#include "jobs/cli/database_option.h"

#include <sys/stat.h>

#include <cstdlib>

#include "jobs/job_spec.h"
#include "jobs/runner.h"

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
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return NotFound("no database at " + path + " (" + why +
                    "); pass --db FILE or --job JOB.yaml, or run a job first");
  }
  return resolved;
}

}  // namespace reel::cli
