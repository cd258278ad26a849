#include "storage/merge.h"

#include <filesystem>

#include "storage/internal/schema.h"
#include "storage/internal/sqlite.h"

namespace reel::storage {
namespace {

using internal::Statement;
using internal::Transaction;

// A read-only SQLite URI for `path` (percent-encoding everything but unreserved bytes and '/').
std::string ReadOnlyUri(const std::string& path) {
  std::string absolute = std::filesystem::absolute(path).string();
  static const char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : absolute) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri + "?mode=ro";
}

// The statements that fold the attached `src` into `main`, in order, each with the counter it
// adds its changed-row count to. `merge_items` maps every shard item to its output row.
struct Step {
  const char* sql;
  int64_t MergeStats::*counter;  // null: not counted
};

// clang-format off
constexpr Step kSteps[] = {
  {"INSERT INTO main.blobs(hash, size, data, created_at) "
   "SELECT hash, size, data, created_at FROM src.blobs WHERE true "
   "ON CONFLICT(hash) DO NOTHING", &MergeStats::blobs},

  {"INSERT INTO main.jobs(name, spec_text, spec_hash, created_at, updated_at) "
   "SELECT name, spec_text, spec_hash, created_at, updated_at FROM src.jobs WHERE true "
   "ON CONFLICT(name) DO NOTHING", &MergeStats::jobs},

  // A run merged while it was still running is completed by a later merge.
  {"INSERT INTO main.runs(uid, job_id, spec_hash, status, started_at, finished_at, host, pid, "
   "  shard_index, shard_count, items_seen, items_done, items_skipped, items_failed, frames, "
   "  segments, requests, message, report_json) "
   "SELECT r.uid, mj.id, r.spec_hash, r.status, r.started_at, r.finished_at, r.host, r.pid, "
   "  r.shard_index, r.shard_count, r.items_seen, r.items_done, r.items_skipped, "
   "  r.items_failed, r.frames, r.segments, r.requests, r.message, r.report_json "
   "FROM src.runs r JOIN src.jobs sj ON sj.id = r.job_id JOIN main.jobs mj ON mj.name = sj.name "
   "WHERE true ON CONFLICT(uid) DO UPDATE SET status = excluded.status, "
   "  finished_at = excluded.finished_at, items_seen = excluded.items_seen, "
   "  items_done = excluded.items_done, items_skipped = excluded.items_skipped, "
   "  items_failed = excluded.items_failed, frames = excluded.frames, "
   "  segments = excluded.segments, requests = excluded.requests, message = excluded.message, "
   "  report_json = excluded.report_json "
   "WHERE runs.status = 'running' AND excluded.status != 'running'", &MergeStats::runs},

  {"CREATE TEMP TABLE merge_items(src_id INTEGER PRIMARY KEY, dst_id INTEGER, "
   "  job_id INTEGER NOT NULL, path TEXT NOT NULL, wins INTEGER NOT NULL, "
   "  same INTEGER NOT NULL)", nullptr},

  {"INSERT INTO temp.merge_items(src_id, dst_id, job_id, path, wins, same) "
   "SELECT s.id, d.id, mj.id, s.path, "
   "  d.id IS NULL OR (s.status = 'done', s.updated_at) > (d.status = 'done', d.updated_at), "
   "  d.id IS NOT NULL AND s.content_hash IS d.content_hash AND "
   "    s.settings_hash = d.settings_hash "
   "FROM src.items s JOIN src.jobs sj ON sj.id = s.job_id "
   "JOIN main.jobs mj ON mj.name = sj.name "
   "LEFT JOIN main.items d ON d.job_id = mj.id AND d.path = s.path", nullptr},

  // Winners replace the output's outputs wholesale (features go with their frames).
  {"DELETE FROM main.frames WHERE item_id IN "
   "(SELECT dst_id FROM temp.merge_items WHERE wins AND dst_id IS NOT NULL)", nullptr},
  {"DELETE FROM main.segments WHERE item_id IN "
   "(SELECT dst_id FROM temp.merge_items WHERE wins AND dst_id IS NOT NULL)", nullptr},

  {"INSERT INTO main.items(job_id, path, kind, content_hash, size_bytes, mtime_ns, inode, "
   "  media_json, settings_hash, status, error, attempts, last_run_id, created_at, updated_at, "
   "  started_at, finished_at) "
   "SELECT m.job_id, s.path, s.kind, s.content_hash, s.size_bytes, s.mtime_ns, s.inode, "
   "  s.media_json, s.settings_hash, s.status, s.error, s.attempts, "
   "  (SELECT mr.id FROM src.runs sr JOIN main.runs mr ON mr.uid = sr.uid "
   "   WHERE sr.id = s.last_run_id), "
   "  s.created_at, s.updated_at, s.started_at, s.finished_at "
   "FROM src.items s JOIN temp.merge_items m ON m.src_id = s.id WHERE m.wins "
   "ON CONFLICT(job_id, path) DO UPDATE SET kind = excluded.kind, "
   "  content_hash = excluded.content_hash, size_bytes = excluded.size_bytes, "
   "  mtime_ns = excluded.mtime_ns, inode = excluded.inode, media_json = excluded.media_json, "
   "  settings_hash = excluded.settings_hash, status = excluded.status, error = excluded.error, "
   "  attempts = excluded.attempts, last_run_id = excluded.last_run_id, "
   "  updated_at = excluded.updated_at, started_at = excluded.started_at, "
   "  finished_at = excluded.finished_at", &MergeStats::items},

  {"UPDATE temp.merge_items SET dst_id = (SELECT d.id FROM main.items d "
   "  WHERE d.job_id = merge_items.job_id AND d.path = merge_items.path) "
   "WHERE dst_id IS NULL", nullptr},

  {"INSERT INTO main.frames(item_id, sample_index, source_frame, pts_seconds, time_seconds, "
   "  width, height, thumbnail_hash, phash, duplicate_of) "
   "SELECT m.dst_id, f.sample_index, f.source_frame, f.pts_seconds, f.time_seconds, f.width, "
   "  f.height, f.thumbnail_hash, f.phash, f.duplicate_of "
   "FROM src.frames f JOIN temp.merge_items m ON m.src_id = f.item_id "
   "WHERE m.wins OR m.same ON CONFLICT DO NOTHING", &MergeStats::frames},

  {"INSERT INTO main.segments(item_id, source, start_seconds, end_seconds, text, text_hash, "
   "  language, confidence, words_json) "
   "SELECT m.dst_id, g.source, g.start_seconds, g.end_seconds, g.text, g.text_hash, g.language, "
   "  g.confidence, g.words_json "
   "FROM src.segments g JOIN temp.merge_items m ON m.src_id = g.item_id "
   "WHERE m.wins OR m.same ON CONFLICT DO NOTHING", &MergeStats::segments},

  // Transcripts go with their speech segments: a winner's replaces the output's.
  {"DELETE FROM main.transcripts WHERE item_id IN "
   "(SELECT dst_id FROM temp.merge_items WHERE wins AND dst_id IS NOT NULL)", nullptr},
  {"INSERT INTO main.transcripts(item_id, settings_key, backend, model, language, status, "
   "  segments, chunks, failed_chunks, speech_seconds, note, error, created_at, updated_at) "
   "SELECT m.dst_id, t.settings_key, t.backend, t.model, t.language, t.status, t.segments, "
   "  t.chunks, t.failed_chunks, t.speech_seconds, t.note, t.error, t.created_at, t.updated_at "
   "FROM src.transcripts t JOIN temp.merge_items m ON m.src_id = t.item_id "
   "WHERE m.wins OR m.same ON CONFLICT DO NOTHING", nullptr},
  {"INSERT INTO main.transcript_chunks(item_id, chunk, start_seconds, end_seconds, segments) "
   "SELECT m.dst_id, c.chunk, c.start_seconds, c.end_seconds, c.segments "
   "FROM src.transcript_chunks c JOIN temp.merge_items m ON m.src_id = c.item_id "
   "WHERE (m.wins OR m.same) AND EXISTS (SELECT 1 FROM main.transcripts mt WHERE "
   "  mt.item_id = m.dst_id AND mt.settings_key = (SELECT settings_key FROM src.transcripts st "
   "  WHERE st.item_id = c.item_id)) ON CONFLICT DO NOTHING", nullptr},

  {"INSERT INTO main.features(frame_id, model, dtype, dims_json, blob_hash, created_at, "
   "  input_hash) "
   "SELECT df.id, ft.model, ft.dtype, ft.dims_json, ft.blob_hash, ft.created_at, ft.input_hash "
   "FROM src.features ft JOIN src.frames sf ON sf.id = ft.frame_id "
   "JOIN temp.merge_items m ON m.src_id = sf.item_id "
   "JOIN main.frames df ON df.item_id = m.dst_id AND df.sample_index = sf.sample_index "
   "WHERE m.wins OR m.same ON CONFLICT DO NOTHING", &MergeStats::features},

  {"INSERT INTO main.contexts(item_id, prompt_id, context_hash, text_tokens, image_tokens, "
   "  video_tokens, audio_tokens, total_tokens, manifest_json, created_at, settings_key, "
   "  count_method, transport, segment_index, segment_count, base_key, superseded_at, "
   "  frame_source) "
   "SELECT m.dst_id, c.prompt_id, c.context_hash, c.text_tokens, c.image_tokens, "
   "  c.video_tokens, c.audio_tokens, c.total_tokens, c.manifest_json, c.created_at, "
   "  c.settings_key, c.count_method, c.transport, c.segment_index, c.segment_count, "
   "  c.base_key, c.superseded_at, c.frame_source "
   "FROM src.contexts c JOIN temp.merge_items m ON m.src_id = c.item_id "
   "WHERE true ON CONFLICT DO NOTHING", &MergeStats::contexts},

  // Tasks by custom_id: the shard's state wins unless the output's task is answered already.
  {"INSERT INTO main.tasks(custom_id, item_id, prompt_id, context_id, step, segment_index, "
   "  segment_count, start_seconds, end_seconds, status, local_prompt_tokens, "
   "  server_count_tokens, json_schema, created_at, updated_at, retired_at, question) "
   "SELECT t.custom_id, m.dst_id, t.prompt_id, "
   "  (SELECT dc.id FROM src.contexts sc JOIN main.contexts dc ON dc.item_id = m.dst_id "
   "     AND dc.prompt_id = sc.prompt_id AND dc.context_hash = sc.context_hash "
   "   WHERE sc.id = t.context_id), "
   "  t.step, t.segment_index, t.segment_count, t.start_seconds, t.end_seconds, t.status, "
   "  t.local_prompt_tokens, t.server_count_tokens, t.json_schema, t.created_at, t.updated_at, "
   "  t.retired_at, t.question "
   "FROM src.tasks t JOIN temp.merge_items m ON m.src_id = t.item_id "
   "WHERE true ON CONFLICT(custom_id) DO UPDATE SET status = excluded.status, "
   "  server_count_tokens = coalesce(excluded.server_count_tokens, tasks.server_count_tokens), "
   "  updated_at = excluded.updated_at, retired_at = excluded.retired_at "
   "WHERE tasks.status != 'succeeded' AND "
   "  (excluded.status = 'succeeded' OR excluded.updated_at > tasks.updated_at)",
   &MergeStats::tasks},

  // A request merged while in flight is completed by a later merge.
  {"INSERT INTO main.requests(uid, item_id, context_id, run_id, prompt_id, model, status, "
   "  error, latency_seconds, sent_at, finished_at, task_id, via, outcome, http_status, "
   "  attempts, retry_reasons, total_seconds, ttft_seconds, request_bytes, server_request_id, "
   "  local_prompt_tokens, too_long_prompt_tokens, too_long_output_tokens, "
   "  too_long_context_length, cost, prompt_tokens, completion_tokens, cached_tokens, "
   "  reasoning_tokens) "
   "SELECT r.uid, m.dst_id, "
   "  (SELECT dc.id FROM src.contexts sc JOIN main.contexts dc ON dc.item_id = m.dst_id "
   "     AND dc.prompt_id = sc.prompt_id AND dc.context_hash = sc.context_hash "
   "   WHERE sc.id = r.context_id), "
   "  (SELECT mr.id FROM src.runs sr JOIN main.runs mr ON mr.uid = sr.uid "
   "   WHERE sr.id = r.run_id), "
   "  r.prompt_id, r.model, r.status, r.error, r.latency_seconds, r.sent_at, r.finished_at, "
   "  (SELECT dt.id FROM src.tasks st JOIN main.tasks dt ON dt.custom_id = st.custom_id "
   "   WHERE st.id = r.task_id), "
   "  r.via, r.outcome, r.http_status, r.attempts, r.retry_reasons, r.total_seconds, "
   "  r.ttft_seconds, r.request_bytes, r.server_request_id, r.local_prompt_tokens, "
   "  r.too_long_prompt_tokens, r.too_long_output_tokens, r.too_long_context_length, r.cost, "
   "  r.prompt_tokens, r.completion_tokens, r.cached_tokens, r.reasoning_tokens "
   "FROM src.requests r JOIN temp.merge_items m ON m.src_id = r.item_id "
   "WHERE true ON CONFLICT(uid) DO UPDATE SET status = excluded.status, "
   "  error = excluded.error, latency_seconds = excluded.latency_seconds, "
   "  finished_at = excluded.finished_at, outcome = excluded.outcome, "
   "  http_status = excluded.http_status, attempts = excluded.attempts, "
   "  retry_reasons = excluded.retry_reasons, total_seconds = excluded.total_seconds, "
   "  ttft_seconds = excluded.ttft_seconds, request_bytes = excluded.request_bytes, "
   "  server_request_id = excluded.server_request_id, "
   "  too_long_prompt_tokens = excluded.too_long_prompt_tokens, "
   "  too_long_output_tokens = excluded.too_long_output_tokens, "
   "  too_long_context_length = excluded.too_long_context_length, cost = excluded.cost, "
   "  prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens, "
   "  cached_tokens = excluded.cached_tokens, reasoning_tokens = excluded.reasoning_tokens "
   "WHERE requests.status = 'sent' AND excluded.status != 'sent'", &MergeStats::requests},

  {"INSERT INTO main.responses(request_id, content, reasoning, finish_reason, prompt_tokens, "
   "  completion_tokens, cached_tokens, created_at, json_answer, truncated, reasoning_tokens, "
   "  response_uid, check_error) "
   "SELECT dr.id, p.content, p.reasoning, p.finish_reason, p.prompt_tokens, "
   "  p.completion_tokens, p.cached_tokens, p.created_at, p.json_answer, p.truncated, "
   "  p.reasoning_tokens, p.response_uid, p.check_error "
   "FROM src.responses p JOIN src.requests sr ON sr.id = p.request_id "
   "JOIN main.requests dr ON dr.uid = sr.uid "
   "WHERE true ON CONFLICT(request_id) DO NOTHING", &MergeStats::responses},

  // Time references travel with their response (a response already in the output keeps its own).
  {"INSERT INTO main.answer_times(response_id, char_start, char_end, text, form, seconds, "
   "  end_seconds) "
   "SELECT dp.id, t.char_start, t.char_end, t.text, t.form, t.seconds, t.end_seconds "
   "FROM src.answer_times t JOIN src.responses p ON p.id = t.response_id "
   "JOIN src.requests sr ON sr.id = p.request_id JOIN main.requests dr ON dr.uid = sr.uid "
   "JOIN main.responses dp ON dp.request_id = dr.id "
   "WHERE NOT EXISTS (SELECT 1 FROM main.answer_time_scans s WHERE s.response_id = dp.id) "
   "ON CONFLICT(response_id, char_start) DO NOTHING", nullptr},
  {"INSERT INTO main.answer_time_scans(response_id, grammar_version, scanned_at) "
   "SELECT dp.id, s.grammar_version, s.scanned_at "
   "FROM src.answer_time_scans s JOIN src.responses p ON p.id = s.response_id "
   "JOIN src.requests sr ON sr.id = p.request_id JOIN main.requests dr ON dr.uid = sr.uid "
   "JOIN main.responses dp ON dp.request_id = dr.id "
   "WHERE true ON CONFLICT(response_id) DO NOTHING", nullptr},
  // Each task points at its latest send: the shard's, where the shard's state won.
  {"UPDATE main.tasks SET request_id = (SELECT dr.id FROM src.tasks st "
   "  JOIN src.requests sr ON sr.id = st.request_id JOIN main.requests dr ON dr.uid = sr.uid "
   "  WHERE st.custom_id = tasks.custom_id) "
   "WHERE custom_id IN (SELECT st.custom_id FROM src.tasks st WHERE st.status = tasks.status "
   "  AND st.updated_at = tasks.updated_at AND st.request_id IS NOT NULL)", nullptr},

  {"INSERT INTO main.events(uid, run_id, item_id, level, time, message) "
   "SELECT e.uid, "
   "  (SELECT mr.id FROM src.runs sr JOIN main.runs mr ON mr.uid = sr.uid "
   "   WHERE sr.id = e.run_id), "
   "  (SELECT m.dst_id FROM temp.merge_items m WHERE m.src_id = e.item_id), "
   "  e.level, e.time, e.message "
   "FROM src.events e WHERE true ON CONFLICT(uid) DO NOTHING", &MergeStats::events},

  {"DROP TABLE temp.merge_items", nullptr},
};
// clang-format on

Status MergeOne(sqlite3* db, MergeStats& stats) {
  REEL_ASSIGN_OR_RETURN(int64_t version, internal::QueryInt(db, "PRAGMA src.user_version"));
  if (version != internal::LatestSchemaVersion()) {
    return Unsupported("schema version " + std::to_string(version) + ", expected " +
                       std::to_string(internal::LatestSchemaVersion()) +
                       " (open it once with this build of reel to migrate it)");
  }
  REEL_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  MergeStats shard;
  for (const Step& step : kSteps) {
    REEL_RETURN_IF_ERROR(internal::Exec(db, step.sql));
    if (step.counter != nullptr) shard.*(step.counter) += sqlite3_changes(db);
  }
  REEL_RETURN_IF_ERROR(txn.Commit());
  for (const Step& step : kSteps) {
    if (step.counter != nullptr) stats.*(step.counter) += shard.*(step.counter);
  }
  ++stats.shards;
  return Status::Ok();
}

}  // namespace

