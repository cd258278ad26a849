// Document readers (pipeline/documents): PDF (Poppler, in process here), HTML, EPUB, DOCX, PPTX,
// ODT/ODP, picked by the file's first bytes and its name's extension, with text and pictures
// asked (OCR off: one input must stay well under the 30 s timeout) and tight limits.
// Invariants: pages come in increasing order within the range and the page count, text is valid
// UTF-8, pictures are within the pixel limit and match their size, and every error names the
// file.
#include "base/utf8.h"
#include "pipeline/documents/document.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const reel::fuzz::NamedInput input = reel::fuzz::SplitName(data, size);
  // Only the extension of the given name matters (it picks HTML); the file name is fixed.
  const size_t dot = input.name.rfind('.');
  std::string extension = dot == std::string::npos ? ".bin" : input.name.substr(dot);
  if (extension.size() > 8) extension = ".bin";
  const std::string path = reel::fuzz::WriteScratchFile("document" + extension, input.body);
  reel::pipeline::DocumentOptions options;
  options.isolate = false;
  options.ocr.enabled = false;
  options.resize.smart.max_pixels = 50000;
  options.limits.max_pages = 6;
  options.limits.time_limit_s = 10;
  options.limits.max_entry_bytes = 4 << 20;
  options.limits.max_archive_bytes = 16 << 20;
  options.limits.max_entries = 500;
  options.limits.max_page_pixels = 1 << 22;
  int last = 0;
  reel::Result<reel::pipeline::DocumentReport> report = reel::pipeline::ReadDocument(
      path, options, [&](reel::pipeline::DocumentPage&& page) -> reel::Status {
        Require(page.number > last, "pages in increasing order");
        Require(page.number <= last + 1 || page.number > 0, "page numbers");
        last = page.number;
        Require(reel::IsValidUtf8(page.text), "page text is UTF-8", page.text);
        Require(reel::IsValidUtf8(page.label), "label is UTF-8", page.label);
        Require(reel::IsValidUtf8(page.title), "title is UTF-8", page.title);
        Require(reel::IsValidUtf8(page.error.message()), "page error is UTF-8");
        if (!page.image.empty()) {
          Require(int64_t{page.image.width} * page.image.height <= 50000, "picture within limit");
          Require(page.image.pixels.size() == static_cast<size_t>(page.image.width) *
                                                  page.image.height * page.image.channels,
                  "picture size");
        }
        return reel::Status::Ok();
      });
  if (report.ok()) {
    Require(report->pages_read <= options.limits.max_pages, "max_pages");
    Require(last <= report->page_count || report->page_count == 0, "pages within the count");
    Require(reel::IsValidUtf8(report->title), "title is UTF-8", report->title);
  } else {
    Require(reel::IsValidUtf8(report.status().message()), "error is UTF-8");
    Require(report.status().message().find("document") != std::string::npos, "error names the file",
            report.status().message());
  }
  return 0;
}
