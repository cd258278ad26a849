#include <nlohmann/json.hpp>

#include <algorithm>

#include "jobs/json_output.h"
#include "jobs/stages/stages.h"
#include "pipeline/frame_sampler.h"

namespace reel::jobs {
namespace {

class VideoFramesStage final : public ItemStage {
 public:
  explicit VideoFramesStage(std::vector<const FrameConsumer*> consumers)
      : consumers_(std::move(consumers)) {}
  const char* name() const override { return "frames"; }
  bool AppliesTo(const ItemWork& work) const override {
    return work.input.kind == InputKind::kVideo;
  }
  Status Run(ItemWork& work) const override {
    pipeline::SampleOptions options;
    options.sampling = work.job->sampling;
    options.resize = work.job->resize.frames;
    options.limits = work.job->limits.media;
    std::vector<storage::FrameRecord>& frames = work.outputs.frames;
    auto sink = [&](pipeline::SampledFrame&& frame) -> Status {
      if (work.cancelled()) return Cancelled(work.input.path + ": stopped by request");
      storage::FrameRecord record;
      record.sample_index = frame.index;
      record.source_frame = frame.source_frame;
      record.pts_seconds = frame.pts_s;
      record.time_seconds = frame.time_s;
      record.width = frame.image.width;
      record.height = frame.image.height;
      for (const FrameConsumer* consumer : consumers_) {
        REEL_RETURN_IF_ERROR(consumer->Consume(work, frame.image, record));
      }
      frames.push_back(std::move(record));
      return Status::Ok();
    };
    REEL_ASSIGN_OR_RETURN(pipeline::SampleReport report,
                          pipeline::SampleVideo(work.input.path, options, sink));
    std::sort(frames.begin(), frames.end(),
              [](const auto& a, const auto& b) { return a.sample_index < b.sample_index; });
    nlohmann::json sample = {
        {"requested", report.requested},
        {"returned", report.returned},
        {"missing", report.missing.size()},
        {"decode_errors", report.decode_errors},
        {"partial", report.partial()},
        {"width", report.width},
        {"height", report.height},
        {"shape", report.shape == pipeline::FrameShape::kStorage ? "storage" : "display"}};
    if (!report.fps_timeline.empty()) sample["fps_timeline"] = report.fps_timeline;
    if (report.truncated) {
      sample["truncated"] = true;
      sample["truncation"] = report.truncation;
      sample["missing_bytes"] = report.missing_bytes;
      sample["missing_seconds"] = report.missing_s;
    }
    work.media_facts.emplace_back("sample", DumpJson(sample));
    if (report.duration_s > 0) {
      work.media_facts.emplace_back("duration_seconds", nlohmann::json(report.duration_s).dump());
    }
    for (const std::string& warning : report.warnings) {
      work.warnings.push_back(work.input.path + ": " + warning);
    }
    if (report.partial()) {
      work.warnings.push_back(work.input.path + ": partial sample: " + report.PartialReason());
    }
    return Status::Ok();
  }

 private:
  std::vector<const FrameConsumer*> consumers_;
};

}  // namespace

std::unique_ptr<ItemStage> MakeVideoFramesStage(std::vector<const FrameConsumer*> consumers) {
  return std::make_unique<VideoFramesStage>(std::move(consumers));
}

}  // namespace reel::jobs
