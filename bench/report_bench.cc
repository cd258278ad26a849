// `reel report` at scale: the whole report folder (paged index, one page per item, the batch
// page, every thumbnail) for thousands of items, against a named baseline measured in the same
// run on the same machine, printed as a ratio.
//
// The database: --items items (default 3,000) of one job, each a video with --frames frames
// (default 12) whose thumbnails are distinct ~2.5 KB blobs, two subtitle cues, a media_json, and
// two answers (a description with four time references, and a chapters answer) with their
// contexts; written through Store the way the runner writes them. Not timed.
//
//   Reel "report": jobs::report::WriteReport into an empty folder (page size --page-size,
//     default 200): every page rendered and every thumbnail written.
//   Baseline "copy thumbnails": the floor any report with thumbnails pays: one raw sqlite3
//     SELECT hash, data FROM blobs, each blob written to its own file with fopen/fwrite into an
//     empty folder with the same two-character fan-out.
//   Reel "rerun": the report again into the same folder (thumbnails already there are kept; pages
//     rewritten), against the same baseline.
// The variants take turns, --reps times (default 4; the first two swap places each turn); medians
// are printed. Ratios are baseline time / Reel time: above 1, Reel is faster; below 1, slower (the
// pages' work on top of the floor).
//
// The work folder is on a RAM disk (/dev/shm) unless --work-dir says otherwise: on ext4, creating
// tens of thousands of files just after deleting as many is dominated by the kernel's inode
// allocator (find_inode_bit / recently_deleted), whichever variant comes second pays it, and the
// figures swing by 3x between runs. Give --work-dir on a disk to see that too.
//
// Usage: report_bench [--items N] [--frames N] [--page-size N] [--reps N] [--work-dir DIR] [--keep]
#include <sqlite3.h>  // the raw baseline only; Reel itself goes through storage/

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "jobs/report/report_writer.h"
#include "llm/answers/time_references.h"
#include "storage/store.h"

namespace fs = std::filesystem;
using reel::bench::Clock;
using reel::bench::Median;
using reel::bench::Seconds;

