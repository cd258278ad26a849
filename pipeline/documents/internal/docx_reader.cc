// Word documents (.docx, Office Open XML): word/document.xml's paragraphs, tables and lists in
// document order; headings ("Heading1".."Heading9", "Title" styles or an outline level) as "# "
// lines. The text is one page, split where the file has explicit page breaks. Deleted text,
// field codes and the fallback copies of text boxes are left out.
#include "base/strings.h"
#include "pipeline/documents/internal/format_reader.h"
#include "pipeline/documents/internal/office_package.h"
#include "pipeline/documents/internal/text_builder.h"
#include "pipeline/documents/internal/text_util.h"
#include "pipeline/documents/internal/xml.h"
#include "pipeline/documents/internal/zip_archive.h"

namespace reel::pipeline::documents {
namespace {

class DocxWalker {
 public:
  std::vector<std::string> pages;

  void Body(xmlNode* body) {
    Walk(body, 0);
    pages.push_back(out_.Take());
  }

 private:
  void Walk(xmlNode* node, int depth) {
    if (depth > kMaxXmlDepth) return;
    for (xmlNode* c = node->children; c; c = c->next) {
      if (c->type == XML_ELEMENT_NODE) Element(c, depth + 1);
    }
  }

  // "Heading2" -> 2, "Title" -> 1, else the paragraph's outline level + 1, else 0.
  static int HeadingLevel(xmlNode* paragraph) {
    xmlNode* properties = nullptr;
    for (xmlNode* c = paragraph->children; c; c = c->next) {
      if (IsElement(c, "pPr")) properties = c;
    }
    if (!properties) return 0;
    for (xmlNode* c = properties->children; c; c = c->next) {
      if (IsElement(c, "pStyle")) {
        const std::string style = Lower(Attribute(c, "val"));
        if (style == "title") return 1;
        if (style.starts_with("heading") && style.size() == 8 && style[7] >= '1' &&
            style[7] <= '9') {
          return style[7] - '0';
        }
      }
      if (IsElement(c, "outlineLvl")) {
        const std::string level = Attribute(c, "val");
        if (level.size() == 1 && level[0] >= '0' && level[0] <= '8') return level[0] - '0' + 1;
      }
    }
    return 0;
  }

  static bool IsListItem(xmlNode* paragraph) {
    for (xmlNode* c = paragraph->children; c; c = c->next) {
      if (IsElement(c, "pPr")) return FindElement(c, "numPr") != nullptr;
    }
    return false;
  }

  void Paragraph(xmlNode* p, int depth) {
    if (in_cell_ == 0) {
      const int level = HeadingLevel(p);
      if (level > 0) {
        out_.ParagraphBreak();
        out_.LinePrefix(std::string(static_cast<size_t>(level), '#') + " ");
      } else if (IsListItem(p)) {
        out_.LinePrefix("- ");
      }
    } else if (!out_.LineEmpty()) {
      out_.Text(" ");
    }
    Walk(p, depth);
    if (in_cell_ == 0) out_.ParagraphBreak();
  }

  void Element(xmlNode* node, int depth) {
    const std::string_view name = LocalName(node);
    if (name == "p") {
      Paragraph(node, depth);
    } else if (name == "t") {
      out_.Text(TextContent(node));
    } else if (name == "tab") {
      out_.Text(" ");
    } else if (name == "br" || name == "cr") {
      if (Attribute(node, "type") == "page") {
        PageBreak();
      } else if (in_cell_ == 0) {
        out_.LineBreak();
      } else {
        out_.Text(" ");
      }
    } else if (name == "tr") {
      out_.LineBreak();
      first_cell_ = true;
      Walk(node, depth);
      out_.LineBreak();
    } else if (name == "tc") {
      if (!first_cell_) out_.Separator(" | ");
      first_cell_ = false;
      ++in_cell_;
      Walk(node, depth);
      --in_cell_;
    } else if (name == "tbl") {
      out_.ParagraphBreak();
      const bool saved = first_cell_;
      Walk(node, depth);
      first_cell_ = saved;
      out_.ParagraphBreak();
    } else if (name == "delText" || name == "instrText" || name == "Fallback" || name == "pPr" ||
               name == "rPr" || name == "sectPr" || name == "footnoteReference") {
      // not text the reader sees
    } else {
      Walk(node, depth);
    }
  }

  void PageBreak() { pages.push_back(out_.Take()); }

  TextBuilder out_;
  int in_cell_ = 0;
  bool first_cell_ = true;
};

class DocxReader : public FormatReader {
 public:
  Status Read(const std::string& path, PageOutput& out) override {
    REEL_ASSIGN_OR_RETURN(std::unique_ptr<ZipArchive> zip,
                          ZipArchive::Open(path, out.options().limits, out.name()));
    REEL_ASSIGN_OR_RETURN(XmlDoc doc,
                          ReadMainXml(*zip, "word/document.xml", out.name(), "a Word document"));
    DocumentReport& report = out.report();
    if (std::optional<std::string> title = PackageTitle(*zip, "docProps/core.xml")) {
      report.title = std::move(*title);
    }
    xmlNode* body = FindElement(xmlDocGetRootElement(doc.get()), "body");
    DocxWalker walker;
    if (body) walker.Body(body);
    // A page break at the very end leaves an empty last page: dropped.
    while (walker.pages.size() > 1 && walker.pages.back().empty()) walker.pages.pop_back();
    if (walker.pages.empty()) walker.pages.emplace_back();
    out.SetPageCount(static_cast<int>(walker.pages.size()));
    for (size_t i = 0; i < walker.pages.size(); ++i) {
      const int number = static_cast<int>(i) + 1;
      if (out.Done(number)) break;
      if (!out.Wanted(number)) continue;
      DocumentPage page;
      page.number = number;
      page.text = NormalizePageText(walker.pages[i]);
      page.source = page.text.empty() ? TextSource::kNone : TextSource::kMarkup;
      REEL_RETURN_IF_ERROR(out.Emit(std::move(page)));
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<FormatReader> MakeDocxReader() { return std::make_unique<DocxReader>(); }

}  // namespace reel::pipeline::documents
