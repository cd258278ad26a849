// Store: the typed operations the job runner performs on a results database. Every write is one
// transaction; an item is stored whole or not at all; reruns are duplicate-free. Errors: kNotFound,
// kInvalidArgument, kUnavailable (busy: retry), kDiskFull, kIoError / kCorruptData.
// Ownership and threads: a Store owns its Database (one connection); use one per thread.
// The contract in the runner's order: storage/README.md, "Store".
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/database.h"
#include "storage/records.h"

namespace reel::storage {

// True if `stored` is done and was made from the same content and settings, so the runner may
// skip it. An unknown content hash (nullopt on either side) never counts as the same.
bool IsUpToDate(const ItemRecord& stored, const std::optional<std::string>& content_hash,
                const std::string& settings_hash);

struct SearchOptions {
  int limit = 20;
  bool answers = true;                  // search responses.content
  bool segments = true;                 // search segments.text
  std::optional<std::string> job = {};  // only this job's items
  // false: the query is plain words, all of which must occur (each is quoted, so punctuation is
  // harmless). true: the query is FTS5 syntax (AND/OR/NOT, "phrases", prefix*, NEAR()).
  bool fts_syntax = false;
};

struct SummaryOptions {
  std::optional<std::string> job = {};  // only this job
  int max_runs = 10;
  int max_failures = 20;
  int max_partial = 20;
};

class Store {
 public:
  // Opens (creating and migrating) the database at `path`.
  static Result<Store> Open(const std::string& path, const DatabaseOptions& options = {});
  explicit Store(Database db) : db_(std::move(db)) {}

  Database& database() { return db_; }

  // Jobs. Keyed by name; an existing job's spec text and hash are updated. Returns the job id.
  Result<int64_t> UpsertJob(const JobRecord& job);
  Result<std::optional<JobRecord>> FindJob(const std::string& name);

  // Runs. BeginRun inserts a 'running' run and returns it with id, uid and started_at filled.
  Result<RunRecord> BeginRun(const RunRecord& run);
  Status UpdateRunCounters(int64_t run_id, const RunCounters& counters);
  Status FinishRun(int64_t run_id, RunStatus status, const RunCounters& counters,
                   const std::optional<std::string>& message = std::nullopt);
  // Every run still 'running' becomes 'interrupted' with `message` (unless it has one) and a
  // finish time; returns them as they were. Only for a caller that knows no live process owns
  // them (the runner, holding the run lock).
  Result<std::vector<RunRecord>> InterruptAbandonedRuns(const std::string& message);

  // Items. FindItem returns nullopt if the job has no item at `path`.
  Result<std::optional<ItemRecord>> FindItem(int64_t job_id, const std::string& path);
  Result<std::optional<ItemRecord>> GetItem(int64_t item_id);
  // Inserts a pending item, or updates the file facts of the existing (job, path) item. If its
  // content hash or settings hash changed, the item goes back to 'pending' with no error and zero
  // attempts (its old outputs stay until MarkItemDone replaces them). Returns the item id.
  Result<int64_t> UpsertItem(const ItemRecord& item);
  // status = running, attempts + 1, started_at = now, last_run_id = run_id.
  Status MarkItemRunning(int64_t item_id, std::optional<int64_t> run_id);
  // In one transaction: replaces frames and segments (but the transcript's, source 'speech')
  // with `outputs`, stores thumbnails as blobs,
  // stores the features of the new frames (outputs.features, by sample index; one naming no
  // frame of `outputs` is kInvalidArgument), updates media_json if given, and sets status =
  // done, error = NULL, finished_at = now.
  Status MarkItemDone(int64_t item_id, const ItemOutputs& outputs);
  // status = failed with `error` (which should name the file and the reason); outputs kept.
  Status MarkItemFailed(int64_t item_id, const std::string& error);
  // Each replaces all of the item's frames (and their features) or segments (but the
  // transcript's) in one transaction.
  // Duplicate sample indexes, or duplicate (source, start, text) segments, are kInvalidArgument.
  Status ReplaceItemFrames(int64_t item_id, const std::vector<FrameRecord>& frames);
  Status ReplaceItemSegments(int64_t item_id, const std::vector<SegmentRecord>& segments);
  // Reads back in sample / time order. FrameRecord.thumbnail_hash is set, thumbnail_jpeg empty.
  Result<std::vector<FrameRecord>> ListFrames(int64_t item_id);
  Result<std::vector<int64_t>> ListFrameIds(int64_t item_id);  // in sample order
  Result<std::vector<SegmentRecord>> ListSegments(int64_t item_id);