namespace {

struct Options {
  int64_t items = 3000;
  int frames = 12;
  int64_t page_size = 200;
  int reps = 4;
  std::string work_dir =
      fs::is_directory("/dev/shm") ? "/dev/shm/reel-report-bench" : "/tmp/reel-report-bench";
  bool keep = false;
};

bool Build(const Options& o, const std::string& db_path) {
  auto store = reel::storage::Store::Open(db_path);
  if (!store.ok()) return false;
  auto job = store->UpsertJob({.name = "bench", .spec_text = "{}"});
  auto run = store->BeginRun({.job_id = *job, .spec_hash = "h"});
  std::mt19937_64 rng(42);
  for (int64_t i = 0; i < o.items; ++i) {
    char path[64];
    std::snprintf(path, sizeof(path), "/archive/%03" PRId64 "/clip%05" PRId64 ".mp4", i / 100, i);
    auto id = store->UpsertItem(
        {.job_id = *job, .path = path, .content_hash = "c", .settings_hash = "s"});
    if (!id.ok() || !store->MarkItemRunning(*id, run->id).ok()) return false;
    reel::storage::ItemOutputs out;
    for (int f = 0; f < o.frames; ++f) {
      std::string jpeg(2500, '\0');
      for (char& c : jpeg) c = static_cast<char>(rng());
      jpeg[0] = '\xFF';
      jpeg[1] = '\xD8';
      out.frames.push_back({.sample_index = f,
                            .time_seconds = static_cast<double>(f),
                            .width = 640,
                            .height = 360,
                            .thumbnail_jpeg = std::move(jpeg)});
    }
    out.segments.push_back({.source = "sidecar:a.srt",
                            .start_seconds = 1,
                            .end_seconds = 3,
                            .text = "Somebody says something & leaves"});
    out.segments.push_back({.source = "sidecar:a.srt",
                            .start_seconds = 6,
                            .end_seconds = 8,
                            .text = "Another line <i>in italics</i>"});
    out.media_json = "{\"duration_seconds\": " + std::to_string(o.frames) +
                     ", \"format\": \"mov,mp4\", \"video\": {\"codec\": \"h264\", \"width\": "
                     "640, \"height\": 360, \"fps\": 25}}";
    if (!store->MarkItemDone(*id, out).ok()) return false;
    const std::string half = reel::llm::FormatClockTime(o.frames / 2.0);
    const std::string end = reel::llm::FormatClockTime(o.frames);
    struct Answer {
      const char* prompt;
      std::string content;
    } answers[] = {
        {"describe", "At 00:01 a person walks in. Between 00:02 and 00:04 they talk; at " + half +
                         " the light changes, and the clip ends at " + end + "."},
        {"chapters", "{\"chapters\": [{\"start\": \"00:00\", \"end\": \"" + half +
                         "\", \"title\": \"Arrival\", \"summary\": \"Someone arrives.\"}, "
                         "{\"start\": \"" +
                         half + "\", \"end\": \"" + end +
                         "\", \"title\": \"Talk\", \"summary\": \"They talk.\"}]}"},
    };
    for (const Answer& a : answers) {
      auto context = store->PutContext({.item_id = *id,
                                        .prompt_id = a.prompt,
                                        .text_tokens = 100,
                                        .video_tokens = 4320,
                                        .manifest_json = "{}"});
      auto request = store->BeginRequest(
          {.item_id = *id, .context_id = *context, .run_id = run->id, .prompt_id = a.prompt});
      if (!request.ok() || !store
                                ->FinishRequest(*request, {.content = a.content,
                                                           .prompt_tokens = 4420,
                                                           .completion_tokens = 60,
                                                           .cached_tokens = 4000,
                                                           .latency_seconds = 3.0})
                                .ok()) {
        return false;
      }
    }
  }
  return store->FinishRun(run->id, reel::storage::RunStatus::kSucceeded, {}).ok();
}

// The baseline: every blob out to its own file.
int64_t CopyThumbnails(const std::string& db_path, const std::string& dir) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT hash, data FROM blobs", -1, &stmt, nullptr);
  int64_t n = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    std::string hash(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
    const void* data = sqlite3_column_blob(stmt, 1);
    const int size = sqlite3_column_bytes(stmt, 1);
    const std::string sub = dir + "/" + hash.substr(0, 2);
    fs::create_directories(sub);
    if (FILE* f = std::fopen((sub + "/" + hash + ".jpg").c_str(), "wb")) {
      std::fwrite(data, 1, size, f);
      std::fclose(f);
      ++n;
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--items")
      o.items = std::atoll(next().c_str());
    else if (a == "--frames")
      o.frames = std::atoi(next().c_str());
    else if (a == "--page-size")
      o.page_size = std::atoll(next().c_str());
    else if (a == "--reps")
      o.reps = std::atoi(next().c_str());
    else if (a == "--work-dir")
      o.work_dir = next();
    else if (a == "--keep")
      o.keep = true;
    else {
      std::fprintf(stderr,
                   "usage: report_bench [--items N] [--frames N] [--page-size N] "
                   "[--reps N] [--work-dir DIR] [--keep]\n");
      return 2;
    }
  }
  fs::remove_all(o.work_dir);
  fs::create_directories(o.work_dir);
  const std::string db = o.work_dir + "/bench.db";
  std::printf("report_bench: %" PRId64 " items x %d frames, page size %" PRId64
              "; folder %s; machine: %s\n",
              o.items, o.frames, o.page_size, o.work_dir.c_str(), reel::bench::CpuModel().c_str());
  Clock::time_point t0 = Clock::now();
  if (!Build(o, db)) {
    std::fprintf(stderr, "report_bench: building the database failed\n");
    return 1;
  }
  std::printf("database built in %.1f s (not timed below)\n", Seconds(t0));

  std::vector<double> report, rerun, copy;
  reel::jobs::report::ReportStats stats;
  // Each turn deletes both folders first, then runs the two in alternating order (a file system
  // may charge the first writer after a large delete), then the rerun.
  for (int rep = 0; rep < o.reps; ++rep) {
    const std::string site = o.work_dir + "/site";
    const std::string thumbs = o.work_dir + "/copy";
    fs::remove_all(site);
    fs::remove_all(thumbs);
    reel::jobs::report::ReportOptions options;
    options.database = db;
    options.out_dir = site;
    options.page_size = o.page_size;
    int64_t copied = 0;
    auto baseline = [&] {
      Clock::time_point start = Clock::now();
      copied = CopyThumbnails(db, thumbs);
      copy.push_back(Seconds(start));
    };
    if (rep % 2 == 1) baseline();
    Clock::time_point start = Clock::now();
    auto first = reel::jobs::report::WriteReport(options);
    report.push_back(Seconds(start));
    if (!first.ok()) {
      std::fprintf(stderr, "report_bench: %s\n", first.status().ToString().c_str());
      return 1;
    }
    stats = *first;
    if (rep % 2 == 0) baseline();
    if (copied != stats.thumbnails_written) {
      std::fprintf(stderr, "report_bench: %" PRId64 " blobs copied, %" PRId64 " thumbnails\n",
                   copied, stats.thumbnails_written);
      return 1;
    }
    start = Clock::now();
    auto again = reel::jobs::report::WriteReport(options);
    rerun.push_back(Seconds(start));
    if (!again.ok() || again->thumbnails_written != 0) return 1;
  }
  const double r = Median(report), b = Median(copy), a = Median(rerun);
  std::printf("pages: %" PRId64 " item pages, %" PRId64 " index pages; %" PRId64 " thumbnails\n",
              stats.item_pages, stats.index_pages, stats.thumbnails_written);
  std::printf("%-44s %8.2f s  (%.0f items/s)\n", "reel report, empty folder", r, o.items / r);
  std::printf("%-44s %8.2f s\n", "baseline: copy thumbnails (raw sqlite3)", b);
  std::printf("%-44s %8.2fx\n", "ratio baseline / reel report", b / r);
  std::printf("%-44s %8.2f s  (%.0f items/s)\n", "reel report again (thumbnails kept)", a,
              o.items / a);
  std::printf("%-44s %8.2fx\n", "ratio baseline / reel report again", b / a);
  if (!o.keep) fs::remove_all(o.work_dir);
  return 0;
}
