#include "pipeline/documents/internal/xml.h"

#include <limits>

namespace reel::pipeline::documents {
namespace {

// libxml2 reports errors through a global callback; silenced for the library's lifetime.
void Silent(void*, const char*, ...) {}
void SilentStructured(void*, xmlError*) {}

void Quiet() {
  xmlSetGenericErrorFunc(nullptr, Silent);
  xmlSetStructuredErrorFunc(nullptr, SilentStructured);
}

}  // namespace

Result<XmlDoc> ParseXml(std::string_view bytes, const std::string& name) {
  Quiet();
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return LimitExceeded(name + ": too large to parse");
  }
  XmlDoc doc(xmlReadMemory(bytes.data(), static_cast<int>(bytes.size()), nullptr, nullptr,
                           XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                               XML_PARSE_NOCDATA | XML_PARSE_RECOVER));
  if (!doc || !xmlDocGetRootElement(doc.get())) {
    const xmlError* e = xmlGetLastError();
    std::string why = e && e->message ? e->message : "not well-formed";
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return CorruptData(name + ": not readable XML (" + why + ")");
  }
  return doc;
}

Result<XmlDoc> ParseHtml(std::string_view bytes, const std::string& name) {
  Quiet();
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return LimitExceeded(name + ": too large to parse");
  }
  XmlDoc doc(htmlReadMemory(bytes.data(), static_cast<int>(bytes.size()), nullptr, nullptr,
                            HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                HTML_PARSE_RECOVER | HTML_PARSE_NOIMPLIED));
  if (!doc) return CorruptData(name + ": not readable HTML");
  return doc;
}

std::string_view LocalName(const xmlNode* node) {
  if (!node || node->type != XML_ELEMENT_NODE || !node->name) return {};
  std::string_view name(reinterpret_cast<const char*>(node->name));
  const size_t colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

bool IsElement(const xmlNode* node, std::string_view local_name) {
  return LocalName(node) == local_name;
}

namespace {
std::string FindAttribute(const xmlNode* node, std::string_view local_name, bool namespaced) {
  if (!node || node->type != XML_ELEMENT_NODE) return {};
  for (const xmlAttr* a = node->properties; a; a = a->next) {
    if (!a->name) continue;
    if (namespaced && a->ns == nullptr) continue;
    std::string_view name(reinterpret_cast<const char*>(a->name));
    const size_t colon = name.rfind(':');
    if (colon != std::string_view::npos) name = name.substr(colon + 1);
    if (name != local_name) continue;
    std::string value;
    for (const xmlNode* c = a->children; c; c = c->next) {
      if (c->content) value += reinterpret_cast<const char*>(c->content);
    }
    return value;
  }
  return {};
}
}  // namespace

std::string Attribute(const xmlNode* node, std::string_view local_name) {
  return FindAttribute(node, local_name, false);
}

std::string NamespacedAttribute(const xmlNode* node, std::string_view local_name) {
  return FindAttribute(node, local_name, true);
}

xmlNode* FindElement(xmlNode* node, std::string_view local_name) {
  if (!node) return nullptr;
  for (xmlNode* c = node->children; c; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    if (LocalName(c) == local_name) return c;
    if (xmlNode* found = FindElement(c, local_name)) return found;
  }
  return nullptr;
}

namespace {
void AppendText(const xmlNode* node, std::string& out, int depth) {
  if (depth > 512) return;
  for (const xmlNode* c = node->children; c; c = c->next) {
    if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content) {
      out += reinterpret_cast<const char*>(c->content);
    } else if (c->type == XML_ELEMENT_NODE) {
      AppendText(c, out, depth + 1);
    }
  }
}
}  // namespace

std::string TextContent(const xmlNode* node) {
  std::string out;
  if (node) AppendText(node, out, 0);
  return out;
}

std::string CollapsedText(const xmlNode* node) {
  const std::string raw = TextContent(node);
  std::string out;
  bool space = false;
  for (char c : raw) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f') {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

}  // namespace reel::pipeline::documents
