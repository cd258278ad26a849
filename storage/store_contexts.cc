// Store: contexts (what a question is asked about), and retiring the ones a job no longer builds.
#include <set>

#include "storage/internal/json_string_array.h"
#include "storage/internal/rows.h"
#include "storage/internal/schema.h"
#include "storage/internal/sqlite.h"
#include "storage/sha256.h"
#include "storage/store.h"

namespace reel::storage {

using internal::Statement;
using internal::Transaction;

namespace {

// Inserts (or finds) one contexts row inside the caller's transaction; returns its id.
Result<int64_t> InsertContext(sqlite3* db, const ContextRecord& context) {
  std::string hash = Sha256Hex(context.manifest_json);
  REEL_ASSIGN_OR_RETURN(
      Statement insert,
      Statement::Prepare(db,
                         "INSERT INTO contexts(item_id, prompt_id, context_hash, text_tokens, "
                         "image_tokens, video_tokens, audio_tokens, total_tokens, manifest_json, "
                         "settings_key, count_method, transport, segment_index, segment_count, "
                         "base_key, frame_source) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?4 + ?5 + ?6 + ?7, ?8, ?9, ?10, "
                         "?11, ?12, ?13, coalesce(?14, ?9), ?15) "
                         "ON CONFLICT(item_id, prompt_id, context_hash) DO UPDATE SET "
                         "settings_key = coalesce(excluded.settings_key, settings_key), "
                         "base_key = coalesce(excluded.base_key, base_key), "
                         "frame_source = coalesce(excluded.frame_source, frame_source), "
                         "superseded_at = NULL"));
  insert.Bind(1, context.item_id)
      .Bind(2, context.prompt_id)
      .Bind(3, hash)
      .Bind(4, context.text_tokens)
      .Bind(5, context.image_tokens)
      .Bind(6, context.video_tokens)
      .Bind(7, context.audio_tokens)
      .Bind(8, context.manifest_json)
      .Bind(9, context.settings_key)
      .Bind(10, context.count_method)
      .Bind(11, context.transport)
      .Bind(12, context.segment_index)
      .Bind(13, context.segment_count)
      .Bind(14, context.base_key)
      .Bind(15, context.frame_source);
  REEL_RETURN_IF_ERROR(insert.Run());
  REEL_ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(db,
                         "SELECT id FROM contexts WHERE item_id = ?1 AND prompt_id = ?2 AND "
                         "context_hash = ?3"));
  REEL_ASSIGN_OR_RETURN(
      bool row, find.Bind(1, context.item_id).Bind(2, context.prompt_id).Bind(3, hash).Step());
  if (!row) return Internal("context vanished after insert");
  return find.ColumnInt(0);
}

}  // namespace

Result<int64_t> Store::PutContext(const ContextRecord& context) {
  REEL_ASSIGN_OR_RETURN(std::vector<int64_t> ids, PutContexts({context}));
  return ids.front();
}

Result<std::vector<int64_t>> Store::PutContexts(const std::vector<ContextRecord>& segments) {
  sqlite3* db = db_.handle();
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  std::vector<int64_t> ids;
  ids.reserve(segments.size());
  for (const ContextRecord& segment : segments) {
    REEL_ASSIGN_OR_RETURN(int64_t id, InsertContext(db, segment));
    ids.push_back(id);
  }
  REEL_RETURN_IF_ERROR(txn.Commit());
  return ids;
}

namespace {

struct ContextState {
  int64_t id = 0;
  bool current = false;
  bool superseded = false;
};

// The item's context rows, each with whether it is one of `current` and whether it is marked.
Result<std::vector<ContextState>> ContextStates(
    sqlite3* db, int64_t item_id, const std::set<std::pair<std::string, std::string>>& current) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db,
                         "SELECT id, prompt_id, coalesce(base_key, settings_key, ''), "
                         "superseded_at IS NOT NULL FROM contexts WHERE item_id = ?1 ORDER BY id"));
  stmt.Bind(1, item_id);
  std::vector<ContextState> states;
  REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
    ContextState s;
    s.id = row.ColumnInt(0);
    s.current = current.count({row.ColumnText(1), row.ColumnText(2)}) > 0;
    s.superseded = row.ColumnInt(3) != 0;
    states.push_back(s);
  }));
  return states;
}

