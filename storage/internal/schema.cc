#include "storage/internal/schema.h"

namespace reel::storage::internal {
namespace {

// Version 1: the initial schema. Times are ISO-8601 UTC text (see kNowSql); media times are REAL
// seconds; hashes are lowercase SHA-256 hex unless stated otherwise.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE blobs (
  hash       TEXT PRIMARY KEY,            -- SHA-256 hex of data
  size       INTEGER NOT NULL CHECK (size >= 0),
  data       BLOB NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
) STRICT;

CREATE TABLE jobs (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  spec_text  TEXT NOT NULL,               -- the resolved job spec (YAML/JSON text)
  spec_hash  TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
) STRICT;

CREATE TABLE runs (
  id            INTEGER PRIMARY KEY,
  uid           TEXT NOT NULL UNIQUE,     -- random; the key merges use
  job_id        INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  spec_hash     TEXT NOT NULL,
  status        TEXT NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted')),
  started_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  finished_at   TEXT,
  host          TEXT NOT NULL,
  pid           INTEGER NOT NULL,
  shard_index   INTEGER NOT NULL DEFAULT 0,
  shard_count   INTEGER NOT NULL DEFAULT 1 CHECK (shard_count >= 1),
  items_seen    INTEGER NOT NULL DEFAULT 0,
  items_done    INTEGER NOT NULL DEFAULT 0,
  items_skipped INTEGER NOT NULL DEFAULT 0,
  items_failed  INTEGER NOT NULL DEFAULT 0,
  frames        INTEGER NOT NULL DEFAULT 0,
  segments      INTEGER NOT NULL DEFAULT 0,
  requests      INTEGER NOT NULL DEFAULT 0,
  message       TEXT                      -- why a run failed or was interrupted
) STRICT;
CREATE INDEX runs_job ON runs(job_id, started_at);

CREATE TABLE items (
  id            INTEGER PRIMARY KEY,
  job_id        INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  path          TEXT NOT NULL,
  kind          TEXT NOT NULL CHECK (kind IN ('video', 'image', 'document', 'subtitle')),
  content_hash  TEXT,                     -- SHA-256 hex of the file, NULL until computed
  size_bytes    INTEGER NOT NULL DEFAULT 0,
  mtime_ns      INTEGER,                  -- st_mtime in nanoseconds since the epoch
  inode         INTEGER,
  media_json    TEXT CHECK (media_json IS NULL OR json_valid(media_json)),
  settings_hash TEXT NOT NULL,            -- hash of the settings that shape this item's outputs
  status        TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'running', 'done', 'failed')),
  error         TEXT,
  attempts      INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  last_run_id   INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  started_at    TEXT,
  finished_at   TEXT,
  UNIQUE (job_id, path)
) STRICT;
CREATE INDEX items_status ON items(job_id, status);

CREATE TABLE frames (
  id             INTEGER PRIMARY KEY,
  item_id        INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
  sample_index   INTEGER NOT NULL CHECK (sample_index >= 0),  -- position in the sample
  source_frame   INTEGER,                 -- decoded frame number in the stream, if known
  pts_seconds    REAL,                    -- presentation time stamp, stream time base
  time_seconds   REAL NOT NULL,           -- seconds from the start of the media
  width          INTEGER NOT NULL,
  height         INTEGER NOT NULL,
  thumbnail_hash TEXT REFERENCES blobs(hash),  -- small JPEG
  phash          INTEGER,                 -- 64-bit perceptual hash, bits as signed int64
  UNIQUE (item_id, sample_index)
) STRICT;
CREATE INDEX frames_thumbnail ON frames(thumbnail_hash);

CREATE TABLE segments (
  id            INTEGER PRIMARY KEY,
  item_id       INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
  source        TEXT NOT NULL,            -- e.g. 'subtitle:0', 'sidecar:en.srt', 'document'
  start_seconds REAL NOT NULL,
  end_seconds   REAL NOT NULL CHECK (end_seconds >= start_seconds),
  text          TEXT NOT NULL,
  text_hash     TEXT NOT NULL,            -- SHA-256 hex of text
  language      TEXT,                     -- BCP-47 / ISO-639 tag if known
  UNIQUE (item_id, source, start_seconds, text_hash)
) STRICT;

CREATE TABLE features (
  id         INTEGER PRIMARY KEY,
  frame_id   INTEGER NOT NULL REFERENCES frames(id) ON DELETE CASCADE,
  model      TEXT NOT NULL,
  dtype      TEXT NOT NULL CHECK (dtype IN ('f32', 'f16', 'bf16', 'i8', 'u8')),
  dims_json  TEXT NOT NULL CHECK (json_valid(dims_json)),  -- e.g. [256, 1152]
  blob_hash  TEXT NOT NULL REFERENCES blobs(hash),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  UNIQUE (frame_id, model)
) STRICT;
CREATE INDEX features_blob ON features(blob_hash);

