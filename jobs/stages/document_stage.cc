#include <string>

#include "base/file_util.h"
#include "base/text_encoding.h"
#include "jobs/stages/document_chunks.h"
#include "jobs/stages/stages.h"

namespace reel::jobs {
namespace {

class DocumentStage final : public ItemStage {
 public:
  const char* name() const override { return "document"; }
  bool AppliesTo(const ItemWork& work) const override {
    return work.input.kind == InputKind::kDocument && !IsPagedDocument(work.input.path);
  }
  Status Run(ItemWork& work) const override {
    const std::string& path = work.input.path;
    Result<std::string> bytes =
        ReadFileToString(path, static_cast<uint64_t>(work.job->limits.max_file_bytes));
    if (!bytes.ok()) return bytes.status();
    // The encoding first: UTF-16 text is full of NUL bytes that are not there once decoded.
    Result<DecodedText> decoded =
        DecodeText(*bytes, {.fallback_encoding = work.job->text.fallback_encoding});
    if (!decoded.ok()) return decoded.status().WithPrefix(path);
    bytes->clear();
    const std::string& text = decoded->text;
    if (text.find('\0') != std::string::npos) {
      return CorruptData(path + ": not a text document (it contains NUL bytes)");
    }
    ReportTextEncoding(work, path, "document", decoded->info);
    std::vector<std::string> chunks = SplitDocument(text);
    for (size_t i = 0; i < chunks.size(); ++i) {
      storage::SegmentRecord segment;
      segment.source = "document";
      segment.start_seconds = static_cast<double>(i);
      segment.end_seconds = static_cast<double>(i);
      segment.text = std::move(chunks[i]);
      work.outputs.segments.push_back(std::move(segment));
    }
    work.media_facts.emplace_back("characters", std::to_string(text.size()));
    work.media_facts.emplace_back("chunks", std::to_string(chunks.size()));
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<ItemStage> MakeDocumentStage() { return std::make_unique<DocumentStage>(); }

}  // namespace reel::jobs
