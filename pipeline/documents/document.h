// Documents in: a PDF, web page, e-book or office file as pages of text, with each page's picture
// where the format has one, handed in order to a callback; this header is the whole public surface.
// ReadDocument may run on several threads, each with its own file; PDFs are read in a child
// process by default. Details: pipeline/README.md, "Documents".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/image.h"
#include "pipeline/smart_resize.h"

namespace reel::pipeline {

enum class DocumentFormat { kPdf, kHtml, kEpub, kDocx, kOdt, kPptx, kOdp, kUnknown };

const char* DocumentFormatName(DocumentFormat format);  // "pdf", "html", ..., "unknown"

// The format of `path`: by its first bytes (PDF, zip packages by their contents' names) and
// then by its extension (.html .htm .xhtml). kUnknown for anything else.
DocumentFormat DetectDocumentFormat(const std::string& path);

// Whether `extension` (".pdf", lower case, with the dot) names a format ReadDocument reads.
bool IsDocumentExtension(const std::string& extension);

// Pages to read, 1-based and inclusive; `last` 0 means to the end.
struct PageRange {
  int first = 1;
  int last = 0;
  bool Contains(int page) const { return page >= first && (last == 0 || page <= last); }
};

// "3", "1-5", "7-" (to the end). Errors: kInvalidArgument naming the text.
Result<PageRange> ParsePageRange(const std::string& text);

// Where a page's text came from.
enum class TextSource {
  kTextLayer,  // the PDF's own text
  kOcr,        // read from the page's picture by Tesseract
  kMarkup,     // HTML, EPUB or office XML
  kNone,       // no text (a blank page, or OCR off or failed)
};

const char* TextSourceName(TextSource source);  // "pdf", "ocr", "markup", "none"

struct OcrOptions {
  bool enabled = true;
  std::vector<std::string> languages = {"eng"};  // Tesseract names; each needs its package
  int dpi = 300;                                 // resolution the page is read at
  // A PDF page whose text layer has fewer non-space characters than this, and whose picture is
  // not blank, counts as scanned and is read by OCR.
  int min_text_chars = 16;
};

// Limits that keep a hostile file from exhausting memory or time. All are settings.
struct DocumentLimits {
  int max_pages = 2000;                     // pages read; the rest are left out (partial)
  int64_t max_page_pixels = 1LL << 26;      // largest picture rendered (OCR or --no-resize)
  int64_t max_file_bytes = 1LL << 31;       // a larger file is refused
  int64_t max_entry_bytes = 64LL << 20;     // one zip member, decompressed (EPUB, office)
  int64_t max_archive_bytes = 512LL << 20;  // all members read from one zip, decompressed
  int max_entries = 20000;                  // members of one zip
  int64_t memory_bytes = 2LL << 30;         // PDF reader child: address space it may add
  double time_limit_s = 600;                // whole file, wall clock
};

struct DocumentOptions {
  PageRange pages;
  bool text = true;    // extract text (and OCR scanned pages)
  bool images = true;  // render page pictures (PDF; office files with office_render)
  // Page pictures follow the still-image rules: a page measured at `render_dpi` is resized by
  // `resize` (by default Qwen's smart resize to at most kImageMaxPixels, as for still images)
  // and rendered straight at that size.
  double render_dpi = 144;
  ResizeOptions resize = [] {
    ResizeOptions r;
    r.smart.max_pixels = kImageMaxPixels;
    return r;
  }();
  OcrOptions ocr;
  // Office files (DOCX, ODT, PPTX, ODP): convert to PDF with LibreOffice (`soffice`) first, for
  // page pictures and the laid-out pages; without soffice the text is read from the XML and the
  // report says so.
  bool office_render = false;
  std::string soffice = "soffice";  // the command
  // HTML and EPUB: decode the images the page references by a local path (else only list them).
  bool keep_images = false;
  DocumentLimits limits;
  // Read PDFs in a child process with the memory and time limits enforced by the kernel. Off:
  // in this process (the fuzz targets; limits on time are then checked between pages only).
  bool isolate = true;
};

// An image a page refers to (HTML <img>, EPUB pictures), by local path.
struct DocumentImage {
  std::string path;  // resolved against the document's folder; inside the package for EPUB
  std::string alt;
  Image image;  // decoded when DocumentOptions::keep_images, else empty
};

struct DocumentPage {
  int number = 0;       // 1-based page (slide, chapter) number
  std::string label;    // the PDF's page label ("iv", "12") when it has labels, else ""
  std::string title;    // chapter or slide title where the format has one
  double width_pt = 0;  // page size in points (1/72 inch), upright; 0 for reflowed text
  double height_pt = 0;
  std::string text;  // UTF-8; lines end with '\n', paragraphs are separated by a blank line
  TextSource source = TextSource::kNone;
  double ocr_confidence = -1;  // 0..100 (Tesseract's mean word confidence) when source is kOcr
  Image image;                 // the page's picture (RGB), when asked and the format has one
  std::vector<DocumentImage> images;
  // Not OK when the page failed (its text or picture is missing); the document goes on.
  Status error;
};

struct DocumentReport {
  DocumentFormat format = DocumentFormat::kUnknown;
  std::string title;
  int page_count = 0;              // pages in the file
  int pages_read = 0;              // pages handed to the callback
  int pages_failed = 0;            // of those, pages with an error
  int pages_ocr = 0;               // pages whose text came from OCR
  bool truncated = false;          // the file looks cut short
  std::vector<std::string> notes;  // what was left out and why, said to the user
  bool partial() const { return pages_failed > 0 || truncated || left_out; }
  bool left_out = false;  // pages past max_pages were not read
};

// Receives each page, in page order. A non-OK return stops the reading and is returned.
using PageSink = std::function<Status(DocumentPage&& page)>;

// Reads `path`. Errors name the file and the reason: kNotFound, kIoError, kCorruptData
// (damaged, not the format it claims), kUnsupported (encrypted, unknown format), kLimitExceeded
// (time, size, memory), kInvalidArgument (a page range past the end, an OCR language not
// installed). A page that fails is delivered with DocumentPage::error set and counted in
// DocumentReport::pages_failed; the rest of the document goes on.
Result<DocumentReport> ReadDocument(const std::string& path, const DocumentOptions& options,
                                    const PageSink& sink);

}  // namespace reel::pipeline
