// The one place libxml2 is included: owning handles, parsing with the safe options, and small
// tree helpers the HTML, EPUB and office readers share.
//
// Parsing never loads external entities or DTDs, never substitutes entities (a "billion laughs"
// file keeps its references unexpanded) and never touches the network; libxml2's own limits on
// depth and text size stay on (no XML_PARSE_HUGE).
#pragma once

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace reel::pipeline::documents {

struct XmlDocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using XmlDoc = std::unique_ptr<xmlDoc, XmlDocFree>;

// How deep the readers' tree walks go: elements nested deeper are skipped (their text is lost),
// so a crafted file cannot exhaust the stack.
inline constexpr int kMaxXmlDepth = 256;

// An XML document (office XML, OPF, container.xml). Errors: kCorruptData naming `name`.
Result<XmlDoc> ParseXml(std::string_view bytes, const std::string& name);
// An HTML or XHTML page, repaired as browsers do. Errors: kCorruptData when nothing parses.
Result<XmlDoc> ParseHtml(std::string_view bytes, const std::string& name);

// The element's name without its namespace prefix ("w:p" -> "p"); "" for non-elements.
std::string_view LocalName(const xmlNode* node);
bool IsElement(const xmlNode* node, std::string_view local_name);
// An attribute by local name, whatever its namespace; "" when absent.
std::string Attribute(const xmlNode* node, std::string_view local_name);
// An attribute by local name that has a namespace ("r:id" rather than "id"); "" when absent.
std::string NamespacedAttribute(const xmlNode* node, std::string_view local_name);
// The first child element (depth first, `node` excluded) with this local name, or nullptr.
xmlNode* FindElement(xmlNode* node, std::string_view local_name);
// All text below `node`, concatenated as it stands.
std::string TextContent(const xmlNode* node);
// Text below `node` with runs of white space made one space, trimmed.
std::string CollapsedText(const xmlNode* node);

}  // namespace reel::pipeline::documents
