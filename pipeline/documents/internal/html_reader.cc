// HTML pages (.html .htm .xhtml): one page of readable text (html_text.cc), and the images it
// refers to by local path, decoded when DocumentOptions::keep_images.
#include <filesystem>

#include "base/file_util.h"
#include "base/utf8.h"
#include "pipeline/documents/internal/format_reader.h"
#include "pipeline/documents/internal/html_text.h"
#include "pipeline/documents/internal/text_util.h"
#include "pipeline/image_codec.h"

namespace reel::pipeline::documents {
namespace {

class HtmlReader : public FormatReader {
 public:
  Status Read(const std::string& path, PageOutput& out) override {
    const DocumentOptions& options = out.options();
    Result<std::string> bytes =
        ReadFileToString(path, static_cast<uint64_t>(options.limits.max_entry_bytes));
    if (!bytes.ok()) {
      if (bytes.status().code() == ErrorCode::kLimitExceeded) {
        return LimitExceeded(out.name() + ": larger than " +
                             std::to_string(options.limits.max_entry_bytes >> 20) +
                             " MiB, the limit for one page of markup");
      }
      return bytes.status().WithPrefix(out.name());
    }
    REEL_ASSIGN_OR_RETURN(XmlDoc doc, ParseHtml(*bytes, out.name()));
    HtmlContent content = ExtractHtml(doc.get());
    out.SetPageCount(1);
    DocumentReport& report = out.report();
    report.title = SafeUtf8(content.title.empty() ? content.first_heading : content.title);
    if (!out.Wanted(1)) return Status::Ok();
    DocumentPage page;
    page.number = 1;
    page.title = report.title;
    page.text = std::move(content.text);
    page.source = page.text.empty() ? TextSource::kNone : TextSource::kMarkup;
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    std::vector<std::string> problems;
    for (const HtmlImage& image : content.images) {
      if (!IsLocalReference(image.src)) continue;
      std::string src = image.src;
      if (src.starts_with("file://")) src = src.substr(7);
      if (src.starts_with("file:")) src = src.substr(5);
      // Resolved like a relative URL (query and fragment dropped, %XX decoded).
      src = src.substr(0, src.find('?'));
      const std::string resolved = (folder / PercentDecode(src)).lexically_normal().string();
      DocumentImage entry{resolved, SafeUtf8(image.alt), {}};
      if (options.keep_images) {
        Result<Image> decoded = ReadImageFile(resolved, options.limits.max_page_pixels);
        if (decoded.ok()) {
          entry.image = std::move(*decoded);
        } else {
          problems.push_back(SafeUtf8(decoded.status().message()));
        }
      }
      page.images.push_back(std::move(entry));
    }
    for (const std::string& problem : problems) report.notes.push_back("image: " + problem);
    return out.Emit(std::move(page));
  }
};

}  // namespace

std::unique_ptr<FormatReader> MakeHtmlReader() { return std::make_unique<HtmlReader>(); }

}  // namespace reel::pipeline::documents
