#include "jobs/progress.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <ctime>

#include "base/clock.h"
#include "base/utf8.h"
#include "jobs/json_output.h"

namespace reel::jobs {
namespace {

std::string ClockText(double seconds) {
  if (seconds < 0 || seconds > 360000) return "?";
  int s = static_cast<int>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof(buffer), "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%d:%02d", s / 60, s % 60);
  }
  return buffer;
}

std::string Dump(const nlohmann::json& j) { return DumpJson(j); }

// The tail of a path that fits in `width` characters.
std::string Tail(const std::string& path, size_t width) {
  if (path.size() <= width) return path;
  return "..." + path.substr(path.size() - (width - 3));
}

}  // namespace

ProgressReporter::ProgressReporter(ProgressStyle style, std::FILE* out, bool verbose)
    : style_(style), out_(out), verbose_(verbose) {}

ProgressReporter::~ProgressReporter() {
  std::lock_guard<std::mutex> lock(mutex_);
  ClearLineLocked();
}

ProgressStyle ProgressReporter::ChooseStyle(const std::string& log_format, std::FILE* out) {
  if (log_format == "json") return ProgressStyle::kJson;
  return isatty(fileno(out)) ? ProgressStyle::kTerminal : ProgressStyle::kQuiet;
}

void ProgressReporter::ClearLineLocked() {
  if (line_drawn_) {
    std::fputs("\r\033[K", out_);
    line_drawn_ = false;
  }
}

void ProgressReporter::EmitJsonLocked(const std::string& json_object) {
  std::fputs(json_object.c_str(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void ProgressReporter::DrawLocked() {
  if (style_ != ProgressStyle::kTerminal) return;
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - started_).count();
  double rate = elapsed > 0 ? processed_ / elapsed : 0;
  int64_t remaining = total_ - finished_;
  std::string eta = rate > 0 ? ClockText(remaining / rate) : "?";
  int percent = total_ > 0 ? static_cast<int>(100 * finished_ / total_) : 100;
  char line[640];
  char model[160] = "";
  if (questions_) {
    const double asked_for = std::chrono::duration<double>(now - questions_started_).count();
    std::snprintf(
        model, sizeof(model), "  questions %lld answered, %lld waiting, %lld in flight, %.0f tok/s",
        static_cast<long long>(questions_->answered + questions_->failed),
        static_cast<long long>(questions_->waiting), static_cast<long long>(questions_->in_flight),
        asked_for > 0 ? questions_->output_tokens / asked_for : 0.0);
  }
  std::snprintf(line, sizeof(line), "\r\033[K[%lld/%lld] %3d%%  %.2f items/s  ETA %s%s  %s",
                static_cast<long long>(finished_), static_cast<long long>(total_), percent, rate,
                eta.c_str(), model, Tail(current_, 40).c_str());
  std::fputs(line, out_);
  std::fflush(out_);
  line_drawn_ = true;
  last_draw_ = now;
}

void ProgressReporter::RunStarted(const std::string& job, const std::string& raw_database,
                                  int64_t run_id, int64_t total_items, const std::string& shard) {
  const std::string database = DisplayPath(raw_database);
  std::lock_guard<std::mutex> lock(mutex_);
  total_ = total_items;
  started_ = std::chrono::steady_clock::now();
  if (style_ == ProgressStyle::kJson) {
    EmitJsonLocked(Dump({{"time", NowIsoMillis()},
                         {"event", "run_started"},
                         {"job", job},
                         {"database", database},
                         {"run_id", run_id},
                         {"items", total_items},
                         {"shard", shard},
                         {"pid", static_cast<int64_t>(getpid())}}));
  } else if (style_ == ProgressStyle::kTerminal) {
    std::fprintf(out_, "reel run: job %s, %lld items%s%s -> %s (run %lld)\n", job.c_str(),
                 static_cast<long long>(total_items), shard.empty() ? "" : ", shard ",
                 shard.c_str(), database.c_str(), static_cast<long long>(run_id));
    DrawLocked();
  }
}

void ProgressReporter::ItemStarted(const std::string& raw_path) {
  const std::string path = DisplayPath(raw_path);
  std::lock_guard<std::mutex> lock(mutex_);
  current_ = path;
  if (style_ == ProgressStyle::kJson) {
    EmitJsonLocked(Dump({{"time", NowIsoMillis()}, {"event", "item_started"}, {"path", path}}));
  } else {
    DrawLocked();
  }
}

void ProgressReporter::ItemSkipped(const std::string& raw_path, const std::string& raw_reason) {
  const std::string path = DisplayPath(raw_path);
  const std::string reason = SafeUtf8(raw_reason);
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_;
  if (style_ == ProgressStyle::kJson) {
    EmitJsonLocked(Dump(
        {{"time", NowIsoMillis()}, {"event", "item_skipped"}, {"path", path}, {"reason", reason}}));
  } else if (style_ == ProgressStyle::kQuiet && verbose_) {
    std::fprintf(out_, "skipped %s: %s\n", path.c_str(), reason.c_str());
  } else if (style_ == ProgressStyle::kTerminal) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_draw_ > std::chrono::milliseconds(100) || finished_ == total_) DrawLocked();
  }
}

