// reel text FILE [--pages R]: a document's text on standard output, each page followed by a form
// feed (as pdftotext writes it).
#include <cstdio>
#include <string>

#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/document_options.h"
#include "pipeline/documents/document.h"

namespace reel::cli {
namespace {

int Run(const DocumentCliOptions& o) {
  Result<pipeline::DocumentOptions> options = ToDocumentOptions(o);
  if (!options.ok()) {
    std::fprintf(stderr, "reel text: %s\n", SafeUtf8(options.status().message()).c_str());
    return kExitUsage;
  }
  options->images = false;
  const std::string shown = DisplayPath(o.file);
  bool write_failed = false;
  auto sink = [&](pipeline::DocumentPage&& page) -> Status {
    if (!page.error.ok()) {
      std::fprintf(stderr, "reel text: %s: %s\n", shown.c_str(),
                   SafeUtf8(page.error.message()).c_str());
    }
    std::string out = page.text;
    out += '\f';
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
      write_failed = true;
      return IoError("cannot write to standard output");
    }
    return Status::Ok();
  };
  Result<pipeline::DocumentReport> report = pipeline::ReadDocument(o.file, *options, sink);
  std::fflush(stdout);
  if (!report.ok()) {
    std::fprintf(stderr, "reel text: %s\n", SafeUtf8(report.status().message()).c_str());
    return report.status().code() == ErrorCode::kInvalidArgument && !write_failed ? kExitUsage
                                                                                  : kExitFailed;
  }
  return ReportDocument("reel text", shown, *report);
}

}  // namespace

void AddTextCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<DocumentCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "text",
      "Print a document's text (PDF, HTML, EPUB, DOCX, ODT, PPTX, ODP), pages separated "
      "by form feeds");
  cmd->footer(
      "PDF text is in reading order, as pdftotext gives it; pages with no text layer but ink on "
      "them (scans) are read by OCR (Tesseract) unless --no-ocr. HTML and office files give "
      "their readable text with headings (# ), list items (- ) and table rows (cells joined by "
      "' | ') as lines; an EPUB's chapters and a deck's slides are its pages.\n"
      "Exit status: 0 done, 1 failed (unreadable, encrypted, a limit hit), 2 bad options, "
      "3 partial (some pages failed, or pages past --max-pages were left out).");
  cmd->add_option("FILE", o->file, "Document")->required();
  AddDocumentOptions(*cmd, *o, /*pictures=*/false);
  cmd->callback([o, &exit_code] { exit_code = Run(*o); });
}

}  // namespace reel::cli
