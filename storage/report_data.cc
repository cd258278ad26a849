#include "storage/report_data.h"

#include <algorithm>
#include <cctype>

#include "storage/internal/rows.h"
#include "storage/internal/sqlite.h"
#include "storage/internal/store_shared.h"
#include "storage/tasks.h"

namespace reel::storage {

using internal::Statement;

namespace {

Result<bool> HasColumn(sqlite3* db, const char* table, const char* column) {
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db, std::string("PRAGMA table_info(") + table + ")"));
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return false;
    if (stmt.ColumnText(1) == column) return true;
  }
}

// A usage column of request `r` (every answer it received, refused ones too; schema 7), else of
// its response `p` (the stored answer's only, in older databases).
std::string UsageOf(const ReportColumns& columns, const std::string& column) {
  return columns.request_usage ? "coalesce(r." + column + ", p." + column + ")" : "p." + column;
}

// The columns of an index row, for ListItems and ReadItem (`cost` is the optional cost column's
// expression over requests r).
std::string ItemRowSql(const ReportColumns& columns) {
  const std::string cost =
      columns.request_cost ? "(SELECT sum(r.cost) FROM requests r WHERE r.item_id = i.id)" : "NULL";
  return "SELECT i.id, j.name, i.path, i.kind, i.status, i.error, "
         "json_extract(i.media_json, '$.duration_seconds'), "
         "(SELECT count(*) FROM frames f WHERE f.item_id = i.id), "
         "(SELECT count(*) FROM segments s WHERE s.item_id = i.id), "
         "(SELECT count(DISTINCT r.prompt_id) FROM requests r JOIN responses p "
         " ON p.request_id = r.id WHERE r.item_id = i.id AND r.status = 'succeeded'), "
         "(SELECT count(*) FROM requests r WHERE r.item_id = i.id AND r.status = 'failed' "
         " AND NOT EXISTS (SELECT 1 FROM requests l WHERE l.item_id = r.item_id "
         "  AND l.prompt_id = r.prompt_id AND l.status = 'succeeded' AND l.id > r.id)), "
         "(SELECT coalesce(sum(" +
         UsageOf(columns, "prompt_tokens") +
         "), 0) FROM requests r LEFT JOIN responses p "
         " ON p.request_id = r.id WHERE r.item_id = i.id), "
         "(SELECT coalesce(sum(" +
         UsageOf(columns, "completion_tokens") +
         "), 0) FROM requests r LEFT JOIN responses p "
         " ON p.request_id = r.id WHERE r.item_id = i.id), " +
         cost +
         ", (SELECT f.thumbnail_hash FROM frames f WHERE f.item_id = i.id "
         "   AND f.thumbnail_hash IS NOT NULL AND f.sample_index >= "
         "   (SELECT max(sample_index) FROM frames WHERE item_id = i.id) / 2 "
         "   ORDER BY f.sample_index LIMIT 1), "
         "i.updated_at, i.content_hash, i.size_bytes, i.attempts, i.media_json, i.started_at, "
         "i.finished_at "
         "FROM items i JOIN jobs j ON j.id = i.job_id ";
}

ReportItemRow ReadItemRow(const Statement& s) {
  ReportItemRow row;
  row.item_id = s.ColumnInt(0);
  row.job = s.ColumnText(1);
  row.path = s.ColumnText(2);
  row.kind = s.ColumnText(3);
  row.status = s.ColumnText(4);
  row.error = s.ColumnOptionalText(5);
  row.duration_seconds = s.ColumnOptionalDouble(6);
  row.frames = s.ColumnInt(7);
  row.segments = s.ColumnInt(8);
  row.answers = s.ColumnInt(9);
  row.failed_requests = s.ColumnInt(10);
  row.prompt_tokens = s.ColumnInt(11);
  row.completion_tokens = s.ColumnInt(12);
  row.cost = s.ColumnOptionalDouble(13);
  row.thumbnail_hash = s.ColumnOptionalText(14);
  row.updated_at = s.ColumnText(15);
  return row;
}

// The optional request columns as SQL over alias `r` (NULL when absent).
std::string Optional(bool present, const char* expression) { return present ? expression : "NULL"; }

}  // namespace

