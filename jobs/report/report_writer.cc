#include "jobs/report/report_writer.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>
#include <unordered_set>

#include "base/file_util.h"
#include "jobs/report/batch_report.h"
#include "jobs/report/html.h"
#include "jobs/report/index_page.h"
#include "jobs/report/item_page.h"
#include "jobs/report/report_css.h"
#include "jobs/report/search_index.h"
#include "storage/prune.h"
#include "storage/report_data.h"

namespace reel::jobs::report {
namespace {

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

constexpr size_t kExcerptBytes = 280;  // of the first answer, on the index

bool IsHex(const std::string& s) {
  return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

class Writer {
 public:
  Writer(const ReportOptions& options, storage::ReportReader& reader)
      : options_(options), reader_(reader) {
    generated_at_ = options.generated_at.empty() ? NowUtc() : options.generated_at;
    database_ = std::filesystem::path(options.database).filename().string();
  }

  Status Write(const std::string& relative, std::string_view data) {
    const std::string path = options_.out_dir + "/" + relative;
    Status s = WriteFileAtomically(path, data);
    return s.ok() ? s : s.WithPrefix("reel report: cannot write " + path);
  }

  // Copies a thumbnail blob into DIR once; a file of the blob's size already there is kept (and
  // the blob not read when its size is known).
  Status Thumbnail(const std::optional<std::string>& hash, std::optional<int64_t> known_size) {
    if (!hash || !IsHex(*hash) || !seen_.insert(*hash).second) return Status::Ok();
    const std::string relative = ThumbnailPath(*hash);
    const std::string path = options_.out_dir + "/" + relative;
    struct stat st {};
    const bool exists = stat(path.c_str(), &st) == 0;
    if (exists && known_size && st.st_size == *known_size) {
      ++stats_.thumbnails_kept;
      return Status::Ok();
    }
    REEL_ASSIGN_OR_RETURN(std::optional<std::string> bytes, reader_.ReadBlob(*hash));
    if (!bytes) return Status::Ok();  // a dangling hash: the page shows a broken image
    if (exists && static_cast<size_t>(st.st_size) == bytes->size()) {
      ++stats_.thumbnails_kept;
      return Status::Ok();
    }
    const std::string dir = options_.out_dir + "/thumbs/" + hash->substr(0, 2);
    if (made_dirs_.insert(dir).second) REEL_RETURN_IF_ERROR(MakeDirectories(dir));
    // Content-addressed: a half-written file has the wrong size and is written again next time,
    // so no temporary file and rename.
    std::FILE* file = std::fopen(path.c_str(), "wb");
    const bool written =
        file != nullptr && std::fwrite(bytes->data(), 1, bytes->size(), file) == bytes->size();
    if (file != nullptr && std::fclose(file) != 0)
      return IoError("reel report: cannot write " + path);
    if (!written) return IoError("reel report: cannot write " + path);
    ++stats_.thumbnails_written;
    return Status::Ok();
  }

  // Writes the item's page; with `excerpt`, also its first answer's excerpt and its search entry.
  Status ItemPage(int64_t item_id, std::optional<AnswerExcerpt>* excerpt = nullptr) {
    REEL_ASSIGN_OR_RETURN(storage::ReportItem item, reader_.ReadItem(item_id));
    item.row.input_gone = storage::InputFileGone(item.row.path);
    if (excerpt != nullptr) {
      *excerpt = FirstAnswerExcerpt(item, kExcerptBytes);
      search_.push_back(SearchEntryFor(item));
    }
    for (const storage::ReportFrame& f : item.frames) {
      REEL_RETURN_IF_ERROR(Thumbnail(f.thumbnail_hash, f.thumbnail_bytes));
    }
    ItemPageOptions page_options{generated_at_, database_, reader_.columns(), pages_};
    REEL_RETURN_IF_ERROR(Write(ItemPagePath(item_id), RenderItemPage(item, page_options)));
    ++stats_.item_pages;
    return Status::Ok();
  }

  Result<std::vector<storage::ReportRun>> Runs() {
    REEL_ASSIGN_OR_RETURN(std::vector<storage::ReportRun> runs,
                          reader_.ReadRuns(options_.job, options_.max_runs));
    stats_.runs = static_cast<int64_t>(runs.size());
    stats_.batch_text = BatchText(runs, reader_.columns());
    return runs;
  }

  Status BatchPage(const std::vector<storage::ReportRun>& runs) {
    REEL_RETURN_IF_ERROR(MakeDirectories(options_.out_dir + "/plots"));
    for (const storage::ReportRun& r : runs) {
      REEL_RETURN_IF_ERROR(
          Write("plots/run-" + std::to_string(r.run.id) + ".svg", ThroughputSvg(r)));
    }
    return Write("batch.html", RenderBatchPage(runs, reader_.columns(), database_, generated_at_));
  }

  Status Index(const std::vector<storage::ReportRun>& runs) {
    REEL_ASSIGN_OR_RETURN(int64_t total, reader_.CountItems(options_.job));
    REEL_ASSIGN_OR_RETURN(auto counts, reader_.CountByStatus(options_.job));
    const int64_t size = std::max<int64_t>(1, options_.page_size);
    const int64_t pages = std::max<int64_t>(1, (total + size - 1) / size);
    int64_t done = 0;
    for (int64_t page = 1; page <= pages; ++page) {
      IndexPage index;
      index.page = page;
      index.pages = pages;
      index.total_items = total;
      index.first_item = (page - 1) * size;
      index.job = options_.job;
      REEL_ASSIGN_OR_RETURN(index.rows, reader_.ListItems(options_.job, index.first_item, size));
      for (storage::ReportItemRow& row : index.rows) {
        row.input_gone = storage::InputFileGone(row.path);
      }
      index.status_counts = counts;
      if (page == 1) {
        index.runs_html = BatchHtml(runs, reader_.columns(), /*full=*/false);  // the newest
      }
      index.columns = reader_.columns();
      index.database = database_;
      index.generated_at = generated_at_;
      index.excerpts.resize(index.rows.size());
      for (size_t i = 0; i < index.rows.size(); ++i) {
        const storage::ReportItemRow& row = index.rows[i];
        // Writes the row's thumbnail too.
        REEL_RETURN_IF_ERROR(ItemPage(row.item_id, &index.excerpts[i]));
        REEL_RETURN_IF_ERROR(Thumbnail(row.thumbnail_hash, std::nullopt));
        if (options_.on_progress) options_.on_progress(++done, total);
      }
      REEL_RETURN_IF_ERROR(Write(IndexPagePath(page), RenderIndexPage(index)));
      ++stats_.index_pages;
    }
    REEL_RETURN_IF_ERROR(Write("search-index.js", SearchIndexJs(search_)));
    REEL_RETURN_IF_ERROR(Write("search.js", kSearchJs));
    // Pages of an earlier, longer report would link to items no longer listed: remove them.
    for (int64_t page = pages + 1;; ++page) {
      std::error_code ec;
      if (!std::filesystem::remove(options_.out_dir + "/" + IndexPagePath(page), ec)) break;
    }
    return Status::Ok();
  }

  ReportStats& stats() { return stats_; }

  // Only these items get a page (--item): other items' pages are not linked to.
  void OnlyPagesOf(const std::vector<int64_t>& item_ids) {
    pages_.emplace(item_ids.begin(), item_ids.end());
  }

 private:
  const ReportOptions& options_;
  storage::ReportReader& reader_;
  std::string generated_at_;
  std::string database_;
  std::unordered_set<std::string> seen_;
  std::unordered_set<std::string> made_dirs_;
  std::vector<SearchEntry> search_;
  std::optional<std::set<int64_t>> pages_;  // nullopt: every item of the report has a page
  ReportStats stats_;
};

Result<ReportStats> WriteFromSnapshot(const ReportOptions& options, storage::ReportReader& reader,
                                      const std::vector<int64_t>& item_ids) {
  Status made = MakeDirectories(options.out_dir + "/items");
  if (!made.ok()) return made.WithPrefix("reel report: cannot create " + options.out_dir);
  Writer writer(options, reader);
  REEL_RETURN_IF_ERROR(writer.Write("report.css", kReportCss));
  REEL_ASSIGN_OR_RETURN(std::vector<storage::ReportRun> runs, writer.Runs());
  if (options.batch_only) {
    REEL_RETURN_IF_ERROR(writer.BatchPage(runs));
    return writer.stats();
  }
  if (!item_ids.empty()) {
    writer.OnlyPagesOf(item_ids);
    for (size_t i = 0; i < item_ids.size(); ++i) {
      REEL_RETURN_IF_ERROR(writer.ItemPage(item_ids[i]));
      if (options.on_progress) {
        options.on_progress(static_cast<int64_t>(i + 1), static_cast<int64_t>(item_ids.size()));
      }
    }
    return writer.stats();
  }
  REEL_RETURN_IF_ERROR(writer.BatchPage(runs));
  REEL_RETURN_IF_ERROR(writer.Index(runs));
  return writer.stats();
}

}  // namespace

Result<ReportStats> WriteReport(const ReportOptions& options) {
  REEL_ASSIGN_OR_RETURN(storage::ReportReader reader,
                        storage::ReportReader::Open(options.database));
  // Resolve the items first, so a bad --item fails before anything is written.
  std::vector<int64_t> item_ids;
  for (const std::string& wanted : options.items) {
    REEL_ASSIGN_OR_RETURN(std::optional<int64_t> id, reader.FindItem(options.job, wanted));
    if (!id) {
      return NotFound("no item '" + wanted + "'" + (options.job ? " in job " + *options.job : "") +
                      " in " + options.database + " (give an item id or its path)");
    }
    item_ids.push_back(*id);
  }
  REEL_RETURN_IF_ERROR(reader.BeginSnapshot());
  REEL_ASSIGN_OR_RETURN(ReportStats stats, WriteFromSnapshot(options, reader, item_ids));
  REEL_RETURN_IF_ERROR(reader.EndSnapshot());
  return stats;
}

}  // namespace reel::jobs::report
