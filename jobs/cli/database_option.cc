#include "jobs/cli/database_option.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "jobs/run/runner.h"
#include "jobs/spec/job_spec.h"
#include "storage/query.h"
#include "storage/store.h"

namespace reel::cli {

void AddDatabaseOptions(CLI::App* cmd, DatabaseChoice* choice) {
  // After the command's own footer text (every caller sets it first). A footer made by a function
  // (CLI11 prints it before this text) is set after this call: get_footer() would run it, at every
  // start of `reel`, and copy its text into this one.
  const std::string own = cmd->get_footer();
  cmd->footer(own + (own.empty() ? "" : "\n") + kDatabaseRule);
  cmd->add_option("--db", choice->db,
                  "Results database (default: --job's database, else $REEL_DB, else ./reel.db, "
                  "else the database of the job file here)");
  cmd->add_flag("--ask-db", choice->ask,
                "Read reel ask's database ($XDG_DATA_HOME/reel/reel.db, or "
                "~/.local/share/reel/reel.db)");
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
  } else if (choice.ask) {
    path = DefaultAskDatabase();
    why = "--ask-db: reel ask's database";
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
    if (stat(path.c_str(), &here) != 0) {
      // The job file of this folder: its database.
      std::set<std::string> databases;
      std::string files;
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(".", ec)) {
        const std::string name = entry.path().filename().string();
        if (!(name.ends_with(".yaml") || name.ends_with(".yml")) || !entry.is_regular_file(ec)) {
          continue;
        }
        Result<jobs::JobSpec> found = jobs::LoadJobFile(name);
        if (!found.ok()) continue;  // not a job file (or a broken one: `reel validate` says)
        databases.insert(jobs::DatabasePathFor(*found, std::nullopt, jobs::ShardSpec{}));
        files += (files.empty() ? "" : ", ") + name;
      }
      if (databases.size() == 1) {
        path = *databases.begin();
        why = "the database of the job file here, " + files;
      } else if (databases.size() > 1) {
        return InvalidArgument("no ./reel.db, and the job files here (" + files +
                               ") name different databases: pass --job JOB.yaml or --db FILE");
      }
    }
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    std::string hint = "pass --db FILE or --job JOB.yaml, or run a job first";
    struct stat asked {};
    if (!choice.ask && !choice.db && stat(DefaultAskDatabase().c_str(), &asked) == 0) {
      hint += "; --ask-db reads reel ask's answers (" + DefaultAskDatabase() + ")";
    }
    return NotFound("no database at " + path + " (" + why + "); " + hint);
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

Status ReadyForReading(const std::string& path) {
  int version = 0;
  {
    REEL_ASSIGN_OR_RETURN(storage::Database db, storage::Database::OpenReadOnly(path));
    REEL_ASSIGN_OR_RETURN(version, db.SchemaVersion());
  }
  if (version >= storage::Database::LatestSchemaVersion()) return Status::Ok();
  return storage::Store::Open(path).status();
}

}  // namespace reel::cli