Result<ReportReader> ReportReader::Open(const std::string& path) {
  REEL_ASSIGN_OR_RETURN(Database db, Database::OpenReadOnly(path));
  ReportColumns columns;
  REEL_ASSIGN_OR_RETURN(columns.request_ttft, HasColumn(db.handle(), "requests", "ttft_seconds"));
  REEL_ASSIGN_OR_RETURN(columns.request_attempts, HasColumn(db.handle(), "requests", "attempts"));
  REEL_ASSIGN_OR_RETURN(columns.request_outcome, HasColumn(db.handle(), "requests", "outcome"));
  REEL_ASSIGN_OR_RETURN(columns.request_retry_reasons,
                        HasColumn(db.handle(), "requests", "retry_reasons"));
  REEL_ASSIGN_OR_RETURN(columns.request_cost, HasColumn(db.handle(), "requests", "cost"));
  REEL_ASSIGN_OR_RETURN(columns.task_question, HasColumn(db.handle(), "tasks", "question"));
  REEL_ASSIGN_OR_RETURN(columns.context_superseded,
                        HasColumn(db.handle(), "contexts", "superseded_at"));
  REEL_ASSIGN_OR_RETURN(columns.request_usage, HasColumn(db.handle(), "requests", "prompt_tokens"));
  REEL_ASSIGN_OR_RETURN(columns.transcripts, HasColumn(db.handle(), "segments", "confidence"));
  return ReportReader(std::move(db), columns);
}

Status ReportReader::BeginSnapshot() {
  REEL_RETURN_IF_ERROR(internal::Exec(db_.handle(), "BEGIN"));
  // A deferred BEGIN takes its snapshot at the first read.
  return internal::QueryInt(db_.handle(), "SELECT count(*) FROM jobs").status();
}

Status ReportReader::EndSnapshot() { return internal::Exec(db_.handle(), "COMMIT"); }

Result<int64_t> ReportReader::CountItems(const std::optional<std::string>& job) {
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db_.handle(),
                                           "SELECT count(*) FROM items i JOIN jobs j ON "
                                           "j.id = i.job_id WHERE ?1 IS NULL OR j.name = ?1"));
  stmt.Bind(1, job);
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnInt(0) : 0;
}

Result<std::vector<std::pair<std::string, int64_t>>> ReportReader::CountByStatus(
    const std::optional<std::string>& job) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(),
                         "SELECT i.status, count(*) FROM items i JOIN jobs j ON j.id = i.job_id "
                         "WHERE ?1 IS NULL OR j.name = ?1 GROUP BY i.status ORDER BY i.status"));
  stmt.Bind(1, job);
  std::vector<std::pair<std::string, int64_t>> counts;
  REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
    counts.emplace_back(row.ColumnText(0), row.ColumnInt(1));
  }));
  return counts;
}

Result<std::vector<ReportItemRow>> ReportReader::ListItems(const std::optional<std::string>& job,
                                                           int64_t offset, int64_t limit) {
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(db_.handle(), ItemRowSql(columns_) +
                                           "WHERE ?1 IS NULL OR j.name = ?1 "
                                           "ORDER BY j.name, i.path LIMIT ?2 OFFSET ?3"));
  stmt.Bind(1, job).Bind(2, limit).Bind(3, offset);
  std::vector<ReportItemRow> rows;
  REEL_RETURN_IF_ERROR(
      internal::ForEachRow(stmt, [&](const Statement& row) { rows.push_back(ReadItemRow(row)); }));
  return rows;
}