CREATE TABLE contexts (
  id            INTEGER PRIMARY KEY,
  item_id       INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
  prompt_id     TEXT NOT NULL,
  context_hash  TEXT NOT NULL,            -- SHA-256 hex of manifest_json
  text_tokens   INTEGER NOT NULL DEFAULT 0,
  image_tokens  INTEGER NOT NULL DEFAULT 0,
  video_tokens  INTEGER NOT NULL DEFAULT 0,
  audio_tokens  INTEGER NOT NULL DEFAULT 0,
  total_tokens  INTEGER NOT NULL DEFAULT 0,
  manifest_json TEXT NOT NULL CHECK (json_valid(manifest_json)),
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  UNIQUE (item_id, prompt_id, context_hash)
) STRICT;

CREATE TABLE requests (
  id              INTEGER PRIMARY KEY,
  uid             TEXT NOT NULL UNIQUE,   -- random; the key merges use
  item_id         INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
  context_id      INTEGER REFERENCES contexts(id) ON DELETE SET NULL,
  run_id          INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  prompt_id       TEXT NOT NULL,
  model           TEXT,
  status          TEXT NOT NULL DEFAULT 'sent' CHECK (status IN ('sent', 'succeeded', 'failed')),
  error           TEXT,
  latency_seconds REAL,
  sent_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  finished_at     TEXT
) STRICT;
CREATE INDEX requests_item ON requests(item_id, prompt_id);

CREATE TABLE responses (
  id                INTEGER PRIMARY KEY,
  request_id        INTEGER NOT NULL UNIQUE REFERENCES requests(id) ON DELETE CASCADE,
  content           TEXT NOT NULL,
  reasoning         TEXT,
  finish_reason     TEXT,
  prompt_tokens     INTEGER,
  completion_tokens INTEGER,
  cached_tokens     INTEGER,
  created_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
) STRICT;

CREATE TABLE events (
  id      INTEGER PRIMARY KEY,
  uid     TEXT NOT NULL UNIQUE,           -- random; the key merges use
  run_id  INTEGER REFERENCES runs(id) ON DELETE CASCADE,
  item_id INTEGER REFERENCES items(id) ON DELETE CASCADE,
  level   TEXT NOT NULL CHECK (level IN ('debug', 'info', 'warning', 'error')),
  time    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  message TEXT NOT NULL
) STRICT;
CREATE INDEX events_run ON events(run_id, time);
CREATE INDEX events_item ON events(item_id);

