#include <nlohmann/json.hpp>

#include "jobs/stages/stages.h"
#include "pipeline/image_codec.h"
#include "pipeline/smart_resize.h"

namespace reel::jobs {
namespace {

class ImageStage final : public ItemStage {
 public:
  explicit ImageStage(std::vector<const FrameConsumer*> consumers)
      : consumers_(std::move(consumers)) {}
  const char* name() const override { return "image"; }
  bool AppliesTo(const ItemWork& work) const override {
    return work.input.kind == InputKind::kImage;
  }
  Status Run(ItemWork& work) const override {
    const JobSpec& job = *work.job;
    REEL_ASSIGN_OR_RETURN(pipeline::Image image,
                          pipeline::ReadImageFile(work.input.path, job.limits.media.max_pixels));
    pipeline::ResizeOptions resize = job.resize.frames;
    resize.smart.max_pixels = job.resize.image_max_pixels;
    if (resize.smart.min_pixels > resize.smart.max_pixels) {
      resize.smart.min_pixels = resize.smart.max_pixels;
    }
    Result<pipeline::Size> target =
        pipeline::TargetSize(pipeline::Size{image.width, image.height}, resize);
    if (!target.ok()) return target.status().WithPrefix(work.input.path);
    const int source_width = image.width, source_height = image.height;
    if (target->width != image.width || target->height != image.height) {
      Result<pipeline::Image> resized = pipeline::ResizeImage(image, target->width, target->height);
      if (!resized.ok()) return resized.status().WithPrefix(work.input.path);
      image = std::move(resized).value();
    }
    storage::FrameRecord record;
    record.sample_index = 0;
    record.source_frame = 0;
    record.time_seconds = 0;
    record.width = image.width;
    record.height = image.height;
    for (const FrameConsumer* consumer : consumers_) {
      REEL_RETURN_IF_ERROR(consumer->Consume(work, image, record));
    }
    work.outputs.frames.push_back(std::move(record));
    work.media_facts.emplace_back(
        "image", nlohmann::json{{"width", source_width}, {"height", source_height}}.dump());
    return Status::Ok();
  }

 private:
  std::vector<const FrameConsumer*> consumers_;
};

}  // namespace

std::unique_ptr<ItemStage> MakeImageStage(std::vector<const FrameConsumer*> consumers) {
  return std::make_unique<ImageStage>(std::move(consumers));
}

}  // namespace reel::jobs