// The questions of item ?1 the job no longer asks: waiting, and either of a prompt that is not
// one of ?2 (a JSON array of the prompts asked about the item now; a prompt that no longer
// applies to it, e.g. chapters of a document, is not) or about a superseded context. (Over
// tasks t.)
constexpr const char* kStaleTask =
    "t.item_id = ?1 AND t.status = 'waiting' AND (t.prompt_id NOT IN (SELECT value FROM "
    "json_each(?2)) OR t.context_id IN (SELECT id FROM contexts WHERE item_id = ?1 AND "
    "superseded_at IS NOT NULL))";
// Retired questions the job asks again (their prompt applies, their context is current).
constexpr const char* kRestoredTask =
    "t.item_id = ?1 AND t.retired_at IS NOT NULL AND t.prompt_id IN (SELECT value FROM "
    "json_each(?2)) AND t.context_id IN (SELECT id FROM contexts WHERE item_id = ?1 AND "
    "superseded_at IS NULL)";
constexpr const char* kSentBefore =
    "(t.request_id IS NOT NULL OR EXISTS (SELECT 1 FROM requests r WHERE r.task_id = t.id))";

Result<bool> StaleTasksOrRestored(sqlite3* db, int64_t item_id, const std::string& prompts) {
  REEL_ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(db, std::string("SELECT 1 FROM tasks t WHERE (") + kStaleTask +
                                 " AND t.retired_at IS NULL) OR (" + kRestoredTask + ") LIMIT 1"));
  return find.Bind(1, item_id).Bind(2, prompts).Step();
}

// Questions the job no longer asks (kStaleTask): deleted when never sent (as the unsent questions
// of a retired context are), else kept for their requests' history and marked retired_at, so
// they no longer count as waiting for a model. Retired ones asked again lose the mark.
Status RetireStaleTasks(sqlite3* db, int64_t item_id, const std::string& prompts,
                        RetiredContexts* out) {
  REEL_ASSIGN_OR_RETURN(Statement remove,
                        Statement::Prepare(db, std::string("DELETE FROM tasks AS t WHERE ") +
                                                   kStaleTask + " AND NOT " + kSentBefore));
  REEL_RETURN_IF_ERROR(remove.Bind(1, item_id).Bind(2, prompts).Run());
  out->tasks_deleted += sqlite3_changes(db);
  REEL_ASSIGN_OR_RETURN(Statement mark,
                        Statement::Prepare(db, std::string("UPDATE tasks AS t SET retired_at = ") +
                                                   internal::kNowSql + ", updated_at = " +
                                                   internal::kNowSql + " WHERE " + kStaleTask +
                                                   " AND t.retired_at IS NULL AND " + kSentBefore));
  REEL_RETURN_IF_ERROR(mark.Bind(1, item_id).Bind(2, prompts).Run());
  out->tasks_retired += sqlite3_changes(db);
  REEL_ASSIGN_OR_RETURN(
      Statement unmark,
      Statement::Prepare(db, std::string("UPDATE tasks AS t SET retired_at = NULL, updated_at = ") +
                                 internal::kNowSql + " WHERE " + kRestoredTask));
  return unmark.Bind(1, item_id).Bind(2, prompts).Run();
}

bool AnythingToRetire(const std::vector<ContextState>& states) {
  for (const ContextState& s : states) {
    if (s.current == s.superseded) return true;  // stale and unmarked, or current and marked
  }
  return false;
}

}  // namespace