-- Full-text search. External-content FTS5 tables: the text lives once, in responses/segments;
-- triggers keep the indexes in step.
CREATE VIRTUAL TABLE responses_fts USING fts5(
  content, content='responses', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER responses_fts_insert AFTER INSERT ON responses BEGIN
  INSERT INTO responses_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER responses_fts_delete AFTER DELETE ON responses BEGIN
  INSERT INTO responses_fts(responses_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER responses_fts_update AFTER UPDATE OF content ON responses BEGIN
  INSERT INTO responses_fts(responses_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO responses_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE VIRTUAL TABLE segments_fts USING fts5(
  text, content='segments', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER segments_fts_insert AFTER INSERT ON segments BEGIN
  INSERT INTO segments_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER segments_fts_delete AFTER DELETE ON segments BEGIN
  INSERT INTO segments_fts(segments_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER segments_fts_update AFTER UPDATE OF text ON segments BEGIN
  INSERT INTO segments_fts(segments_fts, rowid, text) VALUES ('delete', old.id, old.text);
  INSERT INTO segments_fts(rowid, text) VALUES (new.id, new.text);
END;

-- Views for the common questions.
CREATE VIEW answers AS
SELECT resp.id AS response_id, req.id AS request_id, j.name AS job, i.id AS item_id,
       i.path, req.prompt_id, req.model, resp.content, resp.reasoning, resp.finish_reason,
       resp.prompt_tokens, resp.completion_tokens, resp.cached_tokens, req.latency_seconds,
       resp.created_at
FROM responses resp
JOIN requests req ON req.id = resp.request_id
JOIN items i ON i.id = req.item_id
JOIN jobs j ON j.id = i.job_id;

CREATE VIEW latest_answers AS
SELECT job, item_id, path, prompt_id, model, content, reasoning, finish_reason, prompt_tokens,
       completion_tokens, cached_tokens, latency_seconds, created_at, response_id
FROM (SELECT a.*, row_number() OVER (PARTITION BY item_id, prompt_id
                                     ORDER BY created_at DESC, response_id DESC) AS rank_in_item
      FROM answers a)
WHERE rank_in_item = 1;

CREATE VIEW failures AS
SELECT j.name AS job, i.id AS item_id, i.path, i.kind, 'item' AS stage, NULL AS prompt_id,
       i.error, i.attempts, i.updated_at AS time
FROM items i JOIN jobs j ON j.id = i.job_id
WHERE i.status = 'failed'
UNION ALL
SELECT j.name, i.id, i.path, i.kind, 'request', r.prompt_id, r.error, NULL,
       coalesce(r.finished_at, r.sent_at)
FROM requests r JOIN items i ON i.id = r.item_id JOIN jobs j ON j.id = i.job_id
WHERE r.status = 'failed'
  AND NOT EXISTS (SELECT 1 FROM requests later
                  WHERE later.item_id = r.item_id AND later.prompt_id = r.prompt_id
                    AND later.status = 'succeeded' AND later.id > r.id);

CREATE VIEW item_summary AS
SELECT j.name AS job, i.id AS item_id, i.path, i.kind, i.status, i.attempts, i.error,
       i.size_bytes, json_extract(i.media_json, '$.duration_seconds') AS duration_seconds,
       (SELECT count(*) FROM frames f WHERE f.item_id = i.id) AS frames,
       (SELECT count(*) FROM segments s WHERE s.item_id = i.id) AS segments,
       (SELECT count(*) FROM requests r JOIN responses p ON p.request_id = r.id
        WHERE r.item_id = i.id) AS answers,
       i.updated_at
FROM items i JOIN jobs j ON j.id = i.job_id;

CREATE VIEW job_summary AS
SELECT j.name AS job, count(i.id) AS items,
       count(*) FILTER (WHERE i.status = 'pending') AS pending,
       count(*) FILTER (WHERE i.status = 'running') AS running,
       count(*) FILTER (WHERE i.status = 'done') AS done,
       count(*) FILTER (WHERE i.status = 'failed') AS failed,
       (SELECT max(started_at) FROM runs r WHERE r.job_id = j.id) AS last_run_started_at
FROM jobs j LEFT JOIN items i ON i.job_id = j.id
GROUP BY j.id;
)sql";

// Version 2: the vision encoder's outputs. A frame the encoder found to repeat an earlier one
// (cosine similarity of pooled features above vision.dedup_threshold) names that frame; the
// context builder leaves such frames out. A feature records a hash of what the encoder saw,
// so an identical frame pair is never encoded twice with the same model.
constexpr const char kSchemaV2[] = R"sql(
ALTER TABLE frames ADD COLUMN duplicate_of INTEGER CHECK (duplicate_of >= 0);
ALTER TABLE features ADD COLUMN input_hash TEXT;
CREATE INDEX features_input ON features(model, input_hash);
)sql";

// Version 3: time references in answers (base/time_references.h). `answer_times` holds what the
// grammar found in each response; `answer_time_scans` which responses were scanned and with which
// grammar version (Store::IndexAnswerTimes re-scans older ones and those stored before this
// migration); the view links each reference to the item's nearest frame at query time, so
// replacing an item's frames never leaves a stale link.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE answer_times (
  id          INTEGER PRIMARY KEY,
  response_id INTEGER NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
  char_start  INTEGER NOT NULL CHECK (char_start >= 0),  -- code points into content, 0-based
  char_end    INTEGER NOT NULL CHECK (char_end > char_start),
  text        TEXT NOT NULL,             -- the reference as written, e.g. '01:15', '00:10-00:25'
  form        TEXT NOT NULL CHECK (form IN ('clock', 'words', 'marker')),
  seconds     REAL NOT NULL CHECK (seconds >= 0),  -- the moment, or the start of a range
  end_seconds REAL CHECK (end_seconds IS NULL OR end_seconds >= seconds),  -- a range's end
  UNIQUE (response_id, char_start)
) STRICT;

CREATE TABLE answer_time_scans (
  response_id     INTEGER PRIMARY KEY REFERENCES responses(id) ON DELETE CASCADE,
  grammar_version INTEGER NOT NULL,
  scanned_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
) STRICT;

-- The nearest frame to each reference (the earlier on a tie), when the time is inside the item:
-- 0 to its duration (media_json.duration_seconds, else its last frame's time) plus 1 s. (The
-- frames on either side come from min/max: SQLite 3.40 refuses an outer column in a correlated
-- subquery's ORDER BY.)
CREATE VIEW answer_time_frames AS
SELECT c.time_id, c.response_id, c.request_id, c.item_id, c.prompt_id, c.char_start, c.char_end,
       c.text, c.form, c.seconds, c.end_seconds,
       f.id AS frame_id, f.sample_index AS frame_index, f.time_seconds AS frame_seconds,
       f.thumbnail_hash,
       e.id AS end_frame_id, e.sample_index AS end_frame_index, e.time_seconds AS end_frame_seconds
FROM (SELECT d.*,
             CASE WHEN d.seconds > d.limit_s THEN NULL
                  WHEN d.before_s IS NULL THEN d.after_s
                  WHEN d.after_s IS NULL THEN d.before_s
                  WHEN d.seconds - d.before_s <= d.after_s - d.seconds THEN d.before_s
                  ELSE d.after_s END AS frame_s,
             CASE WHEN d.end_seconds IS NULL OR d.end_seconds > d.limit_s THEN NULL
                  WHEN d.end_before_s IS NULL THEN d.end_after_s
                  WHEN d.end_after_s IS NULL THEN d.end_before_s
                  WHEN d.end_seconds - d.end_before_s <= d.end_after_s - d.end_seconds
                  THEN d.end_before_s
                  ELSE d.end_after_s END AS end_frame_s
      FROM (SELECT b.*,
                   (SELECT max(time_seconds) FROM frames
                    WHERE item_id = b.item_id AND time_seconds <= b.seconds) AS before_s,
                   (SELECT min(time_seconds) FROM frames
                    WHERE item_id = b.item_id AND time_seconds >= b.seconds) AS after_s,
                   (SELECT max(time_seconds) FROM frames
                    WHERE item_id = b.item_id AND time_seconds <= b.end_seconds) AS end_before_s,
                   (SELECT min(time_seconds) FROM frames
                    WHERE item_id = b.item_id AND time_seconds >= b.end_seconds) AS end_after_s
            FROM (SELECT t.id AS time_id, t.response_id, req.id AS request_id, req.item_id,
                         req.prompt_id, t.char_start, t.char_end, t.text, t.form, t.seconds,
                         t.end_seconds,
                         CASE WHEN json_extract(i.media_json, '$.duration_seconds') > 0
                              THEN json_extract(i.media_json, '$.duration_seconds')
                              ELSE (SELECT max(time_seconds) FROM frames WHERE item_id = i.id)
                         END + 1.0 AS limit_s
                  FROM answer_times t
                  JOIN responses resp ON resp.id = t.response_id
                  JOIN requests req ON req.id = resp.request_id
                  JOIN items i ON i.id = req.item_id) b) d) c
LEFT JOIN frames f ON f.id = (SELECT id FROM frames WHERE item_id = c.item_id
                              AND time_seconds = c.frame_s ORDER BY sample_index LIMIT 1)
LEFT JOIN frames e ON e.id = (SELECT id FROM frames WHERE item_id = c.item_id
                              AND time_seconds = c.end_frame_s ORDER BY sample_index LIMIT 1);
)sql";

// Contexts built by the context stage (llm/context/context_builder.h): how the count was made, the
// transport, the segment of a split video, and the key of what the context was built from (so a
// run rebuilds only contexts whose prompt or settings changed). Touches only `contexts`.
constexpr int kContextsVersion = 4;
constexpr const char* kSchemaContexts = R"sql(
ALTER TABLE contexts ADD COLUMN settings_key TEXT;
ALTER TABLE contexts ADD COLUMN count_method TEXT
  CHECK (count_method IS NULL OR count_method IN ('exact', 'estimate'));
ALTER TABLE contexts ADD COLUMN transport TEXT
  CHECK (transport IS NULL OR transport IN ('images', 'video', 'file'));
ALTER TABLE contexts ADD COLUMN segment_index INTEGER NOT NULL DEFAULT 0;
ALTER TABLE contexts ADD COLUMN segment_count INTEGER NOT NULL DEFAULT 1;
CREATE INDEX contexts_key ON contexts(item_id, prompt_id, settings_key);
)sql";

// Version 5: asking the model (jobs/model_stage). A `tasks` row is one question the model must
// answer about one context (or one segment of a split video, or the reduce over the segments'
// answers), keyed by a stable `custom_id` (the OpenAI Batch line's id). Its state is stored
// before anything is sent: waiting -> sent -> succeeded | failed. Each send is a `requests` row
// (history: attempts, retries, outcome, timings), the answer a `responses` row. A run's model
// report is kept in `runs.report_json`.
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE tasks (
  id                  INTEGER PRIMARY KEY,
  custom_id           TEXT NOT NULL UNIQUE,     -- stable and unique; the key merges use
  item_id             INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
  prompt_id           TEXT NOT NULL,
  context_id          INTEGER REFERENCES contexts(id) ON DELETE SET NULL,
  step                TEXT NOT NULL CHECK (step IN ('ask', 'map', 'reduce')),
  segment_index       INTEGER NOT NULL DEFAULT 0 CHECK (segment_index >= 0),
  segment_count       INTEGER NOT NULL DEFAULT 1 CHECK (segment_count >= 1),
  start_seconds       REAL,                     -- map: the segment's time range
  end_seconds         REAL,
  status              TEXT NOT NULL DEFAULT 'waiting'
                      CHECK (status IN ('waiting', 'sent', 'succeeded', 'failed')),
  local_prompt_tokens INTEGER,                  -- Reel's count of the prompt
  server_count_tokens INTEGER,                  -- the server's /tokenize count (verify_tokens)
  json_schema         TEXT CHECK (json_schema IS NULL OR json_valid(json_schema)),  -- the answer's
  request_id          INTEGER REFERENCES requests(id) ON DELETE SET NULL,  -- the latest send
  created_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  updated_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
) STRICT;
CREATE INDEX tasks_item ON tasks(item_id, prompt_id);
CREATE INDEX tasks_status ON tasks(status);

ALTER TABLE requests ADD COLUMN task_id INTEGER REFERENCES tasks(id) ON DELETE SET NULL;
ALTER TABLE requests ADD COLUMN via TEXT CHECK (via IS NULL OR via IN ('online', 'batch'));
ALTER TABLE requests ADD COLUMN outcome TEXT;          -- 'ok', 'prompt too long', 'timeout', ...
ALTER TABLE requests ADD COLUMN http_status INTEGER;
ALTER TABLE requests ADD COLUMN attempts INTEGER;      -- HTTP attempts: 1 + retries
ALTER TABLE requests ADD COLUMN retry_reasons TEXT
  CHECK (retry_reasons IS NULL OR json_valid(retry_reasons));
ALTER TABLE requests ADD COLUMN total_seconds REAL;    -- with waits and retries
ALTER TABLE requests ADD COLUMN ttft_seconds REAL;     -- streaming: time to the first token
ALTER TABLE requests ADD COLUMN request_bytes INTEGER;
ALTER TABLE requests ADD COLUMN server_request_id TEXT;
ALTER TABLE requests ADD COLUMN local_prompt_tokens INTEGER;
ALTER TABLE requests ADD COLUMN too_long_prompt_tokens INTEGER;  -- the server's count, too long
ALTER TABLE requests ADD COLUMN too_long_output_tokens INTEGER;  -- the output it was asked for
ALTER TABLE requests ADD COLUMN too_long_context_length INTEGER; -- the server's window
ALTER TABLE requests ADD COLUMN cost REAL;  -- from the job's prices (model.price), if any
CREATE INDEX requests_task ON requests(task_id);
CREATE INDEX requests_run ON requests(run_id);

ALTER TABLE responses ADD COLUMN json_answer TEXT
  CHECK (json_answer IS NULL OR json_valid(json_answer));
ALTER TABLE responses ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0 CHECK (truncated IN (0, 1));
ALTER TABLE responses ADD COLUMN reasoning_tokens INTEGER;
ALTER TABLE responses ADD COLUMN response_uid TEXT;   -- the body's `id`

ALTER TABLE runs ADD COLUMN report_json TEXT CHECK (report_json IS NULL OR json_valid(report_json));

DROP VIEW latest_answers;
DROP VIEW answers;
DROP VIEW failures;

CREATE VIEW answers AS
SELECT resp.id AS response_id, req.id AS request_id, j.name AS job, i.id AS item_id,
       i.path, req.prompt_id, req.model, resp.content, resp.reasoning, resp.finish_reason,
       resp.prompt_tokens, resp.completion_tokens, resp.cached_tokens, req.latency_seconds,
       resp.created_at, coalesce(t.step, 'ask') AS step, t.segment_index, t.segment_count,
       t.start_seconds, t.end_seconds, resp.json_answer, t.custom_id
FROM responses resp
JOIN requests req ON req.id = resp.request_id
LEFT JOIN tasks t ON t.id = req.task_id
JOIN items i ON i.id = req.item_id
JOIN jobs j ON j.id = i.job_id;

-- The final answer of each (item, prompt): a whole-context answer or a reduce, never a segment's.
CREATE VIEW latest_answers AS
SELECT job, item_id, path, prompt_id, model, content, reasoning, finish_reason, prompt_tokens,
       completion_tokens, cached_tokens, latency_seconds, created_at, response_id, json_answer,
       step
FROM (SELECT a.*, row_number() OVER (PARTITION BY item_id, prompt_id
                                     ORDER BY created_at DESC, response_id DESC) AS rank_in_item
      FROM answers a WHERE a.step != 'map')
WHERE rank_in_item = 1;

-- Items that failed, and requests whose task is still failed (or, for requests without a task,
-- with no later success for the same item and prompt).
CREATE VIEW failures AS
SELECT j.name AS job, i.id AS item_id, i.path, i.kind, 'item' AS stage, NULL AS prompt_id,
       i.error, i.attempts, i.updated_at AS time
FROM items i JOIN jobs j ON j.id = i.job_id
WHERE i.status = 'failed'
UNION ALL
SELECT j.name, i.id, i.path, i.kind, 'request', r.prompt_id, r.error, NULL,
       coalesce(r.finished_at, r.sent_at)
FROM requests r JOIN items i ON i.id = r.item_id JOIN jobs j ON j.id = i.job_id
LEFT JOIN tasks t ON t.id = r.task_id
WHERE r.status = 'failed'
  AND (CASE WHEN r.task_id IS NULL
            THEN NOT EXISTS (SELECT 1 FROM requests later
                             WHERE later.item_id = r.item_id AND later.prompt_id = r.prompt_id
                               AND later.status = 'succeeded' AND later.id > r.id)
            ELSE t.status = 'failed' AND t.request_id = r.id
                 AND NOT EXISTS (SELECT 1 FROM tasks done
                                 WHERE done.item_id = t.item_id AND done.prompt_id = t.prompt_id
                                   AND done.step != 'map' AND done.status = 'succeeded'
                                   AND done.id > t.id)
       END);
)sql";

