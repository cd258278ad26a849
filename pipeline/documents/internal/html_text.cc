#include "pipeline/documents/internal/html_text.h"

#include <string_view>

#include "base/strings.h"
#include "pipeline/documents/internal/text_builder.h"
#include "pipeline/documents/internal/text_util.h"
#include "pipeline/documents/internal/xml.h"

namespace reel::pipeline::documents {
namespace {

bool OneOf(std::string_view name, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (name == n) return true;
  }
  return false;
}

bool Dropped(const xmlNode* node, const std::string& name) {
  if (OneOf(name, {"script", "style", "noscript", "template", "nav", "head", "iframe", "object",
                   "embed", "svg", "math", "button", "select", "input", "textarea", "canvas",
                   "audio", "video", "map"})) {
    return true;
  }
  const std::string role = Lower(Attribute(node, "role"));
  if (role == "navigation" || role == "banner" || role == "contentinfo" || role == "search") {
    return true;
  }
  if (xmlHasProp(const_cast<xmlNode*>(node), BAD_CAST "hidden")) return true;
  if (Lower(Attribute(node, "aria-hidden")) == "true") return true;
  const std::string style = Lower(Attribute(node, "style"));
  if (style.find("display:none") != std::string::npos ||
      style.find("display: none") != std::string::npos) {
    return true;
  }
  return false;
}

class Walker {
 public:
  explicit Walker(HtmlContent& content) : content_(content) {}

  void Walk(const xmlNode* node, int depth) {
    if (depth > kMaxXmlDepth) return;
    for (const xmlNode* c = node->children; c; c = c->next) {
      if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
        if (c->content) {
          if (pre_ > 0) {
            out_.Preformatted(reinterpret_cast<const char*>(c->content));
          } else {
            out_.Text(reinterpret_cast<const char*>(c->content));
          }
        }
      } else if (c->type == XML_ELEMENT_NODE) {
        Element(c, depth + 1);
      }
    }
  }

  std::string Take() { return out_.Take(); }

 private:
  void Element(const xmlNode* node, int depth) {
    const std::string name = Lower(LocalName(node));
    if (name == "title" && content_.title.empty()) {
      content_.title = CollapsedText(node);
      return;
    }
    if (Dropped(node, name)) return;
    if (name.size() == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6') {
      const std::string heading = CollapsedText(node);
      if (heading.empty()) return;
      if (content_.first_heading.empty()) content_.first_heading = heading;
      out_.ParagraphBreak();
      out_.LinePrefix(std::string(static_cast<size_t>(name[1] - '0'), '#') + " ");
      out_.Text(heading);
      out_.ParagraphBreak();
      return;
    }
    if (name == "br") {
      out_.LineBreak();
      return;
    }
    if (name == "hr") {
      out_.ParagraphBreak();
      return;
    }
    if (name == "img") {
      HtmlImage image{Attribute(node, "src"), Attribute(node, "alt")};
      if (!image.src.empty()) content_.images.push_back(image);
      return;
    }
    if (name == "ul" || name == "ol" || name == "menu") {
      lists_.push_back({name == "ol", 0});
      out_.LineBreak();
      Walk(node, depth);
      lists_.pop_back();
      if (lists_.empty()) out_.ParagraphBreak();
      return;
    }
    if (name == "li") {
      std::string prefix(lists_.empty() ? 0 : 2 * (lists_.size() - 1), ' ');
      if (!lists_.empty() && lists_.back().ordered) {
        prefix += std::to_string(++lists_.back().count) + ". ";
      } else {
        prefix += "- ";
      }
      out_.LinePrefix(prefix);
      Walk(node, depth);
      out_.LineBreak();
      return;
    }
    if (name == "tr") {
      out_.LineBreak();
      first_cell_ = true;
      Walk(node, depth);
      out_.LineBreak();
      return;
    }
    if (name == "td" || name == "th") {
      if (!first_cell_) out_.Separator(" | ");
      first_cell_ = false;
      Walk(node, depth);
      return;
    }
    if (name == "pre") {
      out_.ParagraphBreak();
      ++pre_;
      Walk(node, depth);
      --pre_;
      out_.ParagraphBreak();
      return;
    }
    const bool paragraph =
        OneOf(name, {"p", "blockquote", "table", "figure", "dl", "address", "section", "article",
                     "main", "header", "footer", "aside", "details", "fieldset", "caption"});
    const bool block = paragraph || OneOf(name, {"div", "dt", "dd", "figcaption", "summary",
                                                 "legend", "body", "html", "center", "option"});
    if (paragraph) out_.ParagraphBreak();
    if (block) out_.LineBreak();
    Walk(node, depth);
    if (paragraph) out_.ParagraphBreak();
    if (block) out_.LineBreak();
  }

  struct List {
    bool ordered;
    int count;
  };
  HtmlContent& content_;
  TextBuilder out_;
  std::vector<List> lists_;
  int pre_ = 0;
  bool first_cell_ = true;
};

}  // namespace

HtmlContent ExtractHtml(xmlDoc* doc) {
  HtmlContent content;
  if (!doc) return content;
  // The <title> lives in <head>, which the walk skips.
  if (xmlNode* root = xmlDocGetRootElement(doc)) {
    if (xmlNode* title = FindElement(root, "title")) content.title = CollapsedText(title);
  }
  Walker walker(content);
  walker.Walk(reinterpret_cast<xmlNode*>(doc), 0);
  content.text = NormalizePageText(walker.Take());
  return content;
}

bool IsLocalReference(const std::string& src) {
  if (src.empty() || src[0] == '#') return false;
  const std::string lower = Lower(src);
  if (lower.starts_with("file:")) return true;
  if (lower.starts_with("//")) return false;
  const size_t colon = lower.find(':');
  const size_t slash = lower.find('/');
  // A scheme (http:, data:, mailto:) comes before any slash.
  return colon == std::string::npos || (slash != std::string::npos && slash < colon);
}

}  // namespace reel::pipeline::documents
