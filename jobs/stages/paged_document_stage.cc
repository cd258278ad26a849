// Documents read by pipeline/documents: one segment per page, page pictures as frames.
#include <nlohmann/json.hpp>

#include "jobs/json_output.h"
#include "jobs/stages/stages.h"
#include "pipeline/documents/document.h"

namespace reel::jobs {
namespace {

class PagedDocumentStage final : public ItemStage {
 public:
  explicit PagedDocumentStage(std::vector<const FrameConsumer*> consumers)
      : consumers_(std::move(consumers)) {}
  const char* name() const override { return "pages"; }
  bool AppliesTo(const ItemWork& work) const override {
    return work.input.kind == InputKind::kDocument && IsPagedDocument(work.input.path);
  }

  Status Run(ItemWork& work) const override {
    const std::string& path = work.input.path;
    const pipeline::DocumentOptions options = DocumentOptionsFor(*work.job);
    const pipeline::DocumentFormat format = pipeline::DetectDocumentFormat(path);
    const char* format_name = pipeline::DocumentFormatName(format);
    nlohmann::json pages = nlohmann::json::array();
    int64_t characters = 0;
    auto sink = [&](pipeline::DocumentPage&& page) -> Status {
      if (work.cancelled()) return Cancelled(path + ": stopped by request");
      const std::string where = path + ": page " + std::to_string(page.number);
      nlohmann::json fact = {{"page", page.number},
                             {"chars", page.text.size()},
                             {"source", pipeline::TextSourceName(page.source)}};
      if (!page.label.empty()) fact["label"] = page.label;
      if (!page.title.empty()) fact["title"] = page.title;
      if (page.source == pipeline::TextSource::kOcr) fact["ocr_confidence"] = page.ocr_confidence;
      if (page.width_pt > 0) {
        fact["width_pt"] = page.width_pt;
        fact["height_pt"] = page.height_pt;
      }
      if (!page.error.ok()) {
        // The page fails, not the document: what it has is kept.
        fact["error"] = page.error.message();
        work.warnings.push_back(page.error.message().find(path) != std::string::npos
                                    ? page.error.message()
                                    : where + ": " + page.error.message());
      }
      if (!page.text.empty()) {
        storage::SegmentRecord segment;
        segment.source = DocumentPageSource(format_name, page.source == pipeline::TextSource::kOcr);
        segment.start_seconds = page.number;  // the page number: documents have no clock
        segment.end_seconds = page.number;
        characters += static_cast<int64_t>(page.text.size());
        segment.text = std::move(page.text);
        work.outputs.segments.push_back(std::move(segment));
      }
      if (!page.image.empty()) {
        storage::FrameRecord record;
        record.sample_index = page.number - 1;  // the page index
        record.time_seconds = page.number;
        record.width = page.image.width;
        record.height = page.image.height;
        for (const FrameConsumer* consumer : consumers_) {
          Status consumed = consumer->Consume(work, page.image, record);
          if (!consumed.ok()) return consumed.WithPrefix(where);
        }
        fact["picture"] = std::to_string(record.width) + "x" + std::to_string(record.height);
        work.outputs.frames.push_back(std::move(record));
      }
      pages.push_back(std::move(fact));
      return Status::Ok();
    };
    Result<pipeline::DocumentReport> report = pipeline::ReadDocument(path, options, sink);
    if (!report.ok()) return report.status();
    for (const std::string& note : report->notes) work.warnings.push_back(path + ": " + note);
    nlohmann::json document = {{"format", pipeline::DocumentFormatName(report->format)},
                               {"page_count", report->page_count},
                               {"pages_read", report->pages_read},
                               {"pages_failed", report->pages_failed},
                               {"pages_ocr", report->pages_ocr},
                               {"partial", report->partial()},
                               // documents.pages images: contexts send pictures, not text
                               {"send_text", work.job->documents.pages != DocumentPages::kImages}};
    if (!report->title.empty()) document["title"] = report->title;
    if (!report->notes.empty()) document["notes"] = report->notes;
    work.media_facts.emplace_back("document", DumpJson(document));
    work.media_facts.emplace_back("pages", DumpJson(pages));
    work.media_facts.emplace_back("characters", std::to_string(characters));
    return Status::Ok();
  }

 private:
  std::vector<const FrameConsumer*> consumers_;
};

}  // namespace

std::unique_ptr<ItemStage> MakePagedDocumentStage(std::vector<const FrameConsumer*> consumers) {
  return std::make_unique<PagedDocumentStage>(std::move(consumers));
}

}  // namespace reel::jobs