// Version 6: superseded contexts (docs/database.md, "Superseded contexts"). When the job no longer
// builds a context (a changed prompt, context setting or item), the context stage deletes its
// rows, unless a task or request refers to them: those are kept for history and marked
// `superseded_at`. `base_key` is the settings key of the job's context a row belongs to (its own
// key; for a re-fit or the reduce over a split video's answers, the key they were made from), so
// derived rows stay current with their base. `frame_source` says what the row's frame files in the
// frame cache were made from, so they can be deleted with it. Touches only `contexts`.
constexpr const char* kSchemaV6 = R"sql(
ALTER TABLE contexts ADD COLUMN base_key TEXT;
ALTER TABLE contexts ADD COLUMN superseded_at TEXT;
ALTER TABLE contexts ADD COLUMN frame_source TEXT;
UPDATE contexts SET base_key = settings_key;
CREATE INDEX contexts_frame_source ON contexts(frame_source) WHERE frame_source IS NOT NULL;
)sql";

// Version 7: the usage of every answer the server gave. A request's answer that failed its prompt
// kind's check (or its schema) was billed too, but only the final answer had a `responses` row,
// so token totals undercounted. `requests.prompt_tokens` .. `reasoning_tokens` are the sums over
// every answer the request received (the refused ones and the final one); `responses` keeps the
// final answer's own usage. Older rows are filled from their response (the usage of answers that
// were refused before this migration was never stored). `tasks.retired_at`: set when the job no
// longer asks the question (its prompt no longer applies to the item, or its context was
// superseded) and it had been sent before, so it is kept for its requests' history but is no
// longer waiting for a model (never-sent ones are deleted).
constexpr const char* kSchemaV7 = R"sql(
ALTER TABLE requests ADD COLUMN prompt_tokens INTEGER;
ALTER TABLE requests ADD COLUMN completion_tokens INTEGER;
ALTER TABLE requests ADD COLUMN cached_tokens INTEGER;
ALTER TABLE requests ADD COLUMN reasoning_tokens INTEGER;
UPDATE requests SET
  prompt_tokens = (SELECT p.prompt_tokens FROM responses p WHERE p.request_id = requests.id),
  completion_tokens = (SELECT p.completion_tokens FROM responses p WHERE p.request_id = requests.id),
  cached_tokens = (SELECT p.cached_tokens FROM responses p WHERE p.request_id = requests.id),
  reasoning_tokens = (SELECT p.reasoning_tokens FROM responses p WHERE p.request_id = requests.id)
