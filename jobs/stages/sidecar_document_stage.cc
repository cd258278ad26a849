// A video's side-car documents (a talk's slide deck beside the recording): their pages' text.
#include <filesystem>

#include "base/utf8.h"
#include "jobs/stages/stages.h"
#include "pipeline/documents/document.h"

namespace reel::jobs {
namespace {

class SidecarDocumentStage final : public ItemStage {
 public:
  const char* name() const override { return "slides"; }
  bool AppliesTo(const ItemWork& work) const override {
    return work.input.kind == InputKind::kVideo;
  }
  bool reads_text_alone() const override { return true; }

  Status Run(ItemWork& work) const override {
    const std::string& path = work.input.path;
    pipeline::DocumentOptions options = DocumentOptionsFor(*work.job);
    options.images = false;  // the video's frames are its pictures; the deck gives its text
    for (const std::string& sidecar : FindSidecarDocuments(path)) {
      if (work.cancelled()) return Cancelled(path + ": stopped by request");
      const std::string source = std::string(kSlidesSourcePrefix) +
                                 DisplayPath(std::filesystem::path(sidecar).filename().string());
      std::vector<storage::SegmentRecord> pages;
      auto sink = [&](pipeline::DocumentPage&& page) -> Status {
        if (work.cancelled()) return Cancelled(path + ": stopped by request");
        if (!page.error.ok()) {
          work.warnings.push_back(sidecar + ": page " + std::to_string(page.number) + ": " +
                                  page.error.message());
        }
        if (page.text.empty()) return Status::Ok();
        storage::SegmentRecord segment;
        segment.source = source;
        segment.start_seconds = page.number;  // the page number, not a time in the video
        segment.end_seconds = page.number;
        segment.text = std::move(page.text);
        pages.push_back(std::move(segment));
        return Status::Ok();
      };
      Result<pipeline::DocumentReport> report = pipeline::ReadDocument(sidecar, options, sink);
      if (!report.ok()) {
        // A broken deck is a warning: the video is still read.
        work.warnings.push_back(path + ": side-car document skipped: " + report.status().message());
        continue;
      }
      for (const std::string& note : report->notes) work.warnings.push_back(sidecar + ": " + note);
      for (storage::SegmentRecord& s : pages) work.outputs.segments.push_back(std::move(s));
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<ItemStage> MakeSidecarDocumentStage() {
  return std::make_unique<SidecarDocumentStage>();
}

}  // namespace reel::jobs