Result<RetiredContexts> Store::RetireContexts(
    int64_t item_id, const std::vector<std::pair<std::string, std::string>>& current_list) {
  sqlite3* db = db_.handle();
  const std::set<std::pair<std::string, std::string>> current(current_list.begin(),
                                                              current_list.end());
  RetiredContexts out;
  std::vector<std::string> prompt_list;
  for (const auto& [prompt, key] : current) prompt_list.push_back(prompt);
  const std::string prompts = internal::JsonStringArray(prompt_list);
  // Most runs change nothing: look before taking the write lock.
  REEL_ASSIGN_OR_RETURN(std::vector<ContextState> states, ContextStates(db, item_id, current));
  REEL_ASSIGN_OR_RETURN(bool stale_tasks, StaleTasksOrRestored(db, item_id, prompts));
  if (!AnythingToRetire(states) && !stale_tasks) return out;
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  REEL_ASSIGN_OR_RETURN(states, ContextStates(db, item_id, current));
  REEL_ASSIGN_OR_RETURN(
      Statement unsent,
      Statement::Prepare(db,
                         "DELETE FROM tasks WHERE context_id = ?1 AND status = 'waiting' AND "
                         "request_id IS NULL AND NOT EXISTS (SELECT 1 FROM requests r WHERE "
                         "r.task_id = tasks.id)"));
  REEL_ASSIGN_OR_RETURN(
      Statement referenced,
      Statement::Prepare(db,
                         "SELECT c.prompt_id, c.manifest_json, c.frame_source, "
                         "EXISTS (SELECT 1 FROM tasks t WHERE t.context_id = c.id) OR "
                         "EXISTS (SELECT 1 FROM requests r WHERE r.context_id = c.id) "
                         "FROM contexts c WHERE c.id = ?1"));
  REEL_ASSIGN_OR_RETURN(Statement remove,
                        Statement::Prepare(db, "DELETE FROM contexts WHERE id = ?1"));
  REEL_ASSIGN_OR_RETURN(
      Statement mark,
      Statement::Prepare(db, "UPDATE contexts SET superseded_at = " +
                                 std::string(internal::kNowSql) + " WHERE id = ?1"));
  REEL_ASSIGN_OR_RETURN(
      Statement unmark,
      Statement::Prepare(db, "UPDATE contexts SET superseded_at = NULL WHERE id = ?1"));
  std::set<std::string> sources;
  for (const ContextState& s : states) {
    if (s.current) {
      if (s.superseded) {
        unmark.Reset();
        REEL_RETURN_IF_ERROR(unmark.Bind(1, s.id).Run());
        ++out.restored;
      }
      continue;
    }
    if (s.superseded) continue;  // retired before
    unsent.Reset();
    REEL_RETURN_IF_ERROR(unsent.Bind(1, s.id).Run());
    out.tasks_deleted += sqlite3_changes(db);
    referenced.Reset();
    REEL_ASSIGN_OR_RETURN(bool row, referenced.Bind(1, s.id).Step());
    if (!row) continue;
    RetiredContext r;
    r.id = s.id;
    r.prompt_id = referenced.ColumnText(0);
    r.manifest_json = referenced.ColumnText(1);
    r.frame_source = referenced.ColumnOptionalText(2);
    const bool kept = referenced.ColumnInt(3) != 0;
    if (kept) {
      mark.Reset();
      REEL_RETURN_IF_ERROR(mark.Bind(1, s.id).Run());
      ++out.superseded;
    } else {
      remove.Reset();
      REEL_RETURN_IF_ERROR(remove.Bind(1, s.id).Run());
      r.deleted = true;
      ++out.deleted;
    }
    if (r.frame_source) sources.insert(*r.frame_source);
    out.retired.push_back(std::move(r));
  }
  REEL_RETURN_IF_ERROR(RetireStaleTasks(db, item_id, prompts, &out));
  if (!sources.empty()) {
    REEL_ASSIGN_OR_RETURN(
        Statement kept,
        Statement::Prepare(db,
                           "SELECT manifest_json FROM contexts WHERE frame_source = ?1 AND "
                           "superseded_at IS NULL"));
    for (const std::string& source : sources) {
      kept.Reset();
      kept.Bind(1, source);
      REEL_RETURN_IF_ERROR(internal::ForEachRow(kept, [&](const Statement& row) {
        out.kept_frames.emplace_back(source, row.ColumnText(0));
      }));
    }
  }
  REEL_RETURN_IF_ERROR(txn.Commit());
  return out;
}

Result<bool> Store::HasContexts(int64_t item_id, const std::string& prompt_id,
                                const std::string& settings_key) {
  REEL_ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(db_.handle(),
                         "SELECT 1 FROM contexts WHERE item_id = ?1 AND prompt_id = ?2 AND "
                         "settings_key = ?3 LIMIT 1"));
  return find.Bind(1, item_id).Bind(2, prompt_id).Bind(3, settings_key).Step();
}

Result<std::vector<int64_t>> Store::FindContexts(int64_t item_id, const std::string& prompt_id,
                                                 const std::string& settings_key) {
  REEL_ASSIGN_OR_RETURN(
      Statement find,
      Statement::Prepare(db_.handle(),
                         "SELECT id FROM contexts WHERE item_id = ?1 AND prompt_id = ?2 AND "
                         "settings_key = ?3 ORDER BY segment_index, id"));
  find.Bind(1, item_id).Bind(2, prompt_id).Bind(3, settings_key);
  return internal::ReadRows(find, [](const Statement& row) { return row.ColumnInt(0); });
}

}  // namespace reel::storage
