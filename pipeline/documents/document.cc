#include "pipeline/documents/document.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/strings.h"
#include "base/utf8.h"
#include "pipeline/documents/internal/format_reader.h"
#include "pipeline/documents/internal/text_util.h"
#include "pipeline/documents/internal/zip_archive.h"

namespace reel::pipeline {

const char* DocumentFormatName(DocumentFormat format) {
  switch (format) {
    case DocumentFormat::kPdf:
      return "pdf";
    case DocumentFormat::kHtml:
      return "html";
    case DocumentFormat::kEpub:
      return "epub";
    case DocumentFormat::kDocx:
      return "docx";
    case DocumentFormat::kOdt:
      return "odt";
    case DocumentFormat::kPptx:
      return "pptx";
    case DocumentFormat::kOdp:
      return "odp";
    case DocumentFormat::kUnknown:
      break;
  }
  return "unknown";
}

const char* TextSourceName(TextSource source) {
  switch (source) {
    case TextSource::kTextLayer:
      return "pdf";
    case TextSource::kOcr:
      return "ocr";
    case TextSource::kMarkup:
      return "markup";
    case TextSource::kNone:
      break;
  }
  return "none";
}

namespace {

DocumentFormat FormatOfExtension(std::string extension) {
  extension = Lower(extension);
  if (extension == ".pdf") return DocumentFormat::kPdf;
  if (extension == ".html" || extension == ".htm" || extension == ".xhtml") {
    return DocumentFormat::kHtml;
  }
  if (extension == ".epub") return DocumentFormat::kEpub;
  if (extension == ".docx") return DocumentFormat::kDocx;
  if (extension == ".odt") return DocumentFormat::kOdt;
  if (extension == ".pptx") return DocumentFormat::kPptx;
  if (extension == ".odp") return DocumentFormat::kOdp;
  return DocumentFormat::kUnknown;
}

DocumentFormat FormatOfZip(const std::string& path) {
  DocumentLimits limits;
  limits.max_entry_bytes = 4096;
  auto zip = documents::ZipArchive::Open(path, limits, path);
  if (!zip.ok()) return DocumentFormat::kUnknown;
  if ((*zip)->Has("mimetype")) {
    Result<std::string> mimetype = (*zip)->Read("mimetype");
    if (mimetype.ok()) {
      std::string m = *mimetype;
      while (!m.empty() && (m.back() == '\n' || m.back() == '\r' || m.back() == ' ')) m.pop_back();
      if (m == "application/epub+zip") return DocumentFormat::kEpub;
      if (m == "application/vnd.oasis.opendocument.text") return DocumentFormat::kOdt;
      if (m == "application/vnd.oasis.opendocument.presentation") return DocumentFormat::kOdp;
    }
  }
  if ((*zip)->Has("word/document.xml")) return DocumentFormat::kDocx;
  if ((*zip)->Has("ppt/presentation.xml")) return DocumentFormat::kPptx;
  if ((*zip)->Has("META-INF/container.xml")) return DocumentFormat::kEpub;
  return DocumentFormat::kUnknown;
}

}  // namespace

DocumentFormat DetectDocumentFormat(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  std::string head(1024, '\0');
  if (f) head.resize(std::fread(head.data(), 1, head.size(), f.get()));
  const DocumentFormat by_extension =
      FormatOfExtension(std::filesystem::path(path).extension().string());
  // The PDF header may follow some junk (the specification allows 1 KiB of it).
  if (head.find("%PDF-") != std::string::npos) return DocumentFormat::kPdf;
  if (head.starts_with("PK\x03\x04")) {
    const DocumentFormat zipped = FormatOfZip(path);
    return zipped != DocumentFormat::kUnknown ? zipped : by_extension;
  }
  return by_extension;
}

bool IsDocumentExtension(const std::string& extension) {
  return FormatOfExtension(extension) != DocumentFormat::kUnknown;
}

Result<PageRange> ParsePageRange(const std::string& text) {
  auto number = [&](const std::string& s, int& out) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    out = std::stoi(s);
    return out >= 1;
  };
  const std::string bad =
      "page range '" + SafeUtf8(text) + "': expected N, N-M or N- with pages counted from 1";
  PageRange range;
  const size_t dash = text.find('-');
  if (dash == std::string::npos) {
    if (!number(text, range.first)) return InvalidArgument(bad);
    range.last = range.first;
    return range;
  }
  if (!number(text.substr(0, dash), range.first)) return InvalidArgument(bad);
  const std::string tail = text.substr(dash + 1);
  if (!tail.empty() && !number(tail, range.last)) return InvalidArgument(bad);
  if (range.last != 0 && range.last < range.first) {
    return InvalidArgument("page range '" + SafeUtf8(text) +
                           "': the last page is before the first");
  }
  return range;
}

Result<DocumentReport> ReadDocument(const std::string& path, const DocumentOptions& options,
                                    const PageSink& sink) {
  const std::string name = DisplayPath(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return NotFound(name + ": no such file");
  if (S_ISDIR(st.st_mode)) return InvalidArgument(name + ": a folder, not a document");
  if (st.st_size > options.limits.max_file_bytes) {
    return LimitExceeded(name + ": " + std::to_string(st.st_size >> 20) +
                         " MiB is past the limit of " +
                         std::to_string(options.limits.max_file_bytes >> 20) + " MiB");
  }
  if (options.limits.max_pages < 1) return InvalidArgument("max_pages must be at least 1");
  DocumentReport report;
  report.format = DetectDocumentFormat(path);
  std::unique_ptr<documents::FormatReader> reader;
  switch (report.format) {
    case DocumentFormat::kPdf:
      reader = documents::MakePdfReader();
      break;
    case DocumentFormat::kHtml:
      reader = documents::MakeHtmlReader();
      break;
    case DocumentFormat::kEpub:
      reader = documents::MakeEpubReader();
      break;
    case DocumentFormat::kDocx:
      reader = documents::MakeDocxReader();
      break;
    case DocumentFormat::kPptx:
      reader = documents::MakePptxReader();
      break;
    case DocumentFormat::kOdt:
    case DocumentFormat::kOdp:
      reader = documents::MakeOdfReader();
      break;
    case DocumentFormat::kUnknown:
      return Unsupported(name +
                         ": not a document Reel reads (PDF, HTML, EPUB, DOCX, ODT, PPTX, ODP)");
  }
  if (options.office_render &&
      (report.format == DocumentFormat::kDocx || report.format == DocumentFormat::kOdt ||
       report.format == DocumentFormat::kPptx || report.format == DocumentFormat::kOdp)) {
    reader = documents::MakeOfficeRenderer(std::move(reader));
  }
  documents::PageOutput out(options, sink, report, name);
  REEL_RETURN_IF_ERROR(reader->Read(path, out));
  if (report.pages_read == 0 && report.page_count > 0 && options.pages.first > report.page_count) {
    return InvalidArgument(name + ": page " + std::to_string(options.pages.first) +
                           " asked, but the document has " + std::to_string(report.page_count) +
                           (report.page_count == 1 ? " page" : " pages"));
  }
  const int asked_last =
      options.pages.last == 0 ? report.page_count : std::min(options.pages.last, report.page_count);
  if (out.LastWanted(report.page_count) < asked_last) {
    report.left_out = true;
    report.notes.push_back("the document has " + std::to_string(report.page_count) +
                           " pages; read up to page " +
                           std::to_string(out.LastWanted(report.page_count)) + " (the limit is " +
                           std::to_string(options.limits.max_pages) + " pages)");
  }
  return report;
}

}  // namespace reel::pipeline
