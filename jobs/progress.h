// ProgressReporter: what a run tells the person or log collector watching it, on stderr: kTerminal
// (a status line redrawn in place), kQuiet (failures and the summary) or kJson (one JSON object per
// event). Paths and messages read as in the database (DisplayPath, SafeUtf8).
// Thread-safe: workers report concurrently; output is serialised by a mutex.
// The styles and events: jobs/README.md, "Progress".
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

#include "storage/records.h"

namespace reel::jobs {

enum class ProgressStyle { kTerminal, kQuiet, kJson };

struct RunSummary {
  std::string job;
  std::string database;
  int64_t run_id = 0;
  std::string status;  // succeeded / failed / interrupted
  storage::RunCounters counters;
  double seconds = 0;
  std::string message;  // why it was interrupted, if it was
};

class ProgressReporter {
 public:
  // `out` is not owned (normally stderr). `verbose`: in kQuiet, also print each item's outcome.
  ProgressReporter(ProgressStyle style, std::FILE* out, bool verbose = false);
  ~ProgressReporter();

  // The style for `--log-format` ("text" or "json") and whether `out` is a terminal.
  static ProgressStyle ChooseStyle(const std::string& log_format, std::FILE* out);

  void RunStarted(const std::string& job, const std::string& database, int64_t run_id,
                  int64_t total_items, const std::string& shard);
  void ItemStarted(const std::string& path);
  void ItemSkipped(const std::string& path, const std::string& reason);
  void ItemDone(const std::string& path, int64_t frames, int64_t segments, double seconds);
  void ItemFailed(const std::string& path, const std::string& error, int attempts);
  void Warning(const std::string& message);
  void Info(const std::string& message);  // shown in every style (e.g. "waiting for the lock")
  // The model's questions in this run: answered (or failed), queued to be sent, sent and not
  // answered yet, and the output tokens the answers streamed so far (the line shows them per
  // second since the first question was sent). kJson: a "questions" event.
  struct Questions {
    int64_t answered = 0;
    int64_t failed = 0;
    int64_t waiting = 0;
    int64_t in_flight = 0;
    int64_t output_tokens = 0;
  };
  void QuestionsChanged(const Questions& questions);
  // Redraws the terminal line (rate and ETA move even when no item finishes).
  void Tick();
  void RunFinished(const RunSummary& summary);

 private:
  void DrawLocked();
  void ClearLineLocked();
  void EmitJsonLocked(const std::string& json_object);

  const ProgressStyle style_;
  std::FILE* const out_;
  const bool verbose_;
  std::mutex mutex_;
  int64_t total_ = 0;
  int64_t finished_ = 0;   // done + failed + skipped
  int64_t processed_ = 0;  // done + failed (skips are instant and would inflate the rate)
  std::string current_;
  std::optional<Questions> questions_;
  std::chrono::steady_clock::time_point questions_started_{};
  bool line_drawn_ = false;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace reel::jobs