Result<std::optional<int64_t>> ReportReader::FindItem(const std::optional<std::string>& job,
                                                      const std::string& id_or_path) {
  const bool numeric =
      !id_or_path.empty() && std::all_of(id_or_path.begin(), id_or_path.end(),
                                         [](unsigned char c) { return std::isdigit(c); });
  if (numeric) {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(db_.handle(),
                           "SELECT i.id FROM items i JOIN jobs j ON j.id = i.job_id "
                           "WHERE i.id = ?1 AND (?2 IS NULL OR j.name = ?2)"));
    stmt.Bind(1, static_cast<int64_t>(std::stoll(id_or_path))).Bind(2, job);
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row) return std::optional<int64_t>(stmt.ColumnInt(0));
  }
  // The path as the job names it; else the one item whose path ends with "/" + it.
  for (const char* sql : {"SELECT i.id, j.name FROM items i JOIN jobs j ON j.id = i.job_id "
                          "WHERE i.path = ?1 AND (?2 IS NULL OR j.name = ?2) LIMIT 3",
                          "SELECT i.id, j.name FROM items i JOIN jobs j ON j.id = i.job_id "
                          "WHERE substr(i.path, -length(?1) - 1) = '/' || ?1 "
                          "AND (?2 IS NULL OR j.name = ?2) LIMIT 3"}) {
    REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db_.handle(), sql));
    stmt.Bind(1, id_or_path).Bind(2, job);
    std::vector<std::pair<int64_t, std::string>> found;
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      found.emplace_back(row.ColumnInt(0), row.ColumnText(1));
    }));
    if (found.size() == 1) return std::optional<int64_t>(found[0].first);
    if (found.size() > 1) {
      return InvalidArgument("'" + id_or_path + "' names several items (jobs " + found[0].second +
                             ", " + found[1].second + "...); pass --job or the item id");
    }
  }
  return std::optional<int64_t>();
}