void ProgressReporter::ItemDone(const std::string& raw_path, int64_t frames, int64_t segments,
                                double seconds) {
  const std::string path = DisplayPath(raw_path);
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_;
  ++processed_;
  if (style_ == ProgressStyle::kJson) {
    EmitJsonLocked(Dump({{"time", NowIsoMillis()},
                         {"event", "item_done"},
                         {"path", path},
                         {"frames", frames},
                         {"segments", segments},
                         {"seconds", seconds}}));
  } else if (style_ == ProgressStyle::kQuiet && verbose_) {
    std::fprintf(out_, "done %s: %lld frames, %lld segments, %.2f s\n", path.c_str(),
                 static_cast<long long>(frames), static_cast<long long>(segments), seconds);
  } else {
    DrawLocked();
  }
}

void ProgressReporter::ItemFailed(const std::string& raw_path, const std::string& raw_error,
                                  int attempts) {
  const std::string path = DisplayPath(raw_path);
  const std::string error = SafeUtf8(raw_error);
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_;
  ++processed_;
  if (style_ == ProgressStyle::kJson) {
    EmitJsonLocked(Dump({{"time", NowIsoMillis()},
                         {"event", "item_failed"},
                         {"path", path},
                         {"error", error},
                         {"attempts", attempts}}));
    return;
  }
  ClearLineLocked();
  if (error.starts_with(path)) {
    std::fprintf(out_, "failed: %s\n", error.c_str());
  } else {
    std::fprintf(out_, "failed: %s: %s\n", path.c_str(), error.c_str());
  }
  DrawLocked();
}

void ProgressReporter::QuestionsChanged(const Questions& questions) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (!questions_) questions_started_ = now;
  questions_ = questions;
  if (style_ == ProgressStyle::kJson) {
    const double asked_for = std::chrono::duration<double>(now - questions_started_).count();
    EmitJsonLocked(
        Dump({{"time", NowIso()},
              {"event", "questions"},
              {"answered", questions.answered},
              {"failed", questions.failed},
              {"waiting", questions.waiting},
              {"in_flight", questions.in_flight},
              {"output_tokens", questions.output_tokens},
              {"tokens_per_second", asked_for > 0 ? questions.output_tokens / asked_for : 0.0}}));
  } else if (style_ == ProgressStyle::kTerminal) {
    DrawLocked();
  }
}

void ProgressReporter::Warning(const std::string& raw_message) {
  const std::string message = SafeUtf8(raw_message);
  std::lock_guard<std::mutex> lock(mutex_);
  if (style_ == ProgressStyle::kJson) {
    EmitJsonLocked(Dump({{"time", NowIsoMillis()}, {"event", "warning"}, {"message", message}}));
    return;
  }
  if (style_ == ProgressStyle::kQuiet && !verbose_) return;
  ClearLineLocked();
  std::fprintf(out_, "warning: %s\n", message.c_str());
  DrawLocked();
}

void ProgressReporter::Info(const std::string& raw_message) {
  const std::string message = SafeUtf8(raw_message);
  std::lock_guard<std::mutex> lock(mutex_);
  if (style_ == ProgressStyle::kJson) {
    EmitJsonLocked(Dump({{"time", NowIsoMillis()}, {"event", "info"}, {"message", message}}));
    return;
  }
  ClearLineLocked();
  std::fprintf(out_, "reel run: %s\n", message.c_str());
  std::fflush(out_);
}

void ProgressReporter::Tick() {
  std::lock_guard<std::mutex> lock(mutex_);
  DrawLocked();
}

void ProgressReporter::RunFinished(const RunSummary& summary) {
  RunSummary s = summary;
  s.database = DisplayPath(summary.database);
  s.message = SafeUtf8(summary.message);
  std::lock_guard<std::mutex> lock(mutex_);
  const storage::RunCounters& c = s.counters;
  if (style_ == ProgressStyle::kJson) {
    nlohmann::json j = {
        {"time", NowIsoMillis()},   {"event", "run_finished"}, {"job", s.job},
        {"database", s.database},   {"run_id", s.run_id},      {"status", s.status},
        {"items", c.items_seen},    {"done", c.items_done},    {"skipped", c.items_skipped},
        {"failed", c.items_failed}, {"frames", c.frames},      {"segments", c.segments},
        {"seconds", s.seconds}};
    if (!s.message.empty()) j["message"] = s.message;
    EmitJsonLocked(Dump(j));
    return;
  }
  ClearLineLocked();
  const std::string note = s.message.empty() ? "" : " (" + s.message + ")";
  std::fprintf(out_,
               "reel run: %s: job %s run %lld: %lld items: %lld done, %lld skipped, %lld failed; "
               "%lld frames, %lld segments in %.1f s -> %s%s\n",
               s.status.c_str(), s.job.c_str(), static_cast<long long>(s.run_id),
               static_cast<long long>(c.items_seen), static_cast<long long>(c.items_done),
               static_cast<long long>(c.items_skipped), static_cast<long long>(c.items_failed),
               static_cast<long long>(c.frames), static_cast<long long>(c.segments), s.seconds,
               s.database.c_str(), note.c_str());
  std::fflush(out_);
}

}  // namespace reel::jobs
