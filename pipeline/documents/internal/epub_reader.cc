// EPUB (2 and 3): META-INF/container.xml names the package document (OPF), whose spine lists
// the chapters' XHTML in reading order; each chapter is one page of text (html_text.cc), titled
// from the table of contents (EPUB 3 nav, else the NCX), else by its first heading.
#include <map>

#include "base/utf8.h"
#include "pipeline/documents/internal/format_reader.h"
#include "pipeline/documents/internal/html_text.h"
#include "pipeline/documents/internal/zip_archive.h"
#include "pipeline/image_codec.h"

namespace reel::pipeline::documents {
namespace {

struct ManifestItem {
  std::string href;  // member name in the zip
  std::string media_type;
  std::string properties;
};

// Chapter titles by member name, from an EPUB 3 navigation document.
void TitlesFromNav(xmlNode* node, const std::string& nav_member,
                   std::map<std::string, std::string>& titles, int depth) {
  if (!node || depth > 64) return;
  for (xmlNode* c = node->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (IsElement(c, "a")) {
      const std::string member = ResolveMember(nav_member, Attribute(c, "href"));
      const std::string title = CollapsedText(c);
      if (!member.empty() && !title.empty()) titles.emplace(member, title);
    }
    TitlesFromNav(c, nav_member, titles, depth + 1);
  }
}

// Chapter titles from an EPUB 2 NCX: navPoint > navLabel > text, content@src.
void TitlesFromNcx(xmlNode* node, const std::string& ncx_member,
                   std::map<std::string, std::string>& titles, int depth) {
  if (!node || depth > 64) return;
  for (xmlNode* c = node->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (IsElement(c, "navPoint")) {
      xmlNode* label = FindElement(c, "navLabel");
      xmlNode* content = nullptr;
      for (xmlNode* d = c->children; d; d = d->next) {
        if (IsElement(d, "content")) content = d;
      }
      if (label && content) {
        const std::string member = ResolveMember(ncx_member, Attribute(content, "src"));
        const std::string title = CollapsedText(label);
        if (!member.empty() && !title.empty()) titles.emplace(member, title);
      }
    }
    TitlesFromNcx(c, ncx_member, titles, depth + 1);
  }
}

class EpubReader : public FormatReader {
 public:
  Status Read(const std::string& path, PageOutput& out) override {
    const DocumentOptions& options = out.options();
    REEL_ASSIGN_OR_RETURN(std::unique_ptr<ZipArchive> zip,
                          ZipArchive::Open(path, options.limits, out.name()));
    Result<std::string> container = zip->Read("META-INF/container.xml");
    if (!container.ok()) {
      return CorruptData(out.name() + ": not an EPUB: " + container.status().message());
    }
    REEL_ASSIGN_OR_RETURN(XmlDoc container_doc,
                          ParseXml(*container, out.name() + ": META-INF/container.xml"));
    xmlNode* rootfile = FindElement(reinterpret_cast<xmlNode*>(container_doc.get()), "rootfile");
    const std::string opf_member =
        rootfile ? ResolveMember("", Attribute(rootfile, "full-path")) : "";
    if (opf_member.empty()) {
      return CorruptData(out.name() + ": META-INF/container.xml names no package document");
    }
    REEL_ASSIGN_OR_RETURN(std::string opf, zip->Read(opf_member));
    REEL_ASSIGN_OR_RETURN(XmlDoc opf_doc, ParseXml(opf, out.name() + ": " + opf_member));
    xmlNode* package = xmlDocGetRootElement(opf_doc.get());

    DocumentReport& report = out.report();
    if (xmlNode* title = FindElement(FindElement(package, "metadata"), "title")) {
      report.title = SafeUtf8(CollapsedText(title));
    }
    std::map<std::string, ManifestItem> manifest;
    std::string nav_member, ncx_member;
    if (xmlNode* m = FindElement(package, "manifest")) {
      for (xmlNode* item = m->children; item; item = item->next) {
        if (!IsElement(item, "item")) continue;
        ManifestItem entry{ResolveMember(opf_member, Attribute(item, "href")),
                           Attribute(item, "media-type"), Attribute(item, "properties")};
        if (entry.properties.find("nav") != std::string::npos) nav_member = entry.href;
        if (entry.media_type == "application/x-dtbncx+xml") ncx_member = entry.href;
        manifest.emplace(Attribute(item, "id"), std::move(entry));
      }
    }
    std::vector<std::string> spine;
    xmlNode* spine_node = FindElement(package, "spine");
    if (spine_node) {
      if (ncx_member.empty()) {
        auto toc = manifest.find(Attribute(spine_node, "toc"));
        if (toc != manifest.end()) ncx_member = toc->second.href;
      }
      for (xmlNode* ref = spine_node->children; ref; ref = ref->next) {
        if (!IsElement(ref, "itemref")) continue;
        auto item = manifest.find(Attribute(ref, "idref"));
        if (item == manifest.end() || item->second.href.empty()) {
          report.notes.push_back("the spine names '" + SafeUtf8(Attribute(ref, "idref")) +
                                 "', which the manifest does not list");
          continue;
        }
        spine.push_back(item->second.href);
      }
    }
    if (spine.empty()) return CorruptData(out.name() + ": the EPUB's spine lists no chapters");
    // DRM: META-INF/encryption.xml naming a chapter (fonts are often obfuscated the same way,
    // which is harmless: they are never read).
    if (zip->Has("META-INF/encryption.xml")) {
      Result<std::string> encryption = zip->Read("META-INF/encryption.xml");
      if (encryption.ok()) {
        for (const std::string& chapter : spine) {
          if (encryption->find("\"" + chapter + "\"") != std::string::npos) {
            return Unsupported(out.name() + ": the EPUB is encrypted (DRM): " + chapter +
                               " cannot be read");
          }
        }
      }
    }

    std::map<std::string, std::string> titles;
    if (!nav_member.empty()) {
      Result<std::string> nav = zip->Read(nav_member);
      if (nav.ok()) {
        Result<XmlDoc> nav_doc = ParseHtml(*nav, nav_member);
        if (nav_doc.ok()) {
          TitlesFromNav(reinterpret_cast<xmlNode*>(nav_doc->get()), nav_member, titles, 0);
        }
      }
    }
    if (titles.empty() && !ncx_member.empty()) {
      Result<std::string> ncx = zip->Read(ncx_member);
      if (ncx.ok()) {
        Result<XmlDoc> ncx_doc = ParseXml(*ncx, ncx_member);
        if (ncx_doc.ok()) {
          TitlesFromNcx(reinterpret_cast<xmlNode*>(ncx_doc->get()), ncx_member, titles, 0);
        }
      }
    }

    out.SetPageCount(static_cast<int>(spine.size()));
    for (size_t i = 0; i < spine.size(); ++i) {
      const int number = static_cast<int>(i) + 1;
      if (out.Done(number)) break;
      if (!out.Wanted(number)) continue;
      REEL_RETURN_IF_ERROR(out.CheckTime());
      DocumentPage page;
      page.number = number;
      Result<std::string> chapter = zip->Read(spine[i]);
      if (!chapter.ok()) {
        // A bomb or a damaged member fails its chapter; past the whole package's limit, the
        // rest cannot be read either.
        if (chapter.status().message().find("the package decompresses") != std::string::npos) {
          return chapter.status();
        }
        page.error = chapter.status();
        REEL_RETURN_IF_ERROR(out.Emit(std::move(page)));
        continue;
      }
      Result<XmlDoc> doc = ParseHtml(*chapter, out.name() + ": " + spine[i]);
      if (!doc.ok()) {
        page.error = doc.status();
        REEL_RETURN_IF_ERROR(out.Emit(std::move(page)));
        continue;
      }
      HtmlContent content = ExtractHtml(doc->get());
      auto title = titles.find(spine[i]);
      page.title = SafeUtf8(title != titles.end()            ? title->second
                            : !content.first_heading.empty() ? content.first_heading
                                                             : content.title);
      page.text = std::move(content.text);
      page.source = page.text.empty() ? TextSource::kNone : TextSource::kMarkup;
      for (const HtmlImage& image : content.images) {
        if (!IsLocalReference(image.src)) continue;
        DocumentImage entry{ResolveMember(spine[i], image.src), SafeUtf8(image.alt), {}};
        if (options.keep_images && !entry.path.empty()) {
          Result<std::string> bytes = zip->Read(entry.path);
          Result<Image> decoded =
              bytes.ok()
                  ? DecodeImage(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size(),
                                out.name() + ": " + entry.path, options.limits.max_page_pixels)
                  : Result<Image>(bytes.status());
          if (decoded.ok()) {
            entry.image = std::move(*decoded);
          } else {
            report.notes.push_back("image: " + SafeUtf8(decoded.status().message()));
          }
        }
        page.images.push_back(std::move(entry));
      }
      REEL_RETURN_IF_ERROR(out.Emit(std::move(page)));
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<FormatReader> MakeEpubReader() { return std::make_unique<EpubReader>(); }

}  // namespace reel::pipeline::documents
