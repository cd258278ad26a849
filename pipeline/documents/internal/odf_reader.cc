// OpenDocument text and presentations (.odt, .odp): content.xml in document order. A text
// document is one page: headings (text:h, by outline level) as "# " lines, list items as "- ",
// table rows as cells joined by " | ". A presentation is one page per slide (draw:page), titled
// by the slide's title frame; speaker notes are left out.
#include "base/utf8.h"
#include "pipeline/documents/internal/format_reader.h"
#include "pipeline/documents/internal/office_package.h"
#include "pipeline/documents/internal/text_builder.h"
#include "pipeline/documents/internal/text_util.h"
#include "pipeline/documents/internal/xml.h"
#include "pipeline/documents/internal/zip_archive.h"

namespace reel::pipeline::documents {
namespace {

class OdfWalker {
 public:
  std::string title;  // a slide's title frame

  void Walk(xmlNode* node, int depth) {
    if (depth > kMaxXmlDepth) return;
    for (xmlNode* c = node->children; c; c = c->next) {
      if (c->type == XML_TEXT_NODE && c->content) {
        out_.Text(reinterpret_cast<const char*>(c->content));
      } else if (c->type == XML_ELEMENT_NODE) {
        Element(c, depth + 1);
      }
    }
  }

  std::string Take() { return out_.Take(); }

 private:
  void Element(xmlNode* node, int depth) {
    const std::string_view name = LocalName(node);
    if (name == "h") {
      int level = 1;
      const std::string l = Attribute(node, "outline-level");
      if (l.size() == 1 && l[0] >= '1' && l[0] <= '9') level = l[0] - '0';
      out_.ParagraphBreak();
      out_.LinePrefix(std::string(static_cast<size_t>(level), '#') + " ");
      Walk(node, depth);
      out_.ParagraphBreak();
    } else if (name == "p") {
      if (in_cell_ > 0) {
        if (!out_.LineEmpty()) out_.Text(" ");
        Walk(node, depth);
        return;
      }
      if (list_item_start_) {
        out_.LinePrefix(std::string(2 * static_cast<size_t>(std::max(0, lists_ - 1)), ' ') + "- ");
        list_item_start_ = false;
        Walk(node, depth);
        out_.LineBreak();
        return;
      }
      Walk(node, depth);
      if (lists_ > 0) {
        out_.LineBreak();
      } else {
        out_.ParagraphBreak();
      }
    } else if (name == "s") {
      out_.Text(" ");  // text:s c="N": runs of spaces collapse in readable text anyway
    } else if (name == "tab") {
      out_.Text(" ");
    } else if (name == "line-break") {
      out_.LineBreak();
    } else if (name == "list") {
      ++lists_;
      Walk(node, depth);
      --lists_;
      if (lists_ == 0) out_.ParagraphBreak();
    } else if (name == "list-item") {
      list_item_start_ = true;
      Walk(node, depth);
      list_item_start_ = false;
    } else if (name == "table-row") {
      out_.LineBreak();
      first_cell_ = true;
      Walk(node, depth);
      out_.LineBreak();
    } else if (name == "table-cell") {
      if (!first_cell_) out_.Separator(" | ");
      first_cell_ = false;
      ++in_cell_;
      Walk(node, depth);
      --in_cell_;
    } else if (name == "table") {
      out_.ParagraphBreak();
      Walk(node, depth);
      out_.ParagraphBreak();
    } else if (name == "frame") {
      if (title.empty() && Attribute(node, "class") == "title") title = CollapsedText(node);
      Walk(node, depth);
      out_.ParagraphBreak();
    } else if (name == "notes" || name == "tracked-changes" || name == "annotation" ||
               name == "sequence-decls" || name == "forms" || name == "note-citation" ||
               name == "title" || name == "desc") {
      // not part of what the reader sees (draw:frame titles/descriptions are alt text)
    } else {
      Walk(node, depth);
    }
  }

  TextBuilder out_;
  int in_cell_ = 0;
  int lists_ = 0;
  bool list_item_start_ = false;
  bool first_cell_ = true;
};

class OdfReader : public FormatReader {
 public:
  Status Read(const std::string& path, PageOutput& out) override {
    REEL_ASSIGN_OR_RETURN(std::unique_ptr<ZipArchive> zip,
                          ZipArchive::Open(path, out.options().limits, out.name()));
    REEL_ASSIGN_OR_RETURN(XmlDoc doc,
                          ReadMainXml(*zip, "content.xml", out.name(), "an OpenDocument file"));
    DocumentReport& report = out.report();
    if (std::optional<std::string> title = PackageTitle(*zip, "meta.xml")) {
      report.title = std::move(*title);
    }
    xmlNode* body = FindElement(xmlDocGetRootElement(doc.get()), "body");
    xmlNode* presentation = FindElement(body, "presentation");
    struct Page {
      std::string title, text;
    };
    std::vector<Page> pages;
    if (presentation) {
      for (xmlNode* slide = presentation->children; slide; slide = slide->next) {
        if (!IsElement(slide, "page")) continue;
        OdfWalker walker;
        walker.Walk(slide, 0);
        pages.push_back({walker.title, walker.Take()});
      }
    } else {
      OdfWalker walker;
      if (xmlNode* text = FindElement(body, "text")) walker.Walk(text, 0);
      pages.push_back({"", walker.Take()});
    }
    out.SetPageCount(static_cast<int>(pages.size()));
    for (size_t i = 0; i < pages.size(); ++i) {
      const int number = static_cast<int>(i) + 1;
      if (out.Done(number)) break;
      if (!out.Wanted(number)) continue;
      DocumentPage page;
      page.number = number;
      page.title = SafeUtf8(pages[i].title);
      page.text = NormalizePageText(pages[i].text);
      page.source = page.text.empty() ? TextSource::kNone : TextSource::kMarkup;
      REEL_RETURN_IF_ERROR(out.Emit(std::move(page)));
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<FormatReader> MakeOdfReader() { return std::make_unique<OdfReader>(); }

}  // namespace reel::pipeline::documents