Result<ReportItem> ReportReader::ReadItem(int64_t item_id) {
  sqlite3* db = db_.handle();
  ReportItem item;
  {
    REEL_ASSIGN_OR_RETURN(Statement stmt,
                          Statement::Prepare(db, ItemRowSql(columns_) + "WHERE i.id = ?1"));
    stmt.Bind(1, item_id);
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return NotFound("no item with id " + std::to_string(item_id));
    item.row = ReadItemRow(stmt);
    item.content_hash = stmt.ColumnOptionalText(16);
    item.size_bytes = stmt.ColumnInt(17);
    item.attempts = stmt.ColumnInt(18);
    item.media_json = stmt.ColumnOptionalText(19);
    item.started_at = stmt.ColumnOptionalText(20);
    item.finished_at = stmt.ColumnOptionalText(21);
  }
  {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(db,
                           "SELECT f.id, f.sample_index, f.time_seconds, f.width, f.height, "
                           "f.thumbnail_hash, b.size FROM frames f "
                           "LEFT JOIN blobs b ON b.hash = f.thumbnail_hash "
                           "WHERE f.item_id = ?1 ORDER BY f.sample_index"));
    stmt.Bind(1, item_id);
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      item.frames.push_back({row.ColumnInt(0), row.ColumnInt(1), row.ColumnDouble(2),
                             static_cast<int>(row.ColumnInt(3)), static_cast<int>(row.ColumnInt(4)),
                             row.ColumnOptionalText(5), row.ColumnOptionalInt(6)});
    }));
  }
  REEL_ASSIGN_OR_RETURN(item.segments, internal::ReadSegments(db, item_id, columns_.transcripts));
  if (columns_.transcripts) {
    REEL_ASSIGN_OR_RETURN(item.transcript, internal::ReadTranscript(db, item_id));
  }
  {
    const std::string sql =
        "SELECT p.id, r.id, r.prompt_id, r.model, p.content, p.reasoning, p.finish_reason, " +
        UsageOf(columns_, "prompt_tokens") + ", " + UsageOf(columns_, "completion_tokens") + ", " +
        UsageOf(columns_, "cached_tokens") + ", r.latency_seconds, " +
        Optional(columns_.request_ttft, "r.ttft_seconds") + ", " +
        Optional(columns_.request_attempts, "r.attempts") + ", " +
        Optional(columns_.request_cost, "r.cost") +
        ", p.created_at, "
        "(SELECT count(*) FROM requests r2 JOIN responses p2 ON p2.request_id = r2.id "
        " WHERE r2.item_id = r.item_id AND r2.prompt_id = r.prompt_id AND p2.id != p.id "
        " AND r2.status = 'succeeded'), " +
        Optional(columns_.task_question,
                 "(SELECT t.question FROM tasks t WHERE t.id = r.task_id)") +
        " FROM requests r JOIN responses p ON p.request_id = r.id "
        "WHERE r.item_id = ?1 AND p.id = (SELECT p3.id FROM requests r3 JOIN responses p3 "
        " ON p3.request_id = r3.id WHERE r3.item_id = r.item_id AND r3.prompt_id = r.prompt_id "
        " AND r3.status = 'succeeded' ORDER BY p3.created_at DESC, p3.id DESC LIMIT 1) "
        "ORDER BY r.prompt_id";
    REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db, sql));
    stmt.Bind(1, item_id);
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      ReportAnswer a;
      a.response_id = row.ColumnInt(0);
      a.request_id = row.ColumnInt(1);
      a.prompt_id = row.ColumnText(2);
      a.model = row.ColumnOptionalText(3);
      a.content = row.ColumnText(4);
      a.reasoning = row.ColumnOptionalText(5);
      a.finish_reason = row.ColumnOptionalText(6);
      a.prompt_tokens = row.ColumnOptionalInt(7);
      a.completion_tokens = row.ColumnOptionalInt(8);
      a.cached_tokens = row.ColumnOptionalInt(9);
      a.latency_seconds = row.ColumnOptionalDouble(10);
      a.ttft_seconds = row.ColumnOptionalDouble(11);
      a.attempts = row.ColumnOptionalInt(12);
      a.cost = row.ColumnOptionalDouble(13);
      a.created_at = row.ColumnText(14);
      a.earlier_answers = row.ColumnInt(15);
      a.question = row.ColumnOptionalText(16);
      item.answers.push_back(std::move(a));
    }));
  }
  // Answers asked over several files: the files, and each other file as an item of the job.
  {
    REEL_ASSIGN_OR_RETURN(auto files, ReadAnswerFiles(item_id));
    for (ReportAnswer& a : item.answers) {
      const auto found = files.find(a.response_id);
      if (found == files.end()) continue;
      a.files = found->second;
      for (const ReportAnswerFile& f : a.files) {
        if (f.path == item.row.path ||
            std::any_of(item.other_files.begin(), item.other_files.end(),
                        [&](const ReportFileItem& o) { return o.path == f.path; })) {
          continue;
        }
        REEL_ASSIGN_OR_RETURN(ReportFileItem other, ReadFileItem(item_id, f.path));
        item.other_files.push_back(std::move(other));
      }
    }
  }
  {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(
            db, std::string("SELECT c.prompt_id, c.text_tokens, c.image_tokens, "
                            "c.video_tokens, c.audio_tokens, c.total_tokens, "
                            "c.created_at FROM contexts c "
                            "WHERE c.item_id = ?1 AND c.id = (SELECT c2.id FROM "
                            "contexts c2 WHERE c2.item_id = c.item_id AND "
                            "c2.prompt_id = c.prompt_id ") +
                    (columns_.context_superseded ? " AND c2.superseded_at IS NULL " : "") +
                    " ORDER BY c2.created_at DESC, c2.id DESC LIMIT 1) "
                    "ORDER BY c.prompt_id"));
    stmt.Bind(1, item_id);
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      item.contexts.push_back({row.ColumnText(0), row.ColumnInt(1), row.ColumnInt(2),
                               row.ColumnInt(3), row.ColumnInt(4), row.ColumnInt(5),
                               row.ColumnText(6)});
    }));
  }
  {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(db, "SELECT r.prompt_id, coalesce(" +
                                   Optional(columns_.request_outcome, "r.outcome") +
                                   ", ''), coalesce(r.error, ''), "
                                   "coalesce(r.finished_at, r.sent_at), EXISTS (SELECT 1 FROM "
                                   "requests l WHERE l.item_id = r.item_id AND l.prompt_id = "
                                   "r.prompt_id AND l.status = 'succeeded' AND l.id > r.id) "
                                   "FROM requests r WHERE r.item_id = ?1 AND r.status = 'failed' "
                                   "ORDER BY r.id"));
    stmt.Bind(1, item_id);
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      item.request_failures.push_back({row.ColumnText(0), row.ColumnText(1), row.ColumnText(2),
                                       row.ColumnText(3), row.ColumnInt(4) != 0});
    }));
  }
  return item;
}

