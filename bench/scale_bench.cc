// Planning and recording at scale, each against a named baseline measured in the same run on the
// same machine, printed as a ratio.
//
// Recording: --items items (default 10,000) with --frames frames each (default 10; 100,000 frame
// rows, each with a ~3 KB JPEG-like thumbnail blob and a 64-bit perceptual hash) and --segments
// text segments each (default 3), written the way the runner writes them: Store::UpsertItem,
// MarkItemRunning, MarkItemDone(ItemOutputs). Frame 0 of every item shows the same "title card",
// so one thumbnail in ten is a duplicate that the blob table stores once.
//   Baseline "raw sqlite3, 1 txn/item": the same final rows written into a file made by
//   Store::Open (same schema, triggers, pragmas) through the sqlite3 C API in the most direct
//   way: statements prepared once, one transaction per item, the item inserted in its final
//   state. Reference "raw sqlite3, 1 txn": the same with one transaction for everything.
//   A fourth variant, raw sqlite3 with the runner's three transactions per item and Store's SQL,
//   splits Reel's extra time into "three commits instead of one" and "the API".
//   Every variant writes its own file; they take turns, 500 items at a time, so that load from
//   other processes falls on all alike. All compute the same SHA-256 keys (thumbnail blobs,
//   segment text); generating the input data is not timed. The row counts are checked equal.
//
// Planning, over --files small text files (default 10,000; ~1 KB each) in a directory tree and a
// job file whose input is a `**` glob, warm page cache, one thread on both sides:
//   expansion (LoadJobFile + ExpandInputs) vs `find DIR -type f | wc -l`;
//   the cheap change check (jobs::StatFile: size, mtime, inode) vs
//     `find DIR -type f -printf '%s %T@ %i\n'` (find also walks, so expansion + stat is shown too);
//   content hashing (jobs::HashFile, storage::Sha256) vs `find DIR -type f -print0 | xargs -0
//     sha256sum`, and the hash throughput on one large file vs `sha256sum FILE`;
//   the up-to-date check against the recorded database: per item Store::FindItem + IsUpToDate,
//     vs the reference of one raw SELECT of all items (plus a hash-map probe per path), and a raw
//     prepared point SELECT reused for every item.
//
// End to end (if the `reel` binary has `plan` and `run`): `reel plan`, a first `reel run` over the
// text files (prepare only: no model endpoint), a second `reel run` that must skip everything,
// and `reel plan` again, vs `find ... | xargs -0 sha256sum`.
//
// Ratios are baseline time / Reel time: above 1, Reel is faster; below 1, slower.
//
// Usage: scale_bench [--items N] [--frames N] [--segments N] [--files N] [--reps N]
//                    [--hash-mib N] [--work-dir DIR] [--reel PATH] [--sections record,plan,cli]
//                    [--keep]
#include <sqlite3.h>  // the raw baselines only; Reel itself goes through storage/
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench/bench_util.h"
#include "jobs/run/item_plan.h"
#include "jobs/spec/job_spec.h"
#include "storage/database.h"
#include "storage/records.h"
#include "storage/sha256.h"
#include "storage/store.h"

namespace {

namespace fs = std::filesystem;
using reel::Result;
using reel::Status;
using reel::bench::Clock;
using reel::bench::CpuModel;
using reel::bench::FirstLine;
using reel::bench::Median;
using reel::bench::OutputOf;
using reel::bench::Seconds;
using reel::bench::ShellQuote;
using reel::storage::ItemOutputs;
using reel::storage::ItemRecord;
using reel::storage::Store;

constexpr char kJobName[] = "scale-bench";
constexpr char kMediaJson[] = R"({"duration_seconds":10.0,"width":1920,"height":1080})";

// ---------------------------------------------------------------------------------------------
// Small helpers.

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "scale_bench: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T OrDie(Result<T> result, const std::string& what) {
  if (!result.ok()) Die(what + ": " + result.status().ToString());
  return std::move(result).value();
}

void OrDie(const Status& status, const std::string& what) {
  if (!status.ok()) Die(what + ": " + status.ToString());
}