WHERE EXISTS (SELECT 1 FROM responses p WHERE p.request_id = requests.id);
ALTER TABLE tasks ADD COLUMN retired_at TEXT;
)sql";

// Version 8: a reduce in levels (jobs/model/model_plan.h). A split video whose segment answers do
// not fit one reduce is reduced in groups, level by level; an intermediate reduce is a 'reduce'
// task with segment_count > 1 (its level's groups), the final one has segment_count 1. Its answer
// is not the prompt's answer (latest_answers), and its success does not hide another task's failure
// (failures). Views only.
constexpr const char* kSchemaV8 = R"sql(
DROP VIEW latest_answers;
DROP VIEW failures;

-- The final answer of each (item, prompt): a whole-context answer or the final reduce, never a
-- segment's or an intermediate reduce's.
CREATE VIEW latest_answers AS
SELECT job, item_id, path, prompt_id, model, content, reasoning, finish_reason, prompt_tokens,
       completion_tokens, cached_tokens, latency_seconds, created_at, response_id, json_answer,
       step
FROM (SELECT a.*, row_number() OVER (PARTITION BY item_id, prompt_id
                                     ORDER BY created_at DESC, response_id DESC) AS rank_in_item
      FROM answers a
      WHERE a.step != 'map' AND NOT (a.step = 'reduce' AND coalesce(a.segment_count, 1) > 1))
