// Options `reel text` and `reel pages` share: page range, OCR, limits; and how both report a
// document's notes and partial results.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "jobs/cli/commands.h"
#include "pipeline/documents/document.h"

namespace reel::cli {

struct DocumentCliOptions {
  std::string file;
  std::string pages;
  bool no_ocr = false;
  std::string ocr_languages = "eng";
  int ocr_dpi = 300;
  int max_pages = 2000;
  double time_limit = 600;
  int64_t memory_mib = 2048;
  bool office_render = false;
  // reel pages only
  std::optional<int64_t> max_pixels;
  double dpi = 144;
  bool no_resize = false;
};

// Registers the shared options on `cmd`; `pictures` adds --max-pixels, --dpi, --no-resize and
// --office-render.
void AddDocumentOptions(CLI::App& cmd, DocumentCliOptions& o, bool pictures);

// Errors: kInvalidArgument (a bad page range or language list).
Result<pipeline::DocumentOptions> ToDocumentOptions(const DocumentCliOptions& o);

// Prints the report's notes on stderr ("COMMAND: FILE: note") and returns the exit code:
// kExitPartial when pages failed or were left out, else kExitOk.
int ReportDocument(const std::string& command, const std::string& shown,
                   const pipeline::DocumentReport& report);

}  // namespace reel::cli