// Runs `sh -c command` with stdin, stdout and stderr on /dev/null; returns its exit status, or
// -1 when it could not be started or was killed.
int RunShell(const std::string& command) {
  std::fflush(nullptr);  // or the child's freopen flushes our buffered output a second time
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (std::freopen("/dev/null", "r", stdin) == nullptr ||
        std::freopen("/dev/null", "w", stdout) == nullptr ||
        std::freopen("/dev/null", "w", stderr) == nullptr) {
      _exit(126);
    }
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

uint64_t FileBytes(const fs::path& path) {
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

// The database file plus its WAL, in MB.
double DatabaseMb(const fs::path& db) {
  return (FileBytes(db) + FileBytes(db.string() + "-wal")) / 1e6;
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------------------------------------
// The summary table.

struct Row {
  std::string measure;
  std::string reel;      // Reel's figure, with units
  std::string baseline;  // the baseline's name and figure
  double ratio = 0;      // baseline time / Reel time (0: none)
};
std::vector<Row> g_rows;

std::string Format(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string Rate(double count, double seconds, const char* unit) {
  char buffer[96];
  std::snprintf(buffer, sizeof(buffer), "%.3f s, %.0f %s/s", seconds, count / seconds, unit);
  return buffer;
}

// ---------------------------------------------------------------------------------------------
// Raw sqlite3 handles for the baselines.

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using UniqueDb = std::unique_ptr<sqlite3, DbCloser>;
using UniqueStmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

void Check(sqlite3* db, int rc, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    Die(std::string(what) + ": " + sqlite3_errmsg(db));
  }
}

// Opens a connection with the settings Reel's Database uses on every connection.
UniqueDb OpenRaw(const fs::path& path, bool read_only) {
  sqlite3* raw = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  UniqueDb db(raw);
  Check(db.get(), rc, "open");
  sqlite3_busy_timeout(db.get(), 10000);
  Check(db.get(),
        sqlite3_exec(db.get(), "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;", nullptr,
                     nullptr, nullptr),
        "pragmas");
  return db;
}

UniqueStmt Prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  Check(db, sqlite3_prepare_v2(db, sql, -1, &raw, nullptr), sql);
  return UniqueStmt(raw);
}

int64_t QueryInt(sqlite3* db, const char* sql) {
  UniqueStmt stmt = Prepare(db, sql);
  Check(db, sqlite3_step(stmt.get()), sql);
  return sqlite3_column_int64(stmt.get(), 0);
}

// Steps a write statement to completion and resets it for reuse.
void RunAndReset(sqlite3* db, sqlite3_stmt* stmt, const char* what) {
  int rc = sqlite3_step(stmt);
  if (rc != SQLITE_DONE) Die(std::string(what) + ": " + sqlite3_errmsg(db));
  sqlite3_reset(stmt);
}

void BindText(sqlite3_stmt* stmt, int index, const std::string& text) {
  sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
}

void BindOptionalText(sqlite3_stmt* stmt, int index, const std::optional<std::string>& text) {
  if (text) {
    BindText(stmt, index, *text);
  } else {
    sqlite3_bind_null(stmt, index);
  }
}

std::string ColumnText(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  return text ? std::string(reinterpret_cast<const char*>(text),
                            static_cast<size_t>(sqlite3_column_bytes(stmt, column)))
              : std::string();
}

std::optional<std::string> ColumnOptionalText(sqlite3_stmt* stmt, int column) {
  if (sqlite3_column_type(stmt, column) == SQLITE_NULL) return std::nullopt;
  return ColumnText(stmt, column);
}

std::optional<int64_t> ColumnOptionalInt(sqlite3_stmt* stmt, int column) {
  if (sqlite3_column_type(stmt, column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(stmt, column);
}

constexpr char kItemColumns[] =
    "id, job_id, path, kind, content_hash, size_bytes, mtime_ns, inode, media_json, "
    "settings_hash, status, error, attempts, last_run_id, updated_at";

// The same fields Store::FindItem reads, so the reference does the same copying.
ItemRecord ReadRawItem(sqlite3_stmt* stmt) {
  using reel::storage::ItemKind;
  using reel::storage::ItemStatus;
  ItemRecord item;
  item.id = sqlite3_column_int64(stmt, 0);
  item.job_id = sqlite3_column_int64(stmt, 1);
  item.path = ColumnText(stmt, 2);
  std::string kind = ColumnText(stmt, 3);
  item.kind = kind == "image"      ? ItemKind::kImage
              : kind == "document" ? ItemKind::kDocument
              : kind == "subtitle" ? ItemKind::kSubtitle
                                   : ItemKind::kVideo;
  item.content_hash = ColumnOptionalText(stmt, 4);
  item.size_bytes = sqlite3_column_int64(stmt, 5);
  item.mtime_ns = ColumnOptionalInt(stmt, 6);
  item.inode = ColumnOptionalInt(stmt, 7);
  item.media_json = ColumnOptionalText(stmt, 8);
  item.settings_hash = ColumnText(stmt, 9);
  std::string status = ColumnText(stmt, 10);
  item.status = status == "done"      ? ItemStatus::kDone
                : status == "running" ? ItemStatus::kRunning
                : status == "failed"  ? ItemStatus::kFailed
                                      : ItemStatus::kPending;
  item.error = ColumnOptionalText(stmt, 11);
  item.attempts = sqlite3_column_int64(stmt, 12);
  item.last_run_id = ColumnOptionalInt(stmt, 13);
  item.updated_at = ColumnText(stmt, 14);
  return item;
}

// ---------------------------------------------------------------------------------------------
// Recording.

struct RecordConfig {
  int items = 10000;
  int frames = 10;
  int segments = 3;
};

// The synthetic facts of item `i`: the same for every variant.
ItemRecord MakeItem(int i, int64_t job_id, const std::string& settings_hash) {
  ItemRecord item;
  item.job_id = job_id;
  char path[96];
  std::snprintf(path, sizeof(path), "/media/archive/%02d/%02d/clip_%05d.mp4", i / 1000,
                (i / 10) % 100, i);
  item.path = path;
  item.kind = reel::storage::ItemKind::kVideo;
  item.content_hash = reel::storage::Sha256Hex(item.path + " content");
  item.size_bytes = 50'000'000 + i;
  item.mtime_ns = int64_t{1'700'000'000} * 1'000'000'000 + i;
  item.inode = 1'000'000 + i;
  item.settings_hash = settings_hash;
  return item;
}

// A JPEG-like thumbnail of 2.5-3.5 KB: SOI/APP0 header, pseudo-random body, EOI.
std::string MakeThumbnail(uint64_t seed) {
  uint64_t state = seed;
  size_t size = 2560 + SplitMix64(state) % 1024;
  std::string bytes(size, '\0');
  for (size_t i = 0; i + 8 <= size; i += 8) {
    uint64_t word = SplitMix64(state);
    std::memcpy(&bytes[i], &word, 8);
  }
  static const char kHeader[] = "\xFF\xD8\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01";
  std::memcpy(bytes.data(), kHeader, sizeof(kHeader) - 1);
  bytes[size - 2] = '\xFF';
  bytes[size - 1] = '\xD9';
  return bytes;
}

ItemOutputs MakeOutputs(int i, const RecordConfig& config, const std::string& title_card) {
  static const char* const kWords[] = {
      "penguin", "harbour", "sunset", "train",   "market",  "river", "bicycle", "storm",
      "kitchen", "concert", "forest", "bridge",  "lantern", "chess", "glacier", "parade",
      "library", "orchard", "canyon", "dolphin", "tram",    "kite",  "meadow",  "festival"};
  constexpr size_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);
  ItemOutputs outputs;
  uint64_t state = 0x5ca1eULL * 1000003 + static_cast<uint64_t>(i);
  for (int k = 0; k < config.frames; ++k) {
    reel::storage::FrameRecord frame;
    frame.sample_index = k;
    frame.source_frame = int64_t{k} * 30;
    frame.pts_seconds = k * 1.0;
    frame.time_seconds = k * 1.0;
    frame.width = 1280;
    frame.height = 720;
    frame.thumbnail_jpeg =
        k == 0 ? title_card : MakeThumbnail((static_cast<uint64_t>(i) << 20) + k + 1);
    frame.phash = SplitMix64(state);
    outputs.frames.push_back(std::move(frame));
  }
  for (int s = 0; s < config.segments; ++s) {
    reel::storage::SegmentRecord segment;
    segment.source = "subtitle:0";
    segment.start_seconds = s * 3.0;
    segment.end_seconds = s * 3.0 + 2.5;
    segment.text = "Clip " + std::to_string(i) + ", line " + std::to_string(s) + ":";
    for (int w = 0; w < 12; ++w)
      segment.text += std::string(" ") + kWords[SplitMix64(state) % kWordCount];
    segment.language = "en";
    outputs.segments.push_back(std::move(segment));
  }
  outputs.media_json = kMediaJson;
  return outputs;
}

struct RecordTiming {
  double total_s = 0;
  double upsert_s = 0;   // Reel only: UpsertItem
  double running_s = 0;  // Reel only: MarkItemRunning
  double done_s = 0;     // Reel only: MarkItemDone
  double hashing_s = 0;  // raw only: the SHA-256 keys, timed on their own (inside total_s)
  double db_mb = 0;
};

// A new database file made by Store::Open, with the job and a run recorded.
struct PreparedDb {
  int64_t job_id = 0;
  int64_t run_id = 0;
};

PreparedDb CreateDatabase(Store& store) {
  PreparedDb out;
  reel::storage::JobRecord job;
  job.name = kJobName;
  job.spec_text = "name: scale-bench\ninputs: [/media/archive]\n";
  out.job_id = OrDie(store.UpsertJob(job), "UpsertJob");
  reel::storage::RunRecord run;
  run.job_id = out.job_id;
  run.spec_hash = reel::storage::Sha256Hex(job.spec_text);
  out.run_id = OrDie(store.BeginRun(run), "BeginRun").id;
  return out;
}

// One way of writing the items, into its own file. The three recorders are driven in turns, a
// block of items each, so that load from other processes falls on all of them alike.
class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual const char* name() const = 0;
  // Writes item `index`; adds the time it took to timing().
  virtual void Write(const ItemRecord& item, const ItemOutputs& outputs) = 0;
  // Ends the run (timed: the one-transaction variant commits here).
  virtual void Finish() = 0;
  const RecordTiming& timing() const { return timing_; }
  const fs::path& path() const { return path_; }

 protected:
  explicit Recorder(fs::path path) : path_(std::move(path)) {}
  RecordTiming timing_;
  fs::path path_;
  PreparedDb prepared_;
};

// The runner's calls: UpsertItem, MarkItemRunning, MarkItemDone (three transactions per item).
class StoreRecorder final : public Recorder {
 public:
  StoreRecorder(const fs::path& path, const RecordConfig& config)
      : Recorder(path), config_(config) {
    fs::remove(path);
    store_.emplace(OrDie(Store::Open(path.string()), "Store::Open " + path.string()));
    prepared_ = CreateDatabase(*store_);
  }
  const char* name() const override { return "Reel Store"; }
  void Write(const ItemRecord& input, const ItemOutputs& outputs) override {
    ItemRecord item = input;
    item.job_id = prepared_.job_id;
    Clock::time_point start = Clock::now();
    int64_t id = OrDie(store_->UpsertItem(item), "UpsertItem");
    Clock::time_point upserted = Clock::now();
    OrDie(store_->MarkItemRunning(id, prepared_.run_id), "MarkItemRunning");
    Clock::time_point running = Clock::now();
    OrDie(store_->MarkItemDone(id, outputs), "MarkItemDone");
    Clock::time_point done = Clock::now();
    timing_.upsert_s += std::chrono::duration<double>(upserted - start).count();
    timing_.running_s += std::chrono::duration<double>(running - upserted).count();
    timing_.done_s += std::chrono::duration<double>(done - running).count();
    timing_.total_s += std::chrono::duration<double>(done - start).count();
  }
  void Finish() override {
    Clock::time_point start = Clock::now();
    reel::storage::RunCounters counters;
    counters.items_seen = counters.items_done = config_.items;
    counters.frames = int64_t{config_.items} * config_.frames;
    counters.segments = int64_t{config_.items} * config_.segments;
    OrDie(store_->FinishRun(prepared_.run_id, reel::storage::RunStatus::kSucceeded, counters),
          "FinishRun");
    timing_.total_s += Seconds(start);
    store_.reset();
    timing_.db_mb = DatabaseMb(path_);
  }

 private:
  RecordConfig config_;
  std::optional<Store> store_;
};

// Raw sqlite3 writes with every statement prepared once.
enum class RawMode {
  // The most direct: each item inserted in its final state, one transaction per item (the
  // runner's unit of crash safety). The named baseline.
  kItemTxn,
  // The same rows, one transaction for all items (committed in Finish()). A reference point.
  kOneTxn,
  // The runner's transaction pattern with Store's SQL: insert pending, mark running, then mark
  // done + delete old outputs + insert the new ones; three transactions per item. Not a
  // baseline: it splits Reel's overhead into "three commits instead of one" and "the API".
  kRunnerTxns,
};

class RawRecorder final : public Recorder {
 public:
  RawRecorder(const fs::path& path, RawMode mode) : Recorder(path), mode_(mode) {
    fs::remove(path);
    {
      Store store = OrDie(Store::Open(path.string()), "Store::Open " + path.string());
      prepared_ = CreateDatabase(store);
    }
    db_ = OpenRaw(path, /*read_only=*/false);
    sqlite3* h = db_.get();
    begin_ = Prepare(h, "BEGIN IMMEDIATE");
    commit_ = Prepare(h, "COMMIT");
    insert_item_ = Prepare(
        h,
        "INSERT INTO items(job_id, path, kind, content_hash, size_bytes, mtime_ns, inode, "
        "media_json, settings_hash, status, attempts, last_run_id, started_at, finished_at) "
        "VALUES (?1, ?2, 'video', ?3, ?4, ?5, ?6, ?7, ?8, 'done', 1, ?9, "
        "strftime('%Y-%m-%dT%H:%M:%fZ','now'), strftime('%Y-%m-%dT%H:%M:%fZ','now'))");
    insert_blob_ = Prepare(
        h, "INSERT INTO blobs(hash, size, data) VALUES (?1, ?2, ?3) ON CONFLICT(hash) DO NOTHING");
    insert_frame_ = Prepare(
        h,
        "INSERT INTO frames(item_id, sample_index, source_frame, pts_seconds, time_seconds, "
        "width, height, thumbnail_hash, phash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    insert_segment_ = Prepare(
        h,
        "INSERT INTO segments(item_id, source, start_seconds, end_seconds, text, text_hash, "
        "language) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    insert_pending_ =
        Prepare(h,
                "INSERT INTO items(job_id, path, kind, content_hash, size_bytes, mtime_ns, inode, "
                "settings_hash) VALUES (?1, ?2, 'video', ?3, ?4, ?5, ?6, ?7)");
    mark_running_ =
        Prepare(h,
                "UPDATE items SET status = 'running', attempts = attempts + 1, last_run_id = ?2, "
                "started_at = strftime('%Y-%m-%dT%H:%M:%fZ','now'), finished_at = NULL, "
                "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1");
    mark_done_ = Prepare(
        h,
        "UPDATE items SET status = 'done', error = NULL, media_json = coalesce(?2, media_json), "
        "finished_at = strftime('%Y-%m-%dT%H:%M:%fZ','now'), "
        "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1");
    delete_frames_ = Prepare(h, "DELETE FROM frames WHERE item_id = ?1");
    delete_segments_ = Prepare(h, "DELETE FROM segments WHERE item_id = ?1");
  }
  const char* name() const override {
    switch (mode_) {
      case RawMode::kItemTxn:
        return "raw sqlite3, 1 txn/item";
      case RawMode::kOneTxn:
        return "raw sqlite3, 1 txn in all";
      case RawMode::kRunnerTxns:
        return "raw sqlite3, runner's 3 txn/item";
    }
    return "";
  }
  void Write(const ItemRecord& item, const ItemOutputs& outputs) override {
    sqlite3* h = db_.get();
    Clock::time_point start = Clock::now();
    sqlite3_stmt* s = nullptr;
    int64_t item_id = 0;
    Clock::time_point done_start = start;
    if (mode_ == RawMode::kRunnerTxns) {
      RunAndReset(h, begin_.get(), "BEGIN");
      s = insert_pending_.get();
      sqlite3_bind_int64(s, 1, prepared_.job_id);
      BindText(s, 2, item.path);
      BindOptionalText(s, 3, item.content_hash);
      sqlite3_bind_int64(s, 4, item.size_bytes);
      sqlite3_bind_int64(s, 5, *item.mtime_ns);
      sqlite3_bind_int64(s, 6, *item.inode);
      BindText(s, 7, item.settings_hash);
      RunAndReset(h, s, "insert pending item");
      item_id = sqlite3_last_insert_rowid(h);
      RunAndReset(h, commit_.get(), "COMMIT");
      Clock::time_point inserted = Clock::now();
      RunAndReset(h, begin_.get(), "BEGIN");
      s = mark_running_.get();
      sqlite3_bind_int64(s, 1, item_id);
      sqlite3_bind_int64(s, 2, prepared_.run_id);
      RunAndReset(h, s, "mark running");
      RunAndReset(h, commit_.get(), "COMMIT");
      Clock::time_point running = Clock::now();
      timing_.upsert_s += std::chrono::duration<double>(inserted - start).count();
      timing_.running_s += std::chrono::duration<double>(running - inserted).count();
      done_start = running;
      RunAndReset(h, begin_.get(), "BEGIN");
      s = mark_done_.get();
      sqlite3_bind_int64(s, 1, item_id);
      BindOptionalText(s, 2, outputs.media_json);
      RunAndReset(h, s, "mark done");
      s = delete_frames_.get();
      sqlite3_bind_int64(s, 1, item_id);
      RunAndReset(h, s, "delete frames");
      s = delete_segments_.get();
      sqlite3_bind_int64(s, 1, item_id);
      RunAndReset(h, s, "delete segments");
    } else {
      if (mode_ == RawMode::kItemTxn || !open_) {  // kOneTxn: only the first item begins
        RunAndReset(h, begin_.get(), "BEGIN");
        open_ = true;
      }
      s = insert_item_.get();
      sqlite3_bind_int64(s, 1, prepared_.job_id);
      BindText(s, 2, item.path);
      BindOptionalText(s, 3, item.content_hash);
      sqlite3_bind_int64(s, 4, item.size_bytes);
      sqlite3_bind_int64(s, 5, *item.mtime_ns);
      sqlite3_bind_int64(s, 6, *item.inode);
      BindOptionalText(s, 7, outputs.media_json);
      BindText(s, 8, item.settings_hash);
      sqlite3_bind_int64(s, 9, prepared_.run_id);
      RunAndReset(h, s, "insert item");
      item_id = sqlite3_last_insert_rowid(h);
    }
    for (const reel::storage::FrameRecord& frame : outputs.frames) {
      Clock::time_point hash_start = Clock::now();
      std::string hash = reel::storage::Sha256Hex(frame.thumbnail_jpeg);
      timing_.hashing_s += Seconds(hash_start);
      s = insert_blob_.get();
      BindText(s, 1, hash);
      sqlite3_bind_int64(s, 2, static_cast<int64_t>(frame.thumbnail_jpeg.size()));
      sqlite3_bind_blob(s, 3, frame.thumbnail_jpeg.data(),
                        static_cast<int>(frame.thumbnail_jpeg.size()), SQLITE_STATIC);
      RunAndReset(h, s, "insert blob");
      s = insert_frame_.get();
      sqlite3_bind_int64(s, 1, item_id);
      sqlite3_bind_int64(s, 2, frame.sample_index);
      sqlite3_bind_int64(s, 3, *frame.source_frame);
      sqlite3_bind_double(s, 4, *frame.pts_seconds);
      sqlite3_bind_double(s, 5, frame.time_seconds);
      sqlite3_bind_int(s, 6, frame.width);
      sqlite3_bind_int(s, 7, frame.height);
      BindText(s, 8, hash);
      sqlite3_bind_int64(s, 9, static_cast<int64_t>(*frame.phash));
      RunAndReset(h, s, "insert frame");
    }
    for (const reel::storage::SegmentRecord& segment : outputs.segments) {
      Clock::time_point hash_start = Clock::now();
      std::string text_hash = reel::storage::Sha256Hex(segment.text);
      timing_.hashing_s += Seconds(hash_start);
      s = insert_segment_.get();
      sqlite3_bind_int64(s, 1, item_id);
      BindText(s, 2, segment.source);
      sqlite3_bind_double(s, 3, segment.start_seconds);
      sqlite3_bind_double(s, 4, segment.end_seconds);
      BindText(s, 5, segment.text);
      BindText(s, 6, text_hash);
      BindOptionalText(s, 7, segment.language);
      RunAndReset(h, s, "insert segment");
    }
    if (mode_ != RawMode::kOneTxn) RunAndReset(h, commit_.get(), "COMMIT");
    if (mode_ == RawMode::kRunnerTxns) timing_.done_s += Seconds(done_start);
    timing_.total_s += Seconds(start);
  }
  void Finish() override {
    Clock::time_point start = Clock::now();
    if (mode_ == RawMode::kOneTxn && open_) RunAndReset(db_.get(), commit_.get(), "COMMIT");
    open_ = false;
    timing_.total_s += Seconds(start);
    begin_.reset();
    commit_.reset();
    insert_item_.reset();
    insert_blob_.reset();
    insert_frame_.reset();
    insert_segment_.reset();
    insert_pending_.reset();
    mark_running_.reset();
    mark_done_.reset();
    delete_frames_.reset();
    delete_segments_.reset();
    db_.reset();
    timing_.db_mb = DatabaseMb(path_);
  }

 private:
  RawMode mode_;
  bool open_ = false;  // kOneTxn: the transaction has begun
  UniqueDb db_;
  UniqueStmt begin_, commit_, insert_item_, insert_blob_, insert_frame_, insert_segment_;
  UniqueStmt insert_pending_, mark_running_, mark_done_, delete_frames_, delete_segments_;
};

struct RowCounts {
  int64_t items = 0, done = 0, frames = 0, segments = 0, blobs = 0, fts = 0;
  bool operator==(const RowCounts&) const = default;
};

RowCounts CountRows(const fs::path& path) {
  UniqueDb db = OpenRaw(path, /*read_only=*/true);
  RowCounts c;
  c.items = QueryInt(db.get(), "SELECT count(*) FROM items");
  c.done = QueryInt(db.get(), "SELECT count(*) FROM items WHERE status = 'done'");
  c.frames = QueryInt(db.get(), "SELECT count(*) FROM frames");
  c.segments = QueryInt(db.get(), "SELECT count(*) FROM segments");
  c.blobs = QueryInt(db.get(), "SELECT count(*) FROM blobs");
  c.fts =
      QueryInt(db.get(), "SELECT count(*) FROM segments_fts WHERE segments_fts MATCH 'penguin'");
  return c;
}

void PrintCounts(const char* name, const RowCounts& c) {
  std::printf("    %-26s items %" PRId64 " (done %" PRId64 "), frames %" PRId64
              ", segments %" PRId64 ", blobs %" PRId64 ", fts 'penguin' hits %" PRId64 "\n",
              name, c.items, c.done, c.frames, c.segments, c.blobs, c.fts);
}

// Returns the path of the database Reel wrote, for the up-to-date check.
fs::path BenchRecording(const fs::path& work, const RecordConfig& config,
                        const std::string& settings_hash) {
  const std::string title_card = MakeThumbnail(42);
  const double items = config.items;
  const double frames = double{1} * config.items * config.frames;
  std::printf(
      "\n== Recording: %d items x %d frames (~3 KB thumbnail + phash each) + %d segments"
      " per item\n",
      config.items, config.frames, config.segments);
  std::fflush(stdout);

  const fs::path reel_db = work / "record_reel.db";
  const fs::path raw_db = work / "record_raw.db";
  const fs::path raw1_db = work / "record_raw_one_txn.db";
  const fs::path raw3_db = work / "record_raw_runner_txns.db";
  StoreRecorder reel_rec(reel_db, config);
  RawRecorder raw_rec(raw_db, RawMode::kItemTxn);
  RawRecorder raw1_rec(raw1_db, RawMode::kOneTxn);
  RawRecorder raw3_rec(raw3_db, RawMode::kRunnerTxns);
  Recorder* const recorders[] = {&reel_rec, &raw_rec, &raw1_rec, &raw3_rec};
  constexpr int kRecorders = 4;
  constexpr int kBlock = 500;
  double generate_s = 0;
  for (int first = 0, turn = 0; first < config.items; first += kBlock, ++turn) {
    const int last = std::min(config.items, first + kBlock);
    Clock::time_point gen = Clock::now();
    std::vector<std::pair<ItemRecord, ItemOutputs>> block;
    for (int i = first; i < last; ++i) {
      block.emplace_back(MakeItem(i, 0, settings_hash), MakeOutputs(i, config, title_card));
    }
    generate_s += Seconds(gen);
    for (int r = 0; r < kRecorders; ++r) {  // rotate who goes first
      Recorder* recorder = recorders[(turn + r) % kRecorders];
      for (const auto& [item, outputs] : block) recorder->Write(item, outputs);
    }
  }
  for (Recorder* recorder : recorders) recorder->Finish();
  const RecordTiming& reel = reel_rec.timing();
  const RecordTiming& raw = raw_rec.timing();
  const RecordTiming& raw1 = raw1_rec.timing();
  const RecordTiming& raw3 = raw3_rec.timing();
  std::printf(
      "  (the variants write in turns, %d items at a time, each into its own file;"
      " generating the input took %.2f s, not timed)\n",
      kBlock, generate_s);
  std::printf(
      "  Reel Store, runner's calls        %s, %.0f frames/s  [upsert %.2f s, running"
      " %.2f s, done %.2f s]  %.0f MB\n",
      Rate(items, reel.total_s, "items").c_str(), frames / reel.total_s, reel.upsert_s,
      reel.running_s, reel.done_s, reel.db_mb);
  std::printf(
      "  baseline: raw sqlite3, 1 txn/item %s, %.0f frames/s  [of which SHA-256 keys"
      " %.2f s]  %.0f MB\n",
      Rate(items, raw.total_s, "items").c_str(), frames / raw.total_s, raw.hashing_s, raw.db_mb);
  std::printf(
      "  reference: raw sqlite3, 1 txn     %s, %.0f frames/s  [of which SHA-256 keys"
      " %.2f s]  %.0f MB with its WAL\n",
      Rate(items, raw1.total_s, "items").c_str(), frames / raw1.total_s, raw1.hashing_s,
      raw1.db_mb);
  std::printf(
      "  split: raw, runner's 3 txn/item   %s, %.0f frames/s  [insert %.2f s, running"
      " %.2f s, done %.2f s]\n",
      Rate(items, raw3.total_s, "items").c_str(), frames / raw3.total_s, raw3.upsert_s,
      raw3.running_s, raw3.done_s);
  std::printf(
      "  Reel's extra time over the baseline: %.2f s = %.2f s from committing three times"
      " per item (raw 3 txn - raw 1 txn/item) + %.2f s in the API (Reel - raw 3 txn:"
      " statements prepared per call, ...)\n",
      reel.total_s - raw.total_s, raw3.total_s - raw.total_s, reel.total_s - raw3.total_s);
  std::printf("  Reel takes %.2fx the time of raw 1 txn/item, %.2fx that of raw 1 txn in all\n",
              reel.total_s / raw.total_s, reel.total_s / raw1.total_s);

  RowCounts c_reel = CountRows(reel_db), c_raw = CountRows(raw_db), c_raw1 = CountRows(raw1_db),
            c_raw3 = CountRows(raw3_db);
  std::printf("  rows written (must match):\n");
  PrintCounts("Reel", c_reel);
  PrintCounts("raw 1 txn/item", c_raw);
  PrintCounts("raw 1 txn", c_raw1);
  PrintCounts("raw runner's 3 txn/item", c_raw3);
  if (!(c_reel == c_raw && c_raw == c_raw1 && c_raw == c_raw3) || c_reel.done != config.items ||
      c_reel.frames != int64_t{config.items} * config.frames) {
    Die("the variants wrote different rows");
  }

  char figure[160];
  std::snprintf(figure, sizeof(figure), "%.0f items/s, %.0f frames/s", items / reel.total_s,
                frames / reel.total_s);
  char base[160];
  std::snprintf(base, sizeof(base), "raw sqlite3 1 txn/item: %.0f items/s, %.0f frames/s",
                items / raw.total_s, frames / raw.total_s);
  g_rows.push_back({"record (Store, runner's calls)", figure, base, raw.total_s / reel.total_s});
  std::snprintf(base, sizeof(base), "raw sqlite3 1 txn: %.0f items/s, %.0f frames/s",
                items / raw1.total_s, frames / raw1.total_s);
  g_rows.push_back({"record (reference point)", figure, base, raw1.total_s / reel.total_s});

  g_rows.push_back(
      {"record (split: the runner's 3 commits)", figure,
       "raw sqlite3 runner's 3 txn/item: " + Format("%.0f items/s", items / raw3.total_s),
       raw3.total_s / reel.total_s});
  for (const fs::path& path : {raw_db, raw1_db, raw3_db}) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  }
  return reel_db;
}

// ---------------------------------------------------------------------------------------------
// The up-to-date check against the recorded database.

void BenchUpToDate(const fs::path& db_path, const RecordConfig& config,
                   const std::string& settings_hash, int reps) {
  std::printf("\n== Up-to-date check: %d items against %s\n", config.items,
              db_path.filename().c_str());
  // What the planner knows about each input before asking the database (not timed).
  std::vector<ItemRecord> current;
  int64_t job_id = 0;
  {
    UniqueDb db = OpenRaw(db_path, true);
    UniqueStmt stmt = Prepare(db.get(), "SELECT id FROM jobs WHERE name = ?1");
    sqlite3_bind_text(stmt.get(), 1, kJobName, -1, SQLITE_STATIC);
    Check(db.get(), sqlite3_step(stmt.get()), "job id");
    job_id = sqlite3_column_int64(stmt.get(), 0);
  }
  for (int i = 0; i < config.items; ++i) current.push_back(MakeItem(i, job_id, settings_hash));

  std::vector<double> reel_s, scan_s, point_s;
  for (int rep = 0; rep < reps; ++rep) {
    {
      reel::storage::Database db =
          OrDie(reel::storage::Database::OpenReadOnly(db_path.string()), "OpenReadOnly");
      Store store(std::move(db));
      Clock::time_point start = Clock::now();
      int up_to_date = 0;
      for (const ItemRecord& item : current) {
        std::optional<ItemRecord> stored = OrDie(store.FindItem(job_id, item.path), "FindItem");
        if (stored && reel::storage::IsUpToDate(*stored, item.content_hash, settings_hash)) {
          ++up_to_date;
        }
      }
      reel_s.push_back(Seconds(start));
      if (up_to_date != config.items) Die("Reel: not every item is up to date");
    }
    {
      UniqueDb db = OpenRaw(db_path, true);
      Clock::time_point start = Clock::now();
      UniqueStmt stmt = Prepare(
          db.get(),
          (std::string("SELECT ") + kItemColumns + " FROM items WHERE job_id = ?1").c_str());
      sqlite3_bind_int64(stmt.get(), 1, job_id);
      std::unordered_map<std::string, ItemRecord> by_path;
      by_path.reserve(current.size());
      while (sqlite3_step(stmt.get()) == SQLITE_ROW) {
        ItemRecord row = ReadRawItem(stmt.get());
        std::string key = row.path;
        by_path.emplace(std::move(key), std::move(row));
      }
      int up_to_date = 0;
      for (const ItemRecord& item : current) {
        auto it = by_path.find(item.path);
        if (it != by_path.end() &&
            reel::storage::IsUpToDate(it->second, item.content_hash, settings_hash)) {
          ++up_to_date;
        }
      }
      scan_s.push_back(Seconds(start));
      if (up_to_date != config.items) Die("raw scan: not every item is up to date");
    }
    {
      UniqueDb db = OpenRaw(db_path, true);
      Clock::time_point start = Clock::now();
      UniqueStmt stmt = Prepare(db.get(), (std::string("SELECT ") + kItemColumns +
                                           " FROM items WHERE job_id = ?1 AND path = ?2")
                                              .c_str());
      int up_to_date = 0;
      for (const ItemRecord& item : current) {
        sqlite3_bind_int64(stmt.get(), 1, job_id);
        BindText(stmt.get(), 2, item.path);
        if (sqlite3_step(stmt.get()) == SQLITE_ROW) {
          ItemRecord stored = ReadRawItem(stmt.get());
          if (reel::storage::IsUpToDate(stored, item.content_hash, settings_hash)) ++up_to_date;
        }
        sqlite3_reset(stmt.get());
      }
      point_s.push_back(Seconds(start));
      if (up_to_date != config.items) Die("raw point: not every item is up to date");
    }
  }
  const double n = config.items;
  double reel = Median(reel_s), scan = Median(scan_s), point = Median(point_s);
  std::printf("  Reel FindItem + IsUpToDate          %s\n", Rate(n, reel, "items").c_str());
  std::printf("  raw: one SELECT of all + map probe  %s   ratio %.2f\n",
              Rate(n, scan, "items").c_str(), scan / reel);
  std::printf("  raw: reused point SELECT per item   %s   ratio %.2f\n",
              Rate(n, point, "items").c_str(), point / reel);
  std::printf("  (median of %d; each run opens its own connection)\n", reps);
  g_rows.push_back({"up-to-date check (FindItem+IsUpToDate)", Rate(n, reel, "items"),
                    "raw single SELECT of all items: " + Rate(n, scan, "items"), scan / reel});
  g_rows.push_back({"up-to-date check", Rate(n, reel, "items"),
                    "raw reused point SELECT: " + Rate(n, point, "items"), point / reel});
}

// ---------------------------------------------------------------------------------------------
// Planning over a tree of small files.

// tree/aNN/bNN/doc_NNNNN.txt, ~1 KB of text each, 100 files per directory.
fs::path MakeTree(const fs::path& work, int files) {
  fs::path tree = work / "tree";
  fs::remove_all(tree);
  Clock::time_point start = Clock::now();
  std::string body;
  for (int line = 0; body.size() < 1000; ++line) {
    body += "Line " + std::to_string(line) + ": the quick brown fox jumps over the lazy dog.\n";
  }
  for (int i = 0; i < files; ++i) {
    char rel[64];
    std::snprintf(rel, sizeof(rel), "a%02d/b%02d/doc_%05d.txt", i / 1000, (i / 100) % 10, i);
    fs::path path = tree / rel;
    if (i % 100 == 0) fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << "Document " << i << "\n" << body;
    if (!out) Die("cannot write " + path.string());
  }
  std::printf("  made %d files (~1 KB) under %s in %.2f s (not compared)\n", files, tree.c_str(),
              Seconds(start));
  return tree;
}

fs::path WriteJobFile(const fs::path& work) {
  fs::path job = work / "job.yaml";
  std::ofstream out(job);
  out << "name: scale-bench-docs\n"
         "inputs:\n"
         "  - tree/**/*.txt\n"
         "storage:\n"
         "  database: docs.db\n";
  if (!out) Die("cannot write " + job.string());
  return job;
}

// Times `reel_op` and `baseline` alternately `reps` times; returns the medians.
std::pair<double, double> Alternate(int reps, const std::function<void()>& reel_op,
                                    const std::string& baseline) {
  std::vector<double> reel_s, base_s;
  for (int rep = 0; rep < reps; ++rep) {
    Clock::time_point start = Clock::now();
    reel_op();
    reel_s.push_back(Seconds(start));
    start = Clock::now();
    int rc = RunShell(baseline);
    base_s.push_back(Seconds(start));
    if (rc != 0) Die("baseline failed (" + std::to_string(rc) + "): " + baseline);
  }
  return {Median(reel_s), Median(base_s)};
}

struct Tree {
  fs::path work, tree, job_file;
  int files = 0;
  double find_hash_s = 0;  // the `find | xargs sha256sum` baseline, for the CLI section
};

Tree BenchPlanning(const fs::path& work, int files, int reps, int hash_mib) {
  std::printf(
      "\n== Planning: %d small files, job input `tree/**/*.txt` (warm page cache, one "
      "thread each side; median of %d)\n",
      files, reps);
  Tree t;
  t.work = work;
  t.files = files;
  t.tree = MakeTree(work, files);
  t.job_file = WriteJobFile(work);
  const std::string dir = ShellQuote(t.tree.string());
  const double n = files;

  // The count `find` sees must be the count Reel expands to.
  std::string counted = OutputOf("find " + dir + " -type f | wc -l");
  if (std::atoll(counted.c_str()) != files) Die("find counted " + counted);

  std::vector<reel::jobs::InputFile> inputs;
  auto expand = [&] {
    reel::jobs::JobSpec job = OrDie(reel::jobs::LoadJobFile(t.job_file.string()), "LoadJobFile");
    std::vector<std::string> warnings;
    inputs = OrDie(reel::jobs::ExpandInputs(job, &warnings), "ExpandInputs");
  };
  auto [expand_s, find_s] = Alternate(reps, expand, "find " + dir + " -type f | wc -l");
  if (static_cast<int>(inputs.size()) != files) Die("ExpandInputs found the wrong count");
  std::printf("  expand  LoadJobFile+ExpandInputs   %s | find -type f | wc -l  %s   ratio %.2f\n",
              Rate(n, expand_s, "files").c_str(), Rate(n, find_s, "files").c_str(),
              find_s / expand_s);
  g_rows.push_back({"expand inputs (ExpandInputs)", Rate(n, expand_s, "files"),
                    "find -type f | wc -l: " + Rate(n, find_s, "files"), find_s / expand_s});

  int64_t total_bytes = 0;
  auto stat_all = [&] {
    total_bytes = 0;
    for (const reel::jobs::InputFile& input : inputs) {
      total_bytes += OrDie(reel::jobs::StatFile(input.path), "StatFile").size_bytes;
    }
  };
  const std::string printf_cmd = "find " + dir + " -type f -printf '%s %T@ %i\\n' >/dev/null";
  auto [stat_s, fstat_s] = Alternate(reps, stat_all, printf_cmd);
  std::printf("  stat    StatFile (size/mtime/ino) %s | find -printf           %s   ratio %.2f\n",
              Rate(n, stat_s, "files").c_str(), Rate(n, fstat_s, "files").c_str(),
              fstat_s / stat_s);
  auto [expand_stat_s, fstat2_s] = Alternate(
      reps,
      [&] {
        expand();
        stat_all();
      },
      printf_cmd);
  std::printf("  expand + stat                     %s | find -printf           %s   ratio %.2f\n",
              Rate(n, expand_stat_s, "files").c_str(), Rate(n, fstat2_s, "files").c_str(),
              fstat2_s / expand_stat_s);
  g_rows.push_back({"cheap change check (StatFile)", Rate(n, stat_s, "files"),
                    "find -printf '%s %T@ %i': " + Rate(n, fstat_s, "files"), fstat_s / stat_s});
  g_rows.push_back({"expand + cheap check", Rate(n, expand_stat_s, "files"),
                    "find -printf '%s %T@ %i': " + Rate(n, fstat2_s, "files"),
                    fstat2_s / expand_stat_s});

  auto hash_all = [&] {
    for (const reel::jobs::InputFile& input : inputs) {
      OrDie(reel::jobs::HashFile(input.path), "HashFile");
    }
  };
  const std::string sha_cmd = "find " + dir + " -type f -print0 | xargs -0 sha256sum >/dev/null";
  auto [hash_s, shasum_s] = Alternate(reps, hash_all, sha_cmd);
  auto [expand_hash_s, shasum2_s] = Alternate(
      reps,
      [&] {
        expand();
        hash_all();
      },
      sha_cmd);
  t.find_hash_s = std::min(shasum_s, shasum2_s);
  std::printf("  hash    HashFile (SHA-256)         %s | find|xargs sha256sum   %s   ratio %.2f\n",
              Rate(n, hash_s, "files").c_str(), Rate(n, shasum_s, "files").c_str(),
              shasum_s / hash_s);
  std::printf("  expand + hash                     %s | find|xargs sha256sum   %s   ratio %.2f\n",
              Rate(n, expand_hash_s, "files").c_str(), Rate(n, shasum2_s, "files").c_str(),
              shasum2_s / expand_hash_s);
  std::printf("  (%.1f MB hashed per pass)\n", total_bytes / 1e6);
  g_rows.push_back({"content hash (HashFile)", Rate(n, hash_s, "files"),
                    "find|xargs -0 sha256sum: " + Rate(n, shasum_s, "files"), shasum_s / hash_s});
  g_rows.push_back({"expand + content hash", Rate(n, expand_hash_s, "files"),
                    "find|xargs -0 sha256sum: " + Rate(n, shasum2_s, "files"),
                    shasum2_s / expand_hash_s});

  // Throughput on one large file, where the hash itself (not open/read/close) is the cost.
  if (hash_mib > 0) {
    fs::path big = work / "big.bin";
    {
      std::ofstream out(big, std::ios::binary);
      uint64_t state = 7;
      std::string block(1 << 20, '\0');
      for (int m = 0; m < hash_mib; ++m) {
        for (size_t i = 0; i < block.size(); i += 8) {
          uint64_t word = SplitMix64(state);
          std::memcpy(&block[i], &word, 8);
        }
        out.write(block.data(), static_cast<std::streamsize>(block.size()));
      }
      if (!out) Die("cannot write " + big.string());
    }
    std::string expected =
        FirstLine(OutputOf("sha256sum " + ShellQuote(big.string()))).substr(0, 64);
    std::string got;
    auto [big_s, big_base_s] = Alternate(
        std::max(1, reps / 2), [&] { got = OrDie(reel::jobs::HashFile(big.string()), "HashFile"); },
        "sha256sum " + ShellQuote(big.string()));
    if (got != expected) Die("HashFile and sha256sum disagree on " + big.string());
    const double mb = hash_mib * 1.048576;
    std::printf(
        "  hash one %d MiB file: HashFile %.3f s (%.0f MB/s) | sha256sum %.3f s (%.0f MB/s)"
        "   ratio %.2f\n",
        hash_mib, big_s, mb / big_s, big_base_s, mb / big_base_s, big_base_s / big_s);
    g_rows.push_back({"hash throughput, 1 large file", Format("%.0f MB/s", mb / big_s),
                      "sha256sum: " + Format("%.0f MB/s", mb / big_base_s), big_base_s / big_s});
    fs::remove(big);
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// End to end through the `reel` binary.

void BenchCli(const Tree& t, const fs::path& reel) {
  std::printf(
      "\n== End to end: reel plan / run over %d .txt documents (prepare only: no model "
      "endpoint)\n",
      t.files);
  std::string help = OutputOf(ShellQuote(reel.string()) + " --help 2>&1");
  bool has_run = help.find("\n  run ") != std::string::npos;
  bool has_plan = help.find("\n  plan ") != std::string::npos;
  if (!fs::exists(reel) || !has_run || !has_plan) {
    std::printf("  skipped: %s has no `run` and `plan` commands (or does not exist)\n",
                reel.c_str());
    g_rows.push_back({"reel run / plan", "skipped (commands missing)", "", 0});
    return;
  }
  const fs::path db = t.work / "docs.db";
  for (const char* suffix : {"", "-wal", "-shm", ".lock"}) fs::remove(db.string() + suffix);
  const std::string job = ShellQuote(t.job_file.string());
  const std::string bin = ShellQuote(reel.string());
  const double n = t.files;
  const double base = t.find_hash_s;

  struct Step {
    const char* name;
    std::string command;
  };
  const Step steps[] = {
      {"reel plan (no database: hashes all)", bin + " plan " + job},
      {"reel run (first: processes all)", bin + " run " + job},
      {"reel run (second: skips all)", bin + " run " + job},
      {"reel plan (after: stat only)", bin + " plan " + job},
  };
  for (const Step& step : steps) {
    Clock::time_point start = Clock::now();
    int rc = RunShell(step.command);
    double s = Seconds(start);
    if (rc != 0) {
      std::printf("  %-38s FAILED (exit %d): %s\n", step.name, rc, step.command.c_str());
      std::string err = OutputOf(step.command + " 2>&1 >/dev/null | tail -5");
      std::printf("%s\n", err.c_str());
      g_rows.push_back({step.name, "failed (exit " + std::to_string(rc) + ")", "", 0});
      return;
    }
    std::printf("  %-38s %s | find|xargs sha256sum %s   ratio %.2f\n", step.name,
                Rate(n, s, "files").c_str(), Rate(n, base, "files").c_str(), base / s);
    g_rows.push_back({step.name, Rate(n, s, "files"),
                      "find|xargs -0 sha256sum: " + Rate(n, base, "files"), base / s});
  }
  // The runs must have done what they claim.
  UniqueDb h = OpenRaw(db, true);
  int64_t done = QueryInt(h.get(), "SELECT count(*) FROM items WHERE status = 'done'");
  int64_t segments = QueryInt(h.get(), "SELECT count(*) FROM segments");
  int64_t skipped = QueryInt(h.get(), "SELECT items_skipped FROM runs ORDER BY id DESC LIMIT 1");
  int64_t first_done =
      QueryInt(h.get(), "SELECT items_done FROM runs ORDER BY id DESC LIMIT 1 OFFSET 1");
  std::printf("  check: items done %" PRId64 ", segments %" PRId64 ", first run done %" PRId64
              ", second run skipped %" PRId64 " (%.0f MB database)\n",
              done, segments, first_done, skipped, DatabaseMb(db));
  if (done != t.files || skipped != t.files) Die("the runs did not do what they should");
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  RecordConfig record;
  int files = 10000;
  int reps = 5;
  int hash_mib = 128;
  bool keep = false;
  std::string work_dir;
  std::string sections = "record,plan,cli";
  fs::path reel = fs::absolute(fs::path(argv[0])).parent_path().parent_path() / "jobs" / "reel";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--items") {
      record.items = std::atoi(value().c_str());
    } else if (arg == "--frames") {
      record.frames = std::atoi(value().c_str());
    } else if (arg == "--segments") {
      record.segments = std::atoi(value().c_str());
    } else if (arg == "--files") {
      files = std::atoi(value().c_str());
    } else if (arg == "--reps") {
      reps = std::max(1, std::atoi(value().c_str()));
    } else if (arg == "--hash-mib") {
      hash_mib = std::atoi(value().c_str());
    } else if (arg == "--work-dir") {
      work_dir = value();
    } else if (arg == "--reel") {
      reel = value();
    } else if (arg == "--sections") {
      sections = value();
    } else if (arg == "--keep") {
      keep = true;
    } else {
      std::printf(
          "usage: scale_bench [--items N] [--frames N] [--segments N] [--files N] [--reps N]\n"
          "                   [--hash-mib N] [--work-dir DIR] [--reel PATH]\n"
          "                   [--sections record,plan,cli] [--keep]\n");
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  if (record.items < 1 || record.frames < 1 || record.segments < 0 || files < 1) {
    Die("--items, --frames and --files must be at least 1");
  }
  std::vector<std::string> wanted = Split(sections, ',');
  auto want = [&](const char* s) {
    return std::find(wanted.begin(), wanted.end(), s) != wanted.end();
  };

  fs::path work;
  if (work_dir.empty()) {
    std::string templ = (fs::temp_directory_path() / "reel_scale_bench.XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) Die("mkdtemp failed");
    work = templ;
  } else {
    work = fs::absolute(work_dir);
    fs::create_directories(work);
  }

  std::printf("scale_bench: machine: %u cores (nproc %s), %s; SQLite %s; %s; work dir %s\n",
              std::thread::hardware_concurrency(), FirstLine(OutputOf("nproc")).c_str(),
              CpuModel().c_str(), sqlite3_libversion(),
              FirstLine(OutputOf("sha256sum --version")).c_str(), work.c_str());
  std::printf("Ratios are baseline time / Reel time: above 1, Reel is faster.\n");
  std::fflush(stdout);

  const std::string settings_hash = reel::storage::Sha256Hex("scale-bench settings");
  if (want("record")) {
    fs::path reel_db = BenchRecording(work, record, settings_hash);
    BenchUpToDate(reel_db, record, settings_hash, std::max(1, reps / 2 + 1));
    if (!keep) fs::remove(reel_db);
  }
  std::optional<Tree> tree;
  if (want("plan") || want("cli")) {
    tree = BenchPlanning(work, files, reps, want("plan") ? hash_mib : 0);
  }
  if (want("cli")) BenchCli(*tree, reel);

  std::printf("\n== Summary (%s; %s cores)\n", CpuModel().c_str(),
              FirstLine(OutputOf("nproc")).c_str());
  std::printf("| %-40s | %-36s | %-58s | %-6s |\n", "measure", "Reel", "baseline", "ratio");
  std::printf("|%s|%s|%s|%s|\n", std::string(42, '-').c_str(), std::string(38, '-').c_str(),
              std::string(60, '-').c_str(), std::string(8, '-').c_str());
  for (const Row& row : g_rows) {
    std::printf("| %-40s | %-36s | %-58s | %6s |\n", row.measure.c_str(), row.reel.c_str(),
                row.baseline.c_str(), row.ratio > 0 ? Format("%.2f", row.ratio).c_str() : "-");
  }
  if (!keep) {
    std::error_code ec;
    fs::remove_all(work, ec);
  } else {
    std::printf("kept %s\n", work.c_str());
  }
  return 0;
}
