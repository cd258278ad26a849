// ReportReader: what `reel report` shows, read from a database opened read-only. Errors: kNotFound
// (file or item), kUnsupported (a newer schema), kIoError / kCorruptData. Ownership and threads:
// owns its read-only connection; one per thread.
// What it reads and the optional columns: storage/README.md, "Report data".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/database.h"
#include "storage/records.h"

namespace reel::storage {

// Optional columns found in the file.
struct ReportColumns {
  bool request_ttft = false;           // requests.ttft_seconds
  bool request_attempts = false;       // requests.attempts
  bool request_cost = false;           // requests.cost
  bool request_outcome = false;        // requests.outcome
  bool request_retry_reasons = false;  // requests.retry_reasons
  bool context_superseded = false;     // contexts.superseded_at
  bool request_usage = false;          // requests.prompt_tokens ... (every answer, schema 7)
  bool task_question = false;          // tasks.question (schema 10)
  bool transcripts = false;            // transcripts, segments.confidence (schema 11)
};

// One line of the index.
struct ReportItemRow {
  int64_t item_id = 0;
  std::string job;
  std::string path;
  std::string kind;
  std::string status;
  std::optional<std::string> error;
  std::optional<double> duration_seconds;
  int64_t frames = 0;
  int64_t segments = 0;
  int64_t answers = 0;          // prompts with an answer
  int64_t failed_requests = 0;  // failed requests with no later answer to their prompt
  int64_t prompt_tokens = 0;    // over every answer
  int64_t completion_tokens = 0;
  std::optional<double> cost;                 // with requests.cost
  std::optional<std::string> thumbnail_hash;  // a frame from the middle of the item
  std::string updated_at;
  bool input_gone = false;  // the input file was deleted or moved (set by the report's writer)
};

struct ReportFrame {
  int64_t frame_id = 0;
  int64_t sample_index = 0;
  double time_seconds = 0;
  int width = 0;
  int height = 0;
  std::optional<std::string> thumbnail_hash;
  std::optional<int64_t> thumbnail_bytes;  // the blob's size, when it is in the file
};

// One file of an answer asked over several files (`reel ask a.mp4 b.mp4 diagram.png "q"`): the
// "sources" of the manifest of the context it was asked over, in the context's order.
struct ReportAnswerFile {
  std::string path;  // as stored: the path of that file's item
  std::string kind;  // "video" or "image"
};

// A file an answer was asked over, as an item of the answer's job: what a time that refers to
// it links to.
struct ReportFileItem {
  std::string path;
  std::optional<int64_t> item_id;  // nullopt: no item of the job has this path (any more)
  std::optional<double> duration_seconds;
  std::vector<int64_t> sample_indexes;  // its frames in sample (= time) order
  std::vector<double> frame_times;      // seconds, one per sample index
};

// The newest answer to one prompt of an item.
struct ReportAnswer {
  int64_t response_id = 0;
  int64_t request_id = 0;
  std::string prompt_id;
  std::optional<std::string> question;  // tasks.question: what was asked (schema 10)
  std::optional<std::string> model;
  std::string content;
  std::optional<std::string> reasoning;
  std::optional<std::string> finish_reason;
  // The request's usage: every answer it received, a refused one asked again too (requests.*,
  // schema 7; older databases: the stored answer's, responses.*).
  std::optional<int64_t> prompt_tokens;
  std::optional<int64_t> completion_tokens;
  std::optional<int64_t> cached_tokens;
  std::optional<double> latency_seconds;
  std::optional<double> ttft_seconds;  // requests.ttft_seconds
  std::optional<int64_t> attempts;     // requests.attempts
  std::optional<double> cost;          // requests.cost
  std::string created_at;
  int64_t earlier_answers = 0;  // older answers to the same prompt
  // The files it was asked over, when more than one (empty for an answer about the item alone).
  std::vector<ReportAnswerFile> files;
};

// What was put in front of the model for one prompt (the newest context).
struct ReportContext {
  std::string prompt_id;
  int64_t text_tokens = 0;
  int64_t image_tokens = 0;
  int64_t video_tokens = 0;
  int64_t audio_tokens = 0;
  int64_t total_tokens = 0;
  std::string created_at;
};

struct ReportRequestFailure {
  std::string prompt_id;
  std::string outcome;  // requests.outcome ("invalid answer", "server error", ...; "" if unset)
  std::string error;
  std::string time;
  bool answered_later = false;  // a later request for the prompt succeeded
};

struct ReportItem {
  ReportItemRow row;
  std::optional<std::string> content_hash;
  int64_t size_bytes = 0;
  int64_t attempts = 0;
  std::optional<std::string> media_json;
  std::optional<std::string> started_at;
  std::optional<std::string> finished_at;
  std::vector<ReportFrame> frames;                     // in sample order
  std::vector<SegmentRecord> segments;                 // in time order
  std::optional<TranscriptRecord> transcript;          // of its speech, if any
  std::vector<ReportAnswer> answers;                   // by prompt id
  std::vector<ReportContext> contexts;                 // by prompt id
  std::vector<ReportRequestFailure> request_failures;  // oldest first
  // The other files its answers were asked over (ReportAnswer::files but the item's own), each
  // once, in the order the answers name them.
  std::vector<ReportFileItem> other_files;
};

// An item's share of a run, for the slowest / most expensive lists.
struct ReportRunItem {
  int64_t item_id = 0;
  std::string path;
  std::optional<double> seconds;  // processing, started_at to finished_at
  double request_seconds = 0;     // sum of its requests' latency in the run
  int64_t tokens = 0;             // prompt + completion tokens of its answers in the run
  std::optional<double> cost;
};

// Something that finished during a run, for the throughput plot.
struct ReportRunEvent {
  double at_seconds = 0;  // since the run started
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t items = 0;   // 1 for an item that finished
  int64_t frames = 0;  // that item's frames
};

struct ReportRun {
  RunRecord run;
  std::string job;
  // Started to finished, or to the last request or item that finished if later (still running,
  // or answers recorded after the run).
  std::optional<double> wall_seconds;
  int64_t requests_sent = 0;  // still 'sent': in flight, or lost with a crash
  int64_t requests_succeeded = 0;
  int64_t requests_failed = 0;
  int64_t reasked = 0;  // failed requests followed by another request for the same prompt
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  std::vector<double> latencies;  // seconds, of finished requests
  std::vector<double> ttfts;      // with requests.ttft_seconds
  // With requests.attempts: HTTP retries (attempts - 1, less the re-asks), and answers that
  // failed their prompt kind's check and were asked again (storage/tasks.h kAnswerCheckRetry).
  std::optional<int64_t> retries;
  std::optional<int64_t> rechecked;
  std::optional<double> cost;                 // with requests.cost
  std::vector<ReportRunItem> slowest;         // by processing time
  std::vector<ReportRunItem> most_expensive;  // by cost, else by tokens
  std::vector<ReportRunEvent> events;         // in time order
};

class ReportReader {
 public:
  static Result<ReportReader> Open(const std::string& path);