  // Transcripts of speech (records.h: TranscriptRecord; one per item). StartTranscript marks the
  // item's transcript 'running' for `settings_key` (backend, model, language as given): when the
  // stored one was made from another key, or there is none, its speech segments and chunks are
  // deleted first, else the chunks stored so far are kept (a resumed transcript).
  // AddTranscriptChunk stores one transcribed chunk and its segments (source 'speech') in one
  // transaction. FinishTranscript sets the status, counts, note and error of the transcript of
  // that key (kNotFound when the stored transcript has another key).
  Result<std::optional<TranscriptRecord>> GetTranscript(int64_t item_id);
  Result<std::vector<TranscriptChunkRecord>> ListTranscriptChunks(int64_t item_id);
  Status StartTranscript(const TranscriptRecord& transcript);
  Status AddTranscriptChunk(int64_t item_id, const TranscriptChunkRecord& chunk,
                            const std::vector<SegmentRecord>& segments);
  Status FinishTranscript(const TranscriptRecord& transcript);
  // Transcripts of job `job_id`'s items left 'running' or 'partial' (their questions wait).
  Result<int64_t> CountUnfinishedTranscripts(int64_t job_id);

  // Content-addressed blobs: stored once, returned by SHA-256 hex. GetBlob: nullopt if absent.
  Result<std::string> PutBlob(std::string_view bytes);
  Result<std::optional<std::string>> GetBlob(const std::string& hash);

  // Features of a frame, keyed (frame, model); replaces an existing one. Returns its id.
  Result<int64_t> PutFeature(const FeatureRecord& feature);
  // The bytes of a stored feature of `model` made from input `input_hash`, if any (reuse).
  Result<std::optional<std::string>> FindFeatureData(const std::string& model,
                                                     const std::string& input_hash);
  // The feature of frame `frame_id` (of `model`, or the newest of any model), if any.
  Result<std::optional<FeatureRow>> GetFrameFeature(int64_t frame_id,
                                                    const std::optional<std::string>& model = {});
  // Calls `fn` for every feature of `model` (of job `job` when set), in frame id order; stops
  // at, and returns, the first error `fn` returns.
  Status ForEachFeature(const std::string& model, const std::optional<std::string>& job,
                        const std::function<Status(const FeatureRow&)>& fn);
  // The models that have features, with their feature counts, most features first.
  Result<std::vector<std::pair<std::string, int64_t>>> FeatureModels();

  // Contexts, keyed (item, prompt, SHA-256 of manifest); returns the existing id for a repeat.
  Result<int64_t> PutContext(const ContextRecord& context);
  // Every segment of one context (a split video's), in one transaction: a crash leaves all of
  // them stored or none. Returns their ids, in the order given.
  Result<std::vector<int64_t>> PutContexts(const std::vector<ContextRecord>& segments);
  // Whether contexts of (item, prompt) built from `settings_key` are stored.
  Result<bool> HasContexts(int64_t item_id, const std::string& prompt_id,
                           const std::string& settings_key);
  // Contexts the job no longer builds for item `item_id`: every row whose (prompt_id, base key)
  // is not one of `current` (each prompt of the job with its settings key now). In one
  // transaction: the questions about them that were never sent (waiting, no request) are
  // deleted; rows no task or request refers to are deleted; the others are kept for the history
  // of the answers and marked superseded (superseded_at). Rows of `current` that were marked
  // lose the mark. Waiting questions the job no longer asks (of a prompt not in `current`, e.g.
  // one that no longer applies to the item, or about a superseded context) are deleted when
  // never sent, else marked tasks.retired_at (not counted as waiting); retired ones asked again
  // lose the mark. Returns what was retired, so the caller can delete frame files.
  Result<RetiredContexts> RetireContexts(
      int64_t item_id, const std::vector<std::pair<std::string, std::string>>& current);
  // The ids of those contexts, by segment_index (one per segment of a split video; empty: none).
  Result<std::vector<int64_t>> FindContexts(int64_t item_id, const std::string& prompt_id,
                                            const std::string& settings_key);

  // Requests: BeginRequest records a 'sent' request (with a fresh uid) and returns its id;
  // FinishRequest stores the response (and the time references in its content) and marks it
  // 'succeeded'; FailRequest marks it 'failed'.
  Result<int64_t> BeginRequest(const RequestRecord& request);
  Status FinishRequest(int64_t request_id, const ResponseRecord& response);
  Status FailRequest(int64_t request_id, const std::string& error,
                     std::optional<double> latency_seconds = std::nullopt);

  // Time references in answers (docs/database.md, "Answer time references"). FinishRequest
  // stores a response's references with it. IndexAnswerTimes finds them in responses stored
  // before (by an older reel, or scanned with an older grammar version), `batch_size` responses
  // per transaction, and returns how many it scanned (0 when all are up to date: one query).
  Result<int64_t> IndexAnswerTimes(int batch_size = 500);
  // A response's references in text order, each with its nearest frame. An older file without
  // the tables gives an empty list.
  Result<std::vector<AnswerTimeRecord>> ListAnswerTimes(int64_t response_id);

  // Appends to the event log.
  Status LogEvent(const EventRecord& event);

  // Full-text search over answers and text segments, best first. An empty query, or bad FTS5
  // syntax with fts_syntax = true, is kInvalidArgument.
  Result<std::vector<SearchHit>> Search(const std::string& query,
                                        const SearchOptions& options = {});

  // Recent runs, item counts by status, recent failures (the `failures` view), and the items
  // done with a partial sample (media_json's sample shows missing frames, decoding errors or an
  // early end of file).
  Result<StatusSummary> Summarize(const SummaryOptions& options = {});

 private:
  Database db_;
};

}  // namespace reel::storage
