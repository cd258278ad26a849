// A zip package (EPUB, DOCX, ODT, PPTX, ODP) read through libzip with hard limits: members are
// decompressed with a cap on each and on the total, whatever sizes the archive declares, so a
// zip bomb fails with kLimitExceeded. The only file that includes libzip is zip_archive.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/documents/document.h"

namespace reel::pipeline::documents {

class ZipArchive {
 public:
  // Errors: kNotFound, kCorruptData (not a zip, damaged central directory), kLimitExceeded
  // (more members than limits.max_entries). `name` prefixes messages.
  static Result<std::unique_ptr<ZipArchive>> Open(const std::string& path,
                                                  const DocumentLimits& limits,
                                                  const std::string& name);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::vector<std::string>& names() const { return names_; }
  bool Has(const std::string& member) const;
  // The member's bytes. Errors: kNotFound, kUnsupported (encrypted member), kCorruptData
  // (bad data or checksum), kLimitExceeded (past max_entry_bytes, or the archive's total past
  // max_archive_bytes).
  Result<std::string> Read(const std::string& member);

 private:
  struct Impl;
  ZipArchive(std::unique_ptr<Impl> impl, std::vector<std::string> names, DocumentLimits limits,
             std::string name);
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> names_;
  DocumentLimits limits_;
  std::string name_;
  int64_t total_read_ = 0;
};

// "a/b/../c.xhtml" -> "a/c.xhtml"; the folder of `base` joined with `relative` (percent escapes
// decoded, "#fragment" dropped), as zip member names are written. "" when it leaves the root.
std::string ResolveMember(const std::string& base, const std::string& relative);

}  // namespace reel::pipeline::documents
