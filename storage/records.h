// Plain records exchanged with Store: one struct per table row, in the units the schema uses
// (media times in seconds, file times in nanoseconds since the epoch, hashes as SHA-256 hex).
// Fields marked "output" are filled by Store when reading and ignored when writing.
// See docs/database.md for the tables these map to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/enum_names.h"

namespace reel::storage {

enum class RunStatus { kRunning, kSucceeded, kFailed, kInterrupted };
// kAudio: a file with sound and no picture (a podcast, a recorded meeting); its text is the
// transcript of its speech (schema 12).
enum class ItemKind { kVideo, kImage, kDocument, kSubtitle, kAudio };
enum class ItemStatus { kPending, kRunning, kDone, kFailed };
enum class EventLevel { kDebug, kInfo, kWarning, kError };
// A transcript of an item's speech (TranscriptRecord).
enum class TranscriptStatus {
  kRunning,  // started; the chunks stored so far are kept (a rerun does the rest)
  kDone,     // every chunk transcribed (possibly no speech at all: see `note`)
  kPartial,  // some chunks failed (`error` says why); a rerun retries them
  kFailed,   // the audio could not be read (`error`); a rerun tries again
};

// The names stored in the database ("running", "video", "done", "warning", ...).
const EnumNames<RunStatus>& RunStatusNames();
const EnumNames<ItemKind>& ItemKindNames();
const EnumNames<ItemStatus>& ItemStatusNames();
const EnumNames<EventLevel>& EventLevelNames();
const EnumNames<TranscriptStatus>& TranscriptStatusNames();
const char* RunStatusName(RunStatus status);
const char* ItemKindName(ItemKind kind);
const char* ItemStatusName(ItemStatus status);
const char* EventLevelName(EventLevel level);
const char* TranscriptStatusName(TranscriptStatus status);

struct JobRecord {
  int64_t id = 0;              // output
  std::string name = {};       // unique
  std::string spec_text = {};  // the resolved spec
  std::string spec_hash = {};  // if empty, Store computes SHA-256 of spec_text
};

struct RunCounters {
  int64_t items_seen = 0;
  int64_t items_done = 0;
  int64_t items_skipped = 0;
  int64_t items_failed = 0;
  int64_t frames = 0;
  int64_t segments = 0;
  int64_t requests = 0;
};

struct RunRecord {
  int64_t id = 0;        // output
  std::string uid = {};  // output: random, unique across machines
  int64_t job_id = 0;
  std::string spec_hash = {};
  std::string host = {};  // if empty, Store uses gethostname()
  int64_t pid = 0;        // if 0, Store uses getpid()
  int64_t shard_index = 0;
  int64_t shard_count = 1;
  RunStatus status = RunStatus::kRunning;       // output
  std::string started_at = {};                  // output
  std::optional<std::string> finished_at = {};  // output
  RunCounters counters = {};                    // output
  std::optional<std::string> message = {};      // output
};

struct ItemRecord {
  int64_t id = 0;  // output
  int64_t job_id = 0;
  std::string path = {};  // as the job names it; unique within the job
  ItemKind kind = ItemKind::kVideo;
  std::optional<std::string> content_hash = {};
  int64_t size_bytes = 0;
  std::optional<int64_t> mtime_ns = {};
  std::optional<int64_t> inode = {};
  std::optional<std::string> media_json = {};  // probe facts; must be valid JSON
  std::string settings_hash = {};              // hash of every setting that shapes the outputs
  ItemStatus status = ItemStatus::kPending;    // output
  std::optional<std::string> error = {};       // output
  int64_t attempts = 0;                        // output
  std::optional<int64_t> last_run_id = {};     // output
  std::string updated_at = {};                 // output
};

struct FrameRecord {
  int64_t sample_index = 0;  // position in the item's sample, 0-based
  std::optional<int64_t> source_frame = {};
  std::optional<double> pts_seconds = {};
  double time_seconds = 0;
  int width = 0;
  int height = 0;
  // Input: JPEG bytes to store as a blob (empty: none). Output: always empty.
  std::string thumbnail_jpeg = {};
  // Output: the blob hash of the thumbnail. Input: used when thumbnail_jpeg is empty, to refer to
  // a blob already stored with PutBlob.
  std::optional<std::string> thumbnail_hash = {};
  std::optional<uint64_t> phash = {};  // 64-bit perceptual hash
  // The sample index of an earlier frame of the item this one nearly repeats (the vision
  // encoder's near-duplicate check); unset: the frame is kept for contexts.
  std::optional<int64_t> duplicate_of = {};
};

struct SegmentRecord {
  // e.g. "subtitle:0", "sidecar:movie.en.srt", "document", "speech" (kSpeechSource), "pdf".
  // Documents have no clock: a .txt/.md chunk's ordinal ("document"), a page's number (a page
  // source: "pdf", "ocr", "html", "epub", "docx", "pptx", "odt", "odp", "slides:NAME").
  std::string source = {};
  double start_seconds = 0;
  double end_seconds = 0;
  std::string text = {};
  std::optional<std::string> language = {};
  std::optional<double> confidence = {};  // in [0, 1]: speech, where the backend gives one
  // The words with their times, where a speech backend gives them: a JSON array of
  // {"start": s, "end": s, "text": "...", "confidence": c}.
  std::optional<std::string> words_json = {};
};

// The source of the segments a transcript of the item's speech holds. They belong to the
// transcript (Store::StartTranscript, AddTranscriptChunk), not to the item's outputs:
// MarkItemDone and ReplaceItemSegments leave them alone.
inline constexpr const char* kSpeechSource = "speech";

// The transcript of an item's speech (one per item).
struct TranscriptRecord {
  int64_t item_id = 0;
  // What it was made from (content and speech settings): another key means another transcript.
  std::string settings_key = {};
  std::string backend = {};  // "pocketsphinx" | "openai"
  std::string model = {};
  std::optional<std::string> language = {};  // asked for or detected
  TranscriptStatus status = TranscriptStatus::kRunning;
  int64_t segments = 0;
  int64_t chunks = 0;         // speech chunks found in the audio
  int64_t failed_chunks = 0;  // not transcribed (kPartial)
  double speech_seconds = 0;
  std::optional<std::string> note = {};   // e.g. "no audio stream", "no speech found"
  std::optional<std::string> error = {};  // why it is partial or failed
  std::string updated_at = {};
};

// One transcribed speech chunk of a transcript: a rerun skips the chunks stored.
struct TranscriptChunkRecord {
  int64_t chunk = 0;  // the chunk's index in the audio
  double start_seconds = 0;
  double end_seconds = 0;
  int64_t segments = 0;
};

struct FeatureRecord {
  int64_t frame_id = 0;
  std::string model = {};
  std::string dtype = {};          // f32, f16, bf16, i8, u8
  std::vector<int64_t> dims = {};  // e.g. {256, 1152}
  std::string data = {};           // raw tensor bytes, stored as a blob
  // A hash of the encoder's input (e.g. the pixels of a frame pair): with `model`, the key under
  // which a feature can be reused for identical input.
  std::optional<std::string> input_hash = {};
};

// A feature of one of an item's own frames, named by sample index (MarkItemDone resolves it).
struct ItemFeature {
  int64_t sample_index = 0;
  FeatureRecord feature = {};  // frame_id ignored
};

// A stored feature with where its frame is (for similarity search).
struct FeatureRow {
  int64_t feature_id = 0;
  int64_t frame_id = 0;
  int64_t item_id = 0;
  std::string job = {};
  std::string path = {};
  int64_t sample_index = 0;
  double time_seconds = 0;
  std::optional<int64_t> duplicate_of = {};
  std::string model = {};
  std::string dtype = {};
  std::string dims_json = {};
  std::string data = {};
};

// What processing an item produced; stored together with its status change.
struct ItemOutputs {
  std::vector<FrameRecord> frames = {};
  std::vector<SegmentRecord> segments = {};
  std::vector<ItemFeature> features = {};      // of `frames`, by sample index
  std::optional<std::string> media_json = {};  // replaces the item's media facts when set
  // Replaces the item's kind when set: a video container found to hold sound alone is an audio
  // item.
  std::optional<ItemKind> kind = {};
};

struct ContextRecord {
  int64_t item_id = 0;
  std::string prompt_id = {};
  int64_t text_tokens = 0;
  int64_t image_tokens = 0;
  int64_t video_tokens = 0;
  int64_t audio_tokens = 0;
  std::string manifest_json = {};  // what went into the context; its hash is the context's key
  std::optional<std::string> settings_key = {};  // what it was built from (prompt, settings, item)
  std::optional<std::string> count_method = {};  // "exact" or "estimate"
  std::optional<std::string> transport = {};     // "images", "video" or "file"
  int64_t segment_index = 0;                     // split video: which segment
  int64_t segment_count = 1;
  // The settings key of the job's context this row belongs to (unset: its own settings_key; a
  // re-fit or a reduce names the key it was made from). See Store::RetireContexts.
  std::optional<std::string> base_key = {};
  // What the row's frame files in the frame cache were made from (opaque;
  // jobs/context/context_frames.h); unset when it sends no cached frames.
  std::optional<std::string> frame_source = {};
};

// A context row the job no longer builds, and what its frame files were made from.
struct RetiredContext {
  int64_t id = 0;
  std::string prompt_id = {};
  std::string manifest_json = {};
  std::optional<std::string> frame_source = {};
  bool deleted = false;  // else kept (a task or request refers to it) and marked superseded
};

// What Store::RetireContexts did.
struct RetiredContexts {
  std::vector<RetiredContext> retired;  // deleted or newly superseded rows
  int64_t deleted = 0;
  int64_t superseded = 0;     // newly marked
  int64_t restored = 0;       // superseded rows the job builds again (the mark removed)
  int64_t tasks_deleted = 0;  // questions no longer asked (about retired rows, or of a prompt
                              // that no longer applies to the item) that were never sent
  int64_t tasks_retired = 0;  // such questions sent before: kept, marked tasks.retired_at
  // Manifests of the current rows (of any item) that share a frame source with a retired row:
  // their frame files are still needed.
  std::vector<std::pair<std::string, std::string>> kept_frames;  // (frame_source, manifest)
};

struct RequestRecord {
  int64_t item_id = 0;
  std::optional<int64_t> context_id = {};
  std::optional<int64_t> run_id = {};
  std::string prompt_id = {};
  std::optional<std::string> model = {};
};

struct ResponseRecord {
  std::string content = {};
  std::optional<std::string> reasoning = {};
  std::optional<std::string> finish_reason = {};
  std::optional<int64_t> prompt_tokens = {};
  std::optional<int64_t> completion_tokens = {};
  std::optional<int64_t> cached_tokens = {};
  std::optional<double> latency_seconds = {};
};

struct EventRecord {
  std::optional<int64_t> run_id = {};
  std::optional<int64_t> item_id = {};
  EventLevel level = EventLevel::kInfo;
  std::string message = {};
};

// A time the model wrote in an answer (base/time_references.h), linked to the item's nearest frame
// (the answer_time_frames view).
struct AnswerTimeRecord {
  int64_t response_id = 0;
  int64_t char_start = 0;                  // code points into the response's content, 0-based
  int64_t char_end = 0;                    // one past the last
  std::string text = {};                   // as written, e.g. "01:15"
  std::string form = {};                   // "clock", "words", "marker"
  double seconds = 0;                      // the moment, or a range's start
  std::optional<double> end_seconds = {};  // a range's end
  // The nearest frame (unset when the item has no frames or the time is outside the item).
  std::optional<int64_t> frame_id = {};
  std::optional<int64_t> frame_index = {};  // its sample_index
  std::optional<double> frame_seconds = {};
  std::optional<int64_t> end_frame_index = {};  // a range's end frame
};

// One full-text search hit.
struct SearchHit {
  enum class Source { kAnswer, kSegment };
  Source source = Source::kAnswer;
  std::string job = {};
  int64_t item_id = 0;
  std::string path = {};
  // kAnswer: the prompt id. kSegment: the segment's source (e.g. "subtitle:0").
  std::string origin = {};
  // kSegment: where in the media the text is. kAnswer: unset (an answer covers the whole item).
  std::optional<double> start_seconds = {};
  std::optional<double> end_seconds = {};
  std::string snippet = {};  // matched terms wrapped in [ and ], long text elided with "..."
  double score = 0;          // bm25; lower is better
  // kAnswer: the response, and the time references that appear in the snippet with their frames.
  std::optional<int64_t> response_id = {};
  std::vector<AnswerTimeRecord> times = {};
};

struct ItemStatusCounts {
  int64_t pending = 0;
  int64_t running = 0;
  int64_t done = 0;
  int64_t failed = 0;
  int64_t partial = 0;  // of `done`: videos whose sample is partial (see PartialItem)
};

// A video that is done, but not every chosen frame could be decoded (a damaged or truncated
// file): from its media_json "sample" (requested, returned, missing, decode_errors, truncation).
struct PartialItem {
  std::string job = {};
  int64_t item_id = 0;
  std::string path = {};
  int64_t requested = 0;
  int64_t returned = 0;
  int64_t missing = 0;
  int64_t decode_errors = 0;
  std::string truncation = {};  // "" unless the file ended early
  std::string time = {};        // when it finished
};

struct FailureRecord {
  std::string job = {};
  int64_t item_id = 0;
  std::string path = {};
  std::string stage = {};  // "item" or "request"
  std::optional<std::string> prompt_id = {};
  std::string error = {};
  std::string time = {};
};

struct StatusSummary {
  std::vector<RunRecord> recent_runs = {};  // newest first
  ItemStatusCounts items;
  std::vector<FailureRecord> recent_failures = {};  // newest first
  std::vector<PartialItem> recent_partial = {};     // newest first
};

}  // namespace reel::storage