WHERE rank_in_item = 1;

-- Items that failed, and requests whose task is still failed (or, for requests without a task,
-- with no later success for the same item and prompt).
CREATE VIEW failures AS
SELECT j.name AS job, i.id AS item_id, i.path, i.kind, 'item' AS stage, NULL AS prompt_id,
       i.error, i.attempts, i.updated_at AS time
FROM items i JOIN jobs j ON j.id = i.job_id
WHERE i.status = 'failed'
UNION ALL
SELECT j.name, i.id, i.path, i.kind, 'request', r.prompt_id, r.error, NULL,
       coalesce(r.finished_at, r.sent_at)
FROM requests r JOIN items i ON i.id = r.item_id JOIN jobs j ON j.id = i.job_id
LEFT JOIN tasks t ON t.id = r.task_id
WHERE r.status = 'failed'
  AND (CASE WHEN r.task_id IS NULL
            THEN NOT EXISTS (SELECT 1 FROM requests later
                             WHERE later.item_id = r.item_id AND later.prompt_id = r.prompt_id
                               AND later.status = 'succeeded' AND later.id > r.id)
            ELSE t.status = 'failed' AND t.request_id = r.id
                 AND NOT EXISTS (SELECT 1 FROM tasks done
                                 WHERE done.item_id = t.item_id AND done.prompt_id = t.prompt_id
                                   AND (done.step = 'ask' OR (done.step = 'reduce'
                                                              AND done.segment_count = 1))
                                   AND done.status = 'succeeded' AND done.id > t.id)
       END);
)sql";

