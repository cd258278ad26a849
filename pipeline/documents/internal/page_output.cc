// PageOutput (format_reader.h): what every reader hands its pages to, the PDF reader program's
// included.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "pipeline/documents/internal/format_reader.h"

namespace reel::pipeline {

namespace documents {

PageOutput::PageOutput(const DocumentOptions& options, const PageSink& sink, DocumentReport& report,
                       std::string display_name)
    : options_(options),
      sink_(sink),
      report_(report),
      name_(std::move(display_name)),
      start_(std::chrono::steady_clock::now()) {}

bool PageOutput::Wanted(int page) const {
  if (!options_.pages.Contains(page)) return false;
  return page - options_.pages.first < options_.limits.max_pages;
}

bool PageOutput::Done(int page) const {
  if (options_.pages.last != 0 && page > options_.pages.last) return true;
  return page - options_.pages.first >= options_.limits.max_pages;
}

int PageOutput::LastWanted(int page_count) const {
  int last = page_count;
  if (options_.pages.last != 0) last = std::min(last, options_.pages.last);
  const int64_t cap = static_cast<int64_t>(options_.pages.first) + options_.limits.max_pages - 1;
  return static_cast<int>(std::min<int64_t>(last, cap));
}

void PageOutput::SetPageCount(int page_count) {
  report_.page_count = page_count;
  if (on_page_count_) on_page_count_(page_count);
}

Status PageOutput::Emit(DocumentPage&& page) {
  ++report_.pages_read;
  if (!page.error.ok()) ++report_.pages_failed;
  if (page.source == TextSource::kOcr) ++report_.pages_ocr;
  return sink_(std::move(page));
}

Status PageOutput::CheckTime() const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed > options_.limits.time_limit_s) {
    return LimitExceeded(name_ + ": the time limit of " +
                         std::to_string(static_cast<int>(options_.limits.time_limit_s)) +
                         " s was reached after " + std::to_string(report_.pages_read) + " pages");
  }
  return Status::Ok();
}

}  // namespace documents

}  // namespace reel::pipeline