Result<MergeStats> Merge(const std::string& out_path, const std::vector<std::string>& shard_paths,
                         const DatabaseOptions& options) {
  for (const std::string& shard : shard_paths) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(shard, ec)) return NotFound(shard + ": no such database");
  }
  REEL_ASSIGN_OR_RETURN(Database out, Database::Open(out_path, options));
  sqlite3* db = out.handle();
  MergeStats stats;
  for (const std::string& shard : shard_paths) {
    std::error_code ec;
    if (std::filesystem::equivalent(shard, out_path, ec)) {
      return InvalidArgument(shard + ": cannot merge a database into itself");
    }
    REEL_ASSIGN_OR_RETURN(Statement attach, Statement::Prepare(db, "ATTACH ?1 AS src"));
    Status attached = attach.Bind(1, ReadOnlyUri(shard)).Run();
    if (!attached.ok()) return attached.WithPrefix(shard);
    Status merged = MergeOne(db, stats);
    // A failed step leaves the temp table behind; drop it so the next shard starts clean.
    internal::Exec(db, "DROP TABLE IF EXISTS temp.merge_items").ok();
    Status detached = internal::Exec(db, "DETACH src");
    if (!merged.ok()) return merged.WithPrefix(shard);
    if (!detached.ok()) return detached.WithPrefix(shard);
  }
  return stats;
}

}  // namespace reel::storage
