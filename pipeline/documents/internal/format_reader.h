// The one interface every document format's reader implements (one file each:
// internal/<format>_reader.cc). ReadDocument (document.cc) picks the reader, counts pages,
// applies the page range, max_pages and the time limit; a reader delivers pages in order through
// `out` and records what it knows about the file in `report`.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "pipeline/documents/document.h"

namespace reel::pipeline::documents {

// What a reader hands its pages to. Emit() returns an error to stop reading: the caller's own
// error, or kLimitExceeded past the time limit. Wanted(n) says whether page n is in the range
// (and within max_pages); Done(n) whether no page from n on is wanted, so a reader can stop.
class PageOutput {
 public:
  PageOutput(const DocumentOptions& options, const PageSink& sink, DocumentReport& report,
             std::string display_name);
  bool Wanted(int page) const;
  bool Done(int page) const;
  // The last page number that will be read, given the document's page count (0 when none).
  int LastWanted(int page_count) const;
  Status Emit(DocumentPage&& page);
  // Readers call this once they know how many pages the file has.
  void SetPageCount(int page_count);
  void OnPageCount(std::function<void(int)> hook) { on_page_count_ = std::move(hook); }
  // kLimitExceeded once the file has taken longer than limits.time_limit_s.
  Status CheckTime() const;
  const std::string& name() const { return name_; }
  const DocumentOptions& options() const { return options_; }
  DocumentReport& report() { return report_; }

 private:
  const DocumentOptions& options_;
  const PageSink& sink_;
  DocumentReport& report_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
  std::function<void(int)> on_page_count_;
};

class FormatReader {
 public:
  virtual ~FormatReader() = default;
  // Reads `path` (shown to the user as out.name()). Errors are the whole file's; a page's own
  // failure goes into DocumentPage::error.
  virtual Status Read(const std::string& path, PageOutput& out) = 0;
};

std::unique_ptr<FormatReader> MakePdfReader();
std::unique_ptr<FormatReader> MakeHtmlReader();
std::unique_ptr<FormatReader> MakeEpubReader();
std::unique_ptr<FormatReader> MakeDocxReader();
std::unique_ptr<FormatReader> MakePptxReader();
std::unique_ptr<FormatReader> MakeOdfReader();  // ODT (one page) and ODP (one page per slide)
// Office files through LibreOffice: converted to PDF by `soffice` when it is installed, then
// read as a PDF (pictures and laid-out pages); else `text_reader` reads the XML and the report
// says why there are no pictures.
std::unique_ptr<FormatReader> MakeOfficeRenderer(std::unique_ptr<FormatReader> text_reader);

// The PDF reader in this process, from page `first_page` on (the isolated reader restarts a
// crashed child there).
Status ReadPdfInProcess(const std::string& path, PageOutput& out, int first_page);

// The program the isolated PDF reader starts (internal/pdf_isolation.cc), and its body: reads
// one request (file, name, first page, options) from `in_fd`, sends the pages to `out_fd`.
// Returns the program's exit status.
inline constexpr char kPdfReaderProgram[] = "reel-pdf-reader";
int RunPdfReaderProgram(int in_fd, int out_fd);

}  // namespace reel::pipeline::documents