// Version 9: nothing the server did is held against a question, and a refused answer is kept.
// `responses.check_error`: an answer that failed its check (the prompt's JSON schema, or its
// kind's check) is stored with the reason; its request and question are failed, and it is no
// answer of the item (latest_answers, item_summary leave it out). Questions an older Reel failed
// for the server's reasons (storage::IsServerFailure: unreachable, timed out, overloaded after
// the retries, the API key refused) go back to waiting, so the next run asks them again.
constexpr const char* kSchemaV9 = R"sql(
ALTER TABLE responses ADD COLUMN check_error TEXT;

DROP VIEW latest_answers;
DROP VIEW answers;
DROP VIEW item_summary;

CREATE VIEW answers AS
SELECT resp.id AS response_id, req.id AS request_id, j.name AS job, i.id AS item_id,
       i.path, req.prompt_id, req.model, resp.content, resp.reasoning, resp.finish_reason,
       resp.prompt_tokens, resp.completion_tokens, resp.cached_tokens, req.latency_seconds,
       resp.created_at, coalesce(t.step, 'ask') AS step, t.segment_index, t.segment_count,
       t.start_seconds, t.end_seconds, resp.json_answer, t.custom_id, resp.check_error
FROM responses resp
JOIN requests req ON req.id = resp.request_id
LEFT JOIN tasks t ON t.id = req.task_id
JOIN items i ON i.id = req.item_id
JOIN jobs j ON j.id = i.job_id;

-- The final answer of each (item, prompt): a whole-context answer or the final reduce, never a
-- segment's or an intermediate reduce's, nor one that failed its check.
CREATE VIEW latest_answers AS
SELECT job, item_id, path, prompt_id, model, content, reasoning, finish_reason, prompt_tokens,
       completion_tokens, cached_tokens, latency_seconds, created_at, response_id, json_answer,
       step
FROM (SELECT a.*, row_number() OVER (PARTITION BY item_id, prompt_id
                                     ORDER BY created_at DESC, response_id DESC) AS rank_in_item
      FROM answers a
      WHERE a.step != 'map' AND NOT (a.step = 'reduce' AND coalesce(a.segment_count, 1) > 1)
        AND a.check_error IS NULL)
WHERE rank_in_item = 1;

CREATE VIEW item_summary AS
SELECT j.name AS job, i.id AS item_id, i.path, i.kind, i.status, i.attempts, i.error,
       i.size_bytes, json_extract(i.media_json, '$.duration_seconds') AS duration_seconds,
       (SELECT count(*) FROM frames f WHERE f.item_id = i.id) AS frames,
       (SELECT count(*) FROM segments s WHERE s.item_id = i.id) AS segments,
       (SELECT count(*) FROM requests r JOIN responses p ON p.request_id = r.id
        WHERE r.item_id = i.id AND p.check_error IS NULL) AS answers,
       i.updated_at
FROM items i JOIN jobs j ON j.id = i.job_id;

UPDATE tasks SET status = 'waiting', updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')
WHERE status = 'failed' AND request_id IN (
  SELECT id FROM requests
  WHERE outcome IN ('server down', 'connection error', 'timeout')
     OR (outcome = 'server error' AND http_status IN (429, 502, 503, 504))
     OR (outcome = 'rejected' AND http_status IN (401, 403)));
)sql";

// Version 10: the question each task asks (`tasks.question`: the prompt's question as sent, the
// built-in one for chapters; a reduce keeps the question it answers), so an answer shows what was
// asked even after the job's prompt changed (`reel ask` stores every question as prompt 'ask').
// The answer views gain `question`. Older tasks keep NULL.
constexpr const char* kSchemaV10 = R"sql(
ALTER TABLE tasks ADD COLUMN question TEXT;

DROP VIEW latest_answers;
DROP VIEW answers;

CREATE VIEW answers AS
SELECT resp.id AS response_id, req.id AS request_id, j.name AS job, i.id AS item_id,
       i.path, req.prompt_id, req.model, resp.content, resp.reasoning, resp.finish_reason,
       resp.prompt_tokens, resp.completion_tokens, resp.cached_tokens, req.latency_seconds,
       resp.created_at, coalesce(t.step, 'ask') AS step, t.segment_index, t.segment_count,
       t.start_seconds, t.end_seconds, resp.json_answer, t.custom_id, resp.check_error,
       t.question
