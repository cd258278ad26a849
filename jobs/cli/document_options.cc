#include "jobs/cli/document_options.h"

#include <cstdio>

#include "base/utf8.h"
#include "jobs/cli/number_checks.h"

namespace reel::cli {

void AddDocumentOptions(CLI::App& cmd, DocumentCliOptions& o, bool pictures) {
  cmd.add_option("--pages", o.pages, "Pages to read: N, N-M or N- (counted from 1)");
  cmd.add_flag("--no-ocr", o.no_ocr, "Do not read scanned pages by OCR");
  cmd.add_option("--ocr-languages", o.ocr_languages,
                 "Tesseract languages joined by '+', e.g. eng+deu (each needs its package, "
                 "tesseract-ocr-LANG)")
      ->default_val("eng");
  cmd.add_option("--ocr-dpi", o.ocr_dpi, "Resolution scanned pages are read at")
      ->default_val(300)
      ->check(Between(50, 1200));
  cmd.add_option("--max-pages", o.max_pages, "Read at most N pages (the rest are left out)")
      ->default_val(2000)
      ->check(AtLeast(1));
  cmd.add_option("--time-limit", o.time_limit, "Seconds allowed for the file")
      ->default_val(600)
      ->check(GreaterThan(0));
  cmd.add_option("--memory-limit", o.memory_mib,
                 "MiB of memory the PDF reader may use (it runs in a child process)")
      ->default_val(2048)
      ->check(Between(64, 1 << 20));
  cmd.add_flag("--office-render", o.office_render,
               "Office files: lay out the pages with LibreOffice (soffice) for pictures and page "
               "numbers; without it installed, text only");
  if (pictures) {
    cmd.add_option("--max-pixels", o.max_pixels,
                   "Smart resize: largest picture area (default 451584, the still-image default)")
        ->check(AtLeast(784));
    cmd.add_option("--dpi", o.dpi, "Resolution a page is measured at before the resize rule")
        ->default_val(144)
        ->check(Between(18, 1200));
    cmd.add_flag("--no-resize", o.no_resize, "Render at --dpi as it is (no model size rule)");
  }
}

Result<pipeline::DocumentOptions> ToDocumentOptions(const DocumentCliOptions& o) {
  pipeline::DocumentOptions options;
  if (!o.pages.empty()) {
    REEL_ASSIGN_OR_RETURN(options.pages, pipeline::ParsePageRange(o.pages));
  }
  options.ocr.enabled = !o.no_ocr;
  options.ocr.languages.clear();
  size_t start = 0;
  while (start <= o.ocr_languages.size()) {
    size_t end = o.ocr_languages.find('+', start);
    if (end == std::string::npos) end = o.ocr_languages.size();
    if (end > start) options.ocr.languages.push_back(o.ocr_languages.substr(start, end - start));
    start = end + 1;
  }
  if (options.ocr.enabled && options.ocr.languages.empty()) {
    return InvalidArgument("--ocr-languages: no language given");
  }
  options.ocr.dpi = o.ocr_dpi;
  options.limits.max_pages = o.max_pages;
  options.limits.time_limit_s = o.time_limit;
  options.limits.memory_bytes = o.memory_mib << 20;
  options.office_render = o.office_render;
  options.render_dpi = o.dpi;
  if (o.max_pixels) {
    if (*o.max_pixels < options.resize.smart.min_pixels) {
      return InvalidArgument("--max-pixels " + std::to_string(*o.max_pixels) +
                             " is smaller than the smallest picture (" +
                             std::to_string(options.resize.smart.min_pixels) + " pixels)");
    }
    options.resize.smart.max_pixels = *o.max_pixels;
  }
  if (o.no_resize) {
    if (o.max_pixels) return InvalidArgument("choose one of --no-resize and --max-pixels");
    options.resize.mode = pipeline::ResizeMode::kNone;
  }
  return options;
}

int ReportDocument(const std::string& command, const std::string& shown,
                   const pipeline::DocumentReport& report) {
  for (const std::string& note : report.notes) {
    std::fprintf(stderr, "%s: %s: %s\n", command.c_str(), shown.c_str(), SafeUtf8(note).c_str());
  }
  std::fprintf(
      stderr, "%s: %s: %s, %d of %d pages read%s%s\n", command.c_str(), shown.c_str(),
      pipeline::DocumentFormatName(report.format), report.pages_read, report.page_count,
      report.pages_ocr > 0 ? (", " + std::to_string(report.pages_ocr) + " by OCR").c_str() : "",
      report.pages_failed > 0 ? (", " + std::to_string(report.pages_failed) + " failed").c_str()
                              : "");
  return report.partial() ? kExitPartial : kExitOk;
}

}  // namespace reel::cli