  const ReportColumns& columns() const { return columns_; }

  // Reads from here to EndSnapshot() (or the reader's end) see one state of the file (one read
  // transaction), so a report written while a run is adding rows is consistent, and each query
  // does not take and release the file's read lock on its own.
  Status BeginSnapshot();
  Status EndSnapshot();
  const std::string& path() const { return db_.path(); }

  // Items of `job` (all jobs if unset), ordered by job and path.
  Result<int64_t> CountItems(const std::optional<std::string>& job);
  Result<std::vector<ReportItemRow>> ListItems(const std::optional<std::string>& job,
                                               int64_t offset, int64_t limit);
  // Counts by status ("pending", "running", "done", "failed").
  Result<std::vector<std::pair<std::string, int64_t>>> CountByStatus(
      const std::optional<std::string>& job);
  // An item by id, or by path as the job names it (then `job` narrows it down); nullopt if none.
  // kInvalidArgument when a path matches items of several jobs and no job is given.
  Result<std::optional<int64_t>> FindItem(const std::optional<std::string>& job,
                                          const std::string& id_or_path);
  Result<ReportItem> ReadItem(int64_t item_id);
  // response id -> the files of each answer of item `item_id` asked over several files (every
  // answer, not only the newest; a reduce's answer has the files of the context it reduces).
  // Answers about the item alone are not listed.
  Result<std::map<int64_t, std::vector<ReportAnswerFile>>> ReadAnswerFiles(int64_t item_id);
  // The item at `path` in the job of item `item_id` (item_id unset when there is none).
  Result<ReportFileItem> ReadFileItem(int64_t item_id, const std::string& path);
  Result<std::optional<std::string>> ReadBlob(const std::string& hash);
  // The newest runs first, `top` items in each list.
  Result<std::vector<ReportRun>> ReadRuns(const std::optional<std::string>& job, int max_runs,
                                          int top = 10);

 private:
  ReportReader(Database db, ReportColumns columns) : db_(std::move(db)), columns_(columns) {}
  Database db_;
  ReportColumns columns_;
};

}  // namespace reel::storage