FROM responses resp
JOIN requests req ON req.id = resp.request_id
LEFT JOIN tasks t ON t.id = req.task_id
JOIN items i ON i.id = req.item_id
JOIN jobs j ON j.id = i.job_id;

CREATE VIEW latest_answers AS
SELECT job, item_id, path, prompt_id, model, content, reasoning, finish_reason, prompt_tokens,
       completion_tokens, cached_tokens, latency_seconds, created_at, response_id, json_answer,
       step, question
FROM (SELECT a.*, row_number() OVER (PARTITION BY item_id, prompt_id
                                     ORDER BY created_at DESC, response_id DESC) AS rank_in_item
      FROM answers a
      WHERE a.step != 'map' AND NOT (a.step = 'reduce' AND coalesce(a.segment_count, 1) > 1)
        AND a.check_error IS NULL)
WHERE rank_in_item = 1;
)sql";

// Version 11: transcripts of speech. An item's speech segments (source 'speech') belong to its
// transcript, made from the item's content and the job's speech settings (settings_key): a
// changed speech setting re-transcribes without redoing the item, and a changed item keeps them
// until the transcript is made again. Chunks are stored as they are transcribed, so a run killed
// half way resumes at the first chunk not stored. Segments gain the confidence and the word times
// a speech backend gives.
constexpr const char* kSchemaV11 = R"sql(
ALTER TABLE segments ADD COLUMN confidence REAL;
ALTER TABLE segments ADD COLUMN words_json TEXT
  CHECK (words_json IS NULL OR json_valid(words_json));

CREATE TABLE transcripts (
  item_id        INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
  settings_key   TEXT NOT NULL,
  backend        TEXT NOT NULL,           -- 'pocketsphinx', 'openai'
  model          TEXT NOT NULL,
  language       TEXT,
  status         TEXT NOT NULL DEFAULT 'running'
                 CHECK (status IN ('running', 'done', 'partial', 'failed')),
  segments       INTEGER NOT NULL DEFAULT 0,
  chunks         INTEGER NOT NULL DEFAULT 0,
  failed_chunks  INTEGER NOT NULL DEFAULT 0,
  speech_seconds REAL NOT NULL DEFAULT 0,
  note           TEXT,                    -- e.g. 'no audio stream', 'no speech found'
  error          TEXT,                    -- why it is partial or failed
  created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  updated_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
) STRICT;

CREATE TABLE transcript_chunks (
  item_id       INTEGER NOT NULL REFERENCES transcripts(item_id) ON DELETE CASCADE,
  chunk         INTEGER NOT NULL,
  start_seconds REAL NOT NULL,
  end_seconds   REAL NOT NULL,
  segments      INTEGER NOT NULL,
  PRIMARY KEY (item_id, chunk)
) STRICT;
)sql";

// Version 12: audio items (podcasts, recorded meetings, a lecture's audio): items.kind may be
// 'audio'. SQLite cannot alter a CHECK constraint, and rebuilding `items` would need foreign keys
// off outside a transaction (every table refers to its rows). Widening the constraint only admits
// more rows, so the table's stored definition is edited in place, as SQLite documents for such
// changes (https://sqlite.org/lang_altertable.html, "otherwise"): the DDL after it bumps the
// schema cookie so that other connections read the schema again, and RESET makes this one do so,
// at once with the SELECT after it (not lazily at some later statement, which a length limit set
// on the connection meanwhile would fail).
constexpr const char* kSchemaV12 = R"sql(
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, '''document'', ''subtitle'')', '''document'', ''subtitle'', ''audio'')')
 WHERE type = 'table' AND name = 'items';
PRAGMA writable_schema = OFF;
CREATE TABLE reel_schema_bump (x INTEGER);
DROP TABLE reel_schema_bump;
PRAGMA writable_schema = RESET;
SELECT 1 FROM items WHERE 0;
)sql";

constexpr Migration kMigrations[] = {
    {1, "initial schema", kSchemaV1},
    {2, "frames.duplicate_of, features.input_hash", kSchemaV2},
    {3, "answer time references", kSchemaV3},
    {kContextsVersion, "context counts, transports, segments and settings keys", kSchemaContexts},
    {5, "model tasks, request outcomes and timings, structured answers, run reports", kSchemaV5},
    {6, "superseded contexts: base keys, superseded_at, frame sources", kSchemaV6},
    {7, "usage of every answer on requests (refused answers too), retired tasks", kSchemaV7},
    {8, "reduce in levels: intermediate reduces are no final answers", kSchemaV8},
    {9, "refused answers kept; questions the server failed wait again", kSchemaV9},
    {10, "the question each task asks (tasks.question, answer views)", kSchemaV10},
    {11, "transcripts of speech, segment confidence and word times", kSchemaV11},
    {12, "audio items (items.kind 'audio')", kSchemaV12},
};

}  // namespace

std::span<const Migration> Migrations() { return kMigrations; }

int LatestSchemaVersion() { return kMigrations[std::size(kMigrations) - 1].version; }

}  // namespace reel::storage::internal