Result<std::map<int64_t, std::vector<ReportAnswerFile>>> ReportReader::ReadAnswerFiles(
    int64_t item_id) {
  std::map<int64_t, std::vector<ReportAnswerFile>> out;
  // Contexts over several files came long after contexts.base_key (schema 6, with
  // superseded_at): an older file has none.
  if (!columns_.context_superseded) return out;
  // The context an answer was asked over: its own, or for a reduce over a split context's
  // answers, the first segment of the context it was made from (its base key). Its manifest's
  // "sources" (llm/context/context_builder.h) name the files.
  REEL_ASSIGN_OR_RETURN(
      Statement stmt,
      Statement::Prepare(
          db_.handle(),
          "WITH m AS (SELECT p.id AS response_id, (SELECT CASE WHEN json_valid(c2.manifest_json) "
          "  AND json_type(c2.manifest_json, '$.sources') = 'array' "
          "  THEN json_extract(c2.manifest_json, '$.sources') END FROM contexts c2 "
          "  WHERE c2.item_id = c.item_id AND c2.settings_key = coalesce(c.base_key, "
          "  c.settings_key) ORDER BY c2.segment_index, c2.id LIMIT 1) AS sources "
          "  FROM responses p JOIN requests r ON r.id = p.request_id "
          "  JOIN contexts c ON c.id = r.context_id WHERE r.item_id = ?1) "
          "SELECT m.response_id, CASE WHEN s.type = 'object' THEN json_extract(s.value, '$.path') "
          "END, CASE WHEN s.type = 'object' THEN json_extract(s.value, '$.kind') END "
          "FROM m, json_each(m.sources) s ORDER BY m.response_id, s.key"));
  stmt.Bind(1, item_id);
  REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
    if (row.IsNull(1)) return;
    out[row.ColumnInt(0)].push_back({row.ColumnText(1), row.ColumnOptionalText(2).value_or("")});
  }));
  // One file is no answer over several.
  std::erase_if(out, [](const auto& entry) { return entry.second.size() < 2; });
  return out;
}

Result<ReportFileItem> ReportReader::ReadFileItem(int64_t item_id, const std::string& path) {
  ReportFileItem file;
  file.path = path;
  {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(db_.handle(),
                           "SELECT i.id, json_extract(i.media_json, '$.duration_seconds') "
                           "FROM items i WHERE i.path = ?1 AND i.job_id = "
                           "(SELECT job_id FROM items WHERE id = ?2) ORDER BY i.id LIMIT 1"));
    stmt.Bind(1, path).Bind(2, item_id);
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return file;
    file.item_id = stmt.ColumnInt(0);
    file.duration_seconds = stmt.ColumnOptionalDouble(1);
  }
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db_.handle(),
                                           "SELECT sample_index, time_seconds FROM frames "
                                           "WHERE item_id = ?1 ORDER BY sample_index"));
  stmt.Bind(1, *file.item_id);
  REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
    file.sample_indexes.push_back(row.ColumnInt(0));
    file.frame_times.push_back(row.ColumnDouble(1));
  }));
  return file;
}

Result<std::optional<std::string>> ReportReader::ReadBlob(const std::string& hash) {
  REEL_ASSIGN_OR_RETURN(Statement stmt,
                        Statement::Prepare(db_.handle(), "SELECT data FROM blobs WHERE hash = ?1"));
  stmt.Bind(1, hash);
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(stmt.ColumnBlob(0));
}

