// The `documents:` section (Parser::ReadDocuments), its resolved YAML and its settings key.
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

#include "base/file_util.h"
#include "base/strings.h"
#include "jobs/spec/job_parser.h"
#include "pipeline/documents/document.h"

namespace reel::jobs {
namespace {

const EnumNames<DocumentPages>& DocumentPagesNames() {
  static const EnumNames<DocumentPages> names{{{"text", DocumentPages::kText},
                                               {"images", DocumentPages::kImages},
                                               {"both", DocumentPages::kBoth}}};
  return names;
}

std::string JoinLanguages(const std::vector<std::string>& languages) {
  return Join(languages, "+");
}

}  // namespace

const char* DocumentPagesName(DocumentPages pages) {
  return DocumentPagesNames().Name(pages).c_str();
}

bool IsPagedDocument(const std::string& path) {
  const std::string ext = Lower(std::filesystem::path(path).extension().string());
  if (ext == ".txt" || ext == ".md" || ext == ".markdown") return false;
  if (pipeline::IsDocumentExtension(ext)) return true;
  return pipeline::DetectDocumentFormat(path) != pipeline::DocumentFormat::kUnknown;
}

std::string DocumentPageSource(std::string_view format_name, bool ocr) {
  return ocr ? "ocr" : std::string(format_name);
}

bool IsDocumentPageSource(std::string_view source) {
  if (source.starts_with(kSlidesSourcePrefix)) return true;
  for (const char* s : {"pdf", "ocr", "html", "epub", "docx", "pptx", "odt", "odp"}) {
    if (source == s) return true;
  }
  return false;
}

std::vector<std::string> FindSidecarDocuments(const std::string& video_path) {
  const std::string stem = std::filesystem::path(video_path).stem().string();
  return FilesBeside(video_path, [&](const std::string& name) {
    const std::filesystem::path file(name);
    return file.stem().string() == stem &&
           pipeline::IsDocumentExtension(Lower(file.extension().string()));
  });
}

std::string RenderDocumentsSection(const DocumentsSpec& d) {
  std::ostringstream out;
  out << "documents:\n";
  out << "  pages: " << DocumentPagesName(d.pages) << "\n";
  out << "  first_page: " << d.first_page << "\n";
  out << "  last_page: " << d.last_page << (d.last_page == 0 ? "  # to the end" : "") << "\n";
  out << "  max_pages: " << d.max_pages << "\n";
  out << "  ocr: " << (d.ocr ? "true" : "false") << "\n";
  out << "  ocr_languages: [";
  for (size_t i = 0; i < d.ocr_languages.size(); ++i) {
    out << (i ? ", " : "") << nlohmann::json(d.ocr_languages[i]).dump();
  }
  out << "]\n";
  out << "  ocr_dpi: " << d.ocr_dpi << "\n";
  out << "  dpi: " << FormatNumber(d.dpi) << "\n";
  out << "  office_render: " << (d.office_render ? "true" : "false") << "\n";
  return out.str();
}

pipeline::DocumentOptions DocumentOptionsFor(const JobSpec& job) {
  const DocumentsSpec& d = job.documents;
  pipeline::DocumentOptions o;
  o.pages.first = d.first_page;
  o.pages.last = d.last_page;
  o.text = true;  // always: the text is what `reel search` finds
  o.images = d.pages != DocumentPages::kText;
  o.render_dpi = d.dpi;
  // The still-image rule of image_stage.cc.
  o.resize = job.resize.frames;
  o.resize.smart.max_pixels = job.resize.image_max_pixels;
  if (o.resize.smart.min_pixels > o.resize.smart.max_pixels) {
    o.resize.smart.min_pixels = o.resize.smart.max_pixels;
  }
  o.ocr.enabled = d.ocr;
  o.ocr.languages = d.ocr_languages;
  o.ocr.dpi = d.ocr_dpi;
  o.office_render = d.office_render;
  o.limits.max_pages = d.max_pages;
  o.limits.max_file_bytes = job.limits.max_file_bytes;
  if (job.limits.media.time_limit_s > 0) o.limits.time_limit_s = job.limits.media.time_limit_s;
  return o;
}

std::string DocumentSettingsKey(const JobSpec& job) {
  const DocumentsSpec& d = job.documents;
  const pipeline::ResizeOptions& r = job.resize.frames;
  std::ostringstream out;
  out << "reel-document-settings-1\n";
  out << "documents.pages=" << DocumentPagesName(d.pages) << "\n";
  out << "documents.range=" << d.first_page << "-" << d.last_page << "\n";
  out << "documents.max_pages=" << d.max_pages << "\n";
  out << "documents.ocr=" << (d.ocr ? JoinLanguages(d.ocr_languages) : "off") << "@" << d.ocr_dpi
      << "\n";
  out << "documents.office_render=" << (d.office_render ? 1 : 0) << "\n";

  if (d.pages != DocumentPages::kText) {
    // The pictures: the still-image rule (image_stage.cc) at the measuring resolution.
    out << "documents.dpi=" << FormatNumber(d.dpi) << "\n";
    out << "resize.mode=" << ResizeModeKey(r.mode) << "\n";
    out << "resize.factor=" << r.smart.factor << "\n";
    out << "resize.min_pixels=" << r.smart.min_pixels << "\n";
    out << "resize.image_max_pixels=" << job.resize.image_max_pixels << "\n";
    out << "resize.max_long_side=" << r.long_side.max_long_side << "\n";
    out << "resize.max_aspect_ratio=" << FormatNumber(r.smart.max_aspect_ratio) << "\n";
  }
  return out.str();
}

namespace parser {

void Parser::ReadDocuments(const Fields& top) {
  static const std::vector<std::string> kDocumentsKeys = {
      "pages", "page_range",    "first_page", "last_page", "max_pages",
      "ocr",   "ocr_languages", "ocr_dpi",    "dpi",       "office_render"};
  const Field* section = top.Find("documents");
  if (section == nullptr) return;
  const std::string path = "documents";
  std::optional<Fields> fields = ReadMap(section->value, MarkOf(*section), path, kDocumentsKeys);
  if (!fields) return;
  DocumentsSpec& d = job_.documents;
  ReadEnum(*fields, "pages", path, DocumentPagesNames(), &d.pages);
  if (std::optional<FieldText> range = ReadText(*fields, "page_range", path)) {
    Result<pipeline::PageRange> parsed = pipeline::ParsePageRange(range->text);
    if (!parsed.ok()) {
      Error(MarkOf(*range->field),
            "'documents.page_range' must be N, N-M or N- (pages counted "
            "from 1), got " +
                Quoted(range->text));
    } else {
      d.first_page = parsed->first;
      d.last_page = parsed->last;
    }
    if (fields->Has("first_page") || fields->Has("last_page")) {
      Error(MarkOf(*range->field),
            "give either 'documents.page_range' or 'documents.first_page'/'last_page', not both");
    }
  }
  ReadInt(*fields, "first_page", path, &d.first_page, 1, INT32_MAX);
  ReadInt(*fields, "last_page", path, &d.last_page, 0, INT32_MAX);
  if (d.last_page != 0 && d.last_page < d.first_page) {
    const Field* f = fields->Find("last_page");
    if (f == nullptr) f = fields->Find("page_range");
    Error(f ? MarkOf(*f) : MarkOf(*section),
          "'documents.last_page' (" + std::to_string(d.last_page) +
              ") is before 'documents.first_page' (" + std::to_string(d.first_page) + ")");
  }
  ReadInt(*fields, "max_pages", path, &d.max_pages, 1, 1000000);
  ReadBool(*fields, "ocr", path, &d.ocr);
  if (const Field* f = fields->Find("ocr_languages"); f != nullptr && !f->value.IsNull()) {
    std::vector<std::string> languages;
    auto add = [&](const std::string& text, const YAML::Mark& mark) {
      for (size_t start = 0; start <= text.size();) {
        size_t end = text.find('+', start);
        if (end == std::string::npos) end = text.size();
        std::string name(Trim(std::string_view(text).substr(start, end - start)));
        start = end + 1;
        if (name.empty()) continue;
        if (name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
                                   "-") != std::string::npos) {
          Error(mark, "'documents.ocr_languages': " + Quoted(name) +
                          " is not a Tesseract language name (e.g. eng, deu, chi_sim)");
          continue;
        }
        languages.push_back(std::move(name));
      }
    };
    if (f->value.IsSequence()) {
      for (size_t i = 0; i < f->value.size(); ++i) {
        Field item{"", f->value[i], f->value[i]};
        if (std::optional<std::string> text = Text(item, Element("documents.ocr_languages", i))) {
          add(*text, MarkOf(item));
        }
      }
    } else if (std::optional<std::string> text = Text(*f, "documents.ocr_languages")) {
      add(*text, MarkOf(*f));
    }
    if (languages.empty()) {
      Error(MarkOf(*f), "'documents.ocr_languages' names no language (e.g. [eng] or eng+deu)");
    } else {
      d.ocr_languages = std::move(languages);
    }
  }
  ReadInt(*fields, "ocr_dpi", path, &d.ocr_dpi, 50, 1200);
  ReadNumber(*fields, "dpi", path, &d.dpi, 18, false, 1200);
  ReadBool(*fields, "office_render", path, &d.office_render);
}

}  // namespace parser
}  // namespace reel::jobs
