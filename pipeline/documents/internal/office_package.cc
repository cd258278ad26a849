#include "pipeline/documents/internal/office_package.h"

#include "base/utf8.h"

namespace reel::pipeline::documents {

Result<XmlDoc> ReadMainXml(ZipArchive& zip, const std::string& member, const std::string& name,
                           const std::string& what) {
  Result<std::string> xml = zip.Read(member);
  if (!xml.ok()) {
    if (xml.status().code() == ErrorCode::kNotFound) {
      return CorruptData(name + ": not " + what + " (no " + member + ")");
    }
    return xml.status();
  }
  return ParseXml(*xml, name + ": " + member);
}

std::optional<std::string> PackageTitle(ZipArchive& zip, const std::string& member) {
  if (!zip.Has(member)) return std::nullopt;
  Result<std::string> meta = zip.Read(member);
  if (!meta.ok()) return std::nullopt;
  Result<XmlDoc> doc = ParseXml(*meta, member);
  if (!doc.ok()) return std::nullopt;
  xmlNode* title = FindElement(xmlDocGetRootElement(doc->get()), "title");
  if (!title) return std::nullopt;
  return SafeUtf8(CollapsedText(title));
}

}  // namespace reel::pipeline::documents
