// What every office package reader (DOCX, PPTX, ODT, ODP) opens the same way: the package's main
// XML member, which must be there, and the title in its metadata member, which may not be.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "pipeline/documents/internal/xml.h"
#include "pipeline/documents/internal/zip_archive.h"

namespace reel::pipeline::documents {

// `member` of the package, parsed. A package without it is not what its reader reads:
// kCorruptData "<name>: not <what> (no <member>)"; other read errors as ZipArchive::Read gives
// them; kCorruptData naming "<name>: <member>" when it does not parse.
Result<XmlDoc> ReadMainXml(ZipArchive& zip, const std::string& member, const std::string& name,
                           const std::string& what);

// The text of the first <title> element of the metadata `member` (docProps/core.xml, meta.xml),
// white space collapsed, valid UTF-8; nullopt when the member is absent, cannot be read or
// parsed, or has no title (a title is optional).
std::optional<std::string> PackageTitle(ZipArchive& zip, const std::string& member);

}  // namespace reel::pipeline::documents