Result<std::vector<ReportRun>> ReportReader::ReadRuns(const std::optional<std::string>& job,
                                                      int max_runs, int top) {
  sqlite3* db = db_.handle();
  std::vector<ReportRun> runs;
  {
    REEL_ASSIGN_OR_RETURN(
        Statement stmt,
        Statement::Prepare(db,
                           "SELECT r.id, r.uid, r.job_id, r.spec_hash, r.host, r.pid, "
                           "r.shard_index, r.shard_count, r.status, r.started_at, r.finished_at, "
                           "r.items_seen, r.items_done, r.items_skipped, r.items_failed, "
                           "r.frames, r.segments, r.requests, r.message, j.name, "
                           "(julianday(r.finished_at) - julianday(r.started_at)) * 86400 "
                           "FROM runs r JOIN jobs j ON j.id = r.job_id "
                           "WHERE ?1 IS NULL OR j.name = ?1 "
                           "ORDER BY r.started_at DESC, r.id DESC LIMIT ?2"));
    stmt.Bind(1, job).Bind(2, max_runs);
    REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
      ReportRun r;
      RunRecord& run = r.run;
      run.id = row.ColumnInt(0);
      run.uid = row.ColumnText(1);
      run.job_id = row.ColumnInt(2);
      run.spec_hash = row.ColumnText(3);
      run.host = row.ColumnText(4);
      run.pid = row.ColumnInt(5);
      run.shard_index = row.ColumnInt(6);
      run.shard_count = row.ColumnInt(7);
      run.status = RunStatusNames().Parse(row.ColumnText(8)).value_or(RunStatus::kRunning);
      run.started_at = row.ColumnText(9);
      run.finished_at = row.ColumnOptionalText(10);
      run.counters = {row.ColumnInt(11), row.ColumnInt(12), row.ColumnInt(13), row.ColumnInt(14),
                      row.ColumnInt(15), row.ColumnInt(16), row.ColumnInt(17)};
      run.message = row.ColumnOptionalText(18);
      r.job = row.ColumnText(19);
      r.wall_seconds = row.ColumnOptionalDouble(20);
      runs.push_back(std::move(r));
    }));
  }
  for (ReportRun& r : runs) {
    const int64_t id = r.run.id;
    {
      REEL_ASSIGN_OR_RETURN(
          Statement stmt,
          Statement::Prepare(db,
                             "SELECT status, count(*) FROM requests WHERE run_id = ?1 "
                             "GROUP BY status"));
      stmt.Bind(1, id);
      REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
        const std::string status = row.ColumnText(0);
        int64_t n = row.ColumnInt(1);
        (status == "succeeded" ? r.requests_succeeded
         : status == "failed"  ? r.requests_failed
                               : r.requests_sent) += n;
      }));
    }
    {
      const std::string sql =
          "SELECT coalesce(sum(" + UsageOf(columns_, "prompt_tokens") + "), 0), coalesce(sum(" +
          UsageOf(columns_, "completion_tokens") + "), 0), coalesce(sum(" +
          UsageOf(columns_, "cached_tokens") + "), 0), " +
          Optional(columns_.request_attempts, "sum(r.attempts - 1)") + ", " +
          Optional(columns_.request_cost, "sum(r.cost)") +
          ", (SELECT count(*) FROM requests f WHERE f.run_id = ?1 AND f.status = 'failed' "
          "   AND EXISTS (SELECT 1 FROM requests l WHERE l.item_id = f.item_id "
          "   AND l.prompt_id = f.prompt_id AND l.id > f.id)), " +
          Optional(columns_.request_retry_reasons,
                   "sum(CASE WHEN json_valid(r.retry_reasons) THEN (SELECT count(*) FROM "
                   "json_each(r.retry_reasons) WHERE substr(value, 1, length(?2)) = ?2) "
                   "ELSE 0 END)") +
          " FROM requests r LEFT JOIN responses p ON p.request_id = r.id WHERE r.run_id = ?1";
      REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db, sql));
      stmt.Bind(1, id);
      if (columns_.request_retry_reasons) stmt.Bind(2, kAnswerCheckRetry);
      REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (row) {
        r.prompt_tokens = stmt.ColumnInt(0);
        r.completion_tokens = stmt.ColumnInt(1);
        r.cached_tokens = stmt.ColumnInt(2);
        r.retries = stmt.ColumnOptionalInt(3);
        r.cost = stmt.ColumnOptionalDouble(4);
        r.reasked = stmt.ColumnInt(5);
        if (r.retries) {
          r.rechecked = stmt.ColumnOptionalInt(6).value_or(0);
          r.retries = std::max<int64_t>(0, *r.retries - *r.rechecked);
        }
      }
    }
    {
      const std::string sql = "SELECT latency_seconds, " +
                              Optional(columns_.request_ttft, "ttft_seconds") +
                              " FROM requests WHERE run_id = ?1 AND status != 'sent'";
      REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db, sql));
      stmt.Bind(1, id);
      REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
        if (!row.IsNull(0)) r.latencies.push_back(row.ColumnDouble(0));
        if (!row.IsNull(1)) r.ttfts.push_back(row.ColumnDouble(1));
      }));
    }
    // Per item: processing time (items this run last started) and its requests in the run.
    const std::string per_item =
        "WITH req AS (SELECT r.item_id, sum(coalesce(r.latency_seconds, 0)) AS secs, "
        "  sum(coalesce(" +
        UsageOf(columns_, "prompt_tokens") + ", 0) + coalesce(" +
        UsageOf(columns_, "completion_tokens") + ", 0)) AS tokens, " +
        Optional(columns_.request_cost, "sum(r.cost)") +
        " AS cost FROM requests r LEFT JOIN responses p ON p.request_id = r.id "
        "  WHERE r.run_id = ?1 GROUP BY r.item_id), "
        "it AS (SELECT i.id AS item_id, (julianday(i.finished_at) - julianday(i.started_at)) "
        "  * 86400 AS processing FROM items i WHERE i.last_run_id = ?1 "
        "  AND i.finished_at IS NOT NULL AND i.started_at IS NOT NULL) "
        "SELECT x.item_id, i.path, it.processing, coalesce(req.secs, 0), "
        "coalesce(req.tokens, 0), req.cost "
        "FROM (SELECT item_id FROM req UNION SELECT item_id FROM it) x "
        "JOIN items i ON i.id = x.item_id LEFT JOIN req ON req.item_id = x.item_id "
        "LEFT JOIN it ON it.item_id = x.item_id ";
    auto read_items = [&](const std::string& order, std::vector<ReportRunItem>& out) -> Status {
      REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db, per_item + order + " LIMIT ?2"));
      stmt.Bind(1, id).Bind(2, top);
      REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
        out.push_back({row.ColumnInt(0), row.ColumnText(1), row.ColumnOptionalDouble(2),
                       row.ColumnDouble(3), row.ColumnInt(4), row.ColumnOptionalDouble(5)});
      }));
      return Status::Ok();
    };
    REEL_RETURN_IF_ERROR(
        read_items("WHERE it.processing IS NOT NULL OR req.secs > 0 "
                   "ORDER BY coalesce(it.processing, 0) + coalesce(req.secs, 0) DESC, i.path",
                   r.slowest));
    REEL_RETURN_IF_ERROR(read_items(columns_.request_cost
                                        ? "WHERE req.item_id IS NOT NULL "
                                          "ORDER BY coalesce(req.cost, 0) DESC, req.tokens DESC, "
                                          "i.path"
                                        : "WHERE req.tokens > 0 ORDER BY req.tokens DESC, i.path",
                                    r.most_expensive));
    {
      REEL_ASSIGN_OR_RETURN(
          Statement stmt,
          Statement::Prepare(
              db,
              "SELECT (julianday(r.finished_at) - julianday(?2)) * 86400, "
              "coalesce(" +
                  UsageOf(columns_, "prompt_tokens") + ", 0), coalesce(" +
                  UsageOf(columns_, "completion_tokens") +
                  ", 0), 0, 0 "
                  "FROM requests r LEFT JOIN responses p ON p.request_id = r.id "
                  "WHERE r.run_id = ?1 AND r.finished_at IS NOT NULL "
                  "UNION ALL "
                  "SELECT (julianday(i.finished_at) - julianday(?2)) * 86400, 0, 0, 1, "
                  "(SELECT count(*) FROM frames f WHERE f.item_id = i.id) "
                  "FROM items i WHERE i.last_run_id = ?1 AND i.finished_at IS NOT NULL "
                  "AND i.status IN ('done', 'failed') ORDER BY 1"));
      stmt.Bind(1, id).Bind(2, r.run.started_at);
      REEL_RETURN_IF_ERROR(internal::ForEachRow(stmt, [&](const Statement& row) {
        r.events.push_back({std::max(0.0, row.ColumnDouble(0)), row.ColumnInt(1), row.ColumnInt(2),
                            row.ColumnInt(3), row.ColumnInt(4)});
      }));
    }
    // Work recorded after the run's end (answers imported later) extends it.
    if (!r.events.empty() && (!r.wall_seconds || *r.wall_seconds < r.events.back().at_seconds)) {
      r.wall_seconds = r.events.back().at_seconds;
    }
  }
  return runs;
}

}  // namespace reel::storage
