// PowerPoint decks (.pptx): one page per slide, in the order of ppt/presentation.xml's slide
// list; each shape's paragraphs as lines, tables as rows of cells joined by " | ", the title
// placeholder's text as the page title. Speaker notes are left out.
#include <map>

#include "base/utf8.h"
#include "pipeline/documents/internal/format_reader.h"
#include "pipeline/documents/internal/office_package.h"
#include "pipeline/documents/internal/text_builder.h"
#include "pipeline/documents/internal/text_util.h"
#include "pipeline/documents/internal/xml.h"
#include "pipeline/documents/internal/zip_archive.h"

namespace reel::pipeline::documents {
namespace {

class SlideWalker {
 public:
  std::string title;

  void Walk(xmlNode* node, int depth) {
    if (depth > kMaxXmlDepth) return;
    for (xmlNode* c = node->children; c; c = c->next) {
      if (c->type != XML_ELEMENT_NODE) continue;
      const std::string_view name = LocalName(c);
      if (name == "sp" && title.empty() && IsTitle(c)) {
        title = CollapsedText(FindElement(c, "txBody"));
      }
      if (name == "p") {
        Walk(c, depth + 1);
        if (in_cell_ == 0) {
          out_.LineBreak();
        } else {
          out_.Text(" ");
        }
      } else if (name == "t") {
        out_.Text(TextContent(c));
      } else if (name == "br") {
        out_.LineBreak();
      } else if (name == "tr") {
        out_.LineBreak();
        first_cell_ = true;
        Walk(c, depth + 1);
        out_.LineBreak();
      } else if (name == "tc") {
        if (!first_cell_) out_.Separator(" | ");
        first_cell_ = false;
        ++in_cell_;
        Walk(c, depth + 1);
        --in_cell_;
      } else if (name == "sp" || name == "graphicFrame") {
        Walk(c, depth + 1);
        out_.ParagraphBreak();
      } else if (name == "Fallback") {
        // the copy for older readers
      } else {
        Walk(c, depth + 1);
      }
    }
  }

  std::string Take() { return out_.Take(); }

 private:
  static bool IsTitle(xmlNode* shape) {
    xmlNode* placeholder = FindElement(FindElement(shape, "nvSpPr"), "ph");
    if (!placeholder) return false;
    const std::string type = Attribute(placeholder, "type");
    return type == "title" || type == "ctrTitle";
  }

  TextBuilder out_;
  int in_cell_ = 0;
  bool first_cell_ = true;
};

class PptxReader : public FormatReader {
 public:
  Status Read(const std::string& path, PageOutput& out) override {
    REEL_ASSIGN_OR_RETURN(std::unique_ptr<ZipArchive> zip,
                          ZipArchive::Open(path, out.options().limits, out.name()));
    REEL_ASSIGN_OR_RETURN(
        XmlDoc pres, ReadMainXml(*zip, "ppt/presentation.xml", out.name(), "a PowerPoint deck"));
    std::map<std::string, std::string> targets;  // relationship id -> member
    Result<std::string> rels = zip->Read("ppt/_rels/presentation.xml.rels");
    if (rels.ok()) {
      Result<XmlDoc> rels_doc = ParseXml(*rels, "ppt/_rels/presentation.xml.rels");
      if (rels_doc.ok()) {
        for (xmlNode* r = xmlDocGetRootElement(rels_doc->get())->children; r; r = r->next) {
          if (IsElement(r, "Relationship")) {
            targets[Attribute(r, "Id")] =
                ResolveMember("ppt/presentation.xml", Attribute(r, "Target"));
          }
        }
      }
    }
    std::vector<std::string> slides;
    if (xmlNode* list = FindElement(xmlDocGetRootElement(pres.get()), "sldIdLst")) {
      for (xmlNode* s = list->children; s; s = s->next) {
        if (!IsElement(s, "sldId")) continue;
        auto target = targets.find(NamespacedAttribute(s, "id"));
        if (target != targets.end() && !target->second.empty()) slides.push_back(target->second);
      }
    }
    out.SetPageCount(static_cast<int>(slides.size()));
    if (slides.empty()) out.report().notes.push_back("the deck has no slides");
    for (size_t i = 0; i < slides.size(); ++i) {
      const int number = static_cast<int>(i) + 1;
      if (out.Done(number)) break;
      if (!out.Wanted(number)) continue;
      DocumentPage page;
      page.number = number;
      Result<std::string> xml = zip->Read(slides[i]);
      Result<XmlDoc> doc =
          xml.ok() ? ParseXml(*xml, out.name() + ": " + slides[i]) : Result<XmlDoc>(xml.status());
      if (!doc.ok()) {
        page.error = doc.status();
      } else {
        SlideWalker walker;
        walker.Walk(xmlDocGetRootElement(doc->get()), 0);
        page.title = SafeUtf8(walker.title);
        page.text = NormalizePageText(walker.Take());
        page.source = page.text.empty() ? TextSource::kNone : TextSource::kMarkup;
      }
      REEL_RETURN_IF_ERROR(out.Emit(std::move(page)));
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<FormatReader> MakePptxReader() { return std::make_unique<PptxReader>(); }

}  // namespace reel::pipeline::documents
