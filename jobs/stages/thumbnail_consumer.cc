#include "jobs/stages/frame_features.h"
#include "jobs/stages/stages.h"

namespace reel::jobs {
namespace {

class ThumbnailConsumer final : public FrameConsumer {
 public:
  const char* name() const override { return "thumbnail"; }
  Status Consume(ItemWork& work, const pipeline::Image& image,
                 storage::FrameRecord& record) const override {
    Result<std::string> jpeg = MakeThumbnailJpeg(image);
    if (!jpeg.ok()) {
      return jpeg.status().WithPrefix(work.input.path + ": frame " +
                                      std::to_string(record.sample_index) + " thumbnail");
    }
    record.thumbnail_jpeg = std::move(jpeg).value();
    record.phash = DifferenceHash(image);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<FrameConsumer> MakeThumbnailConsumer() {
  return std::make_unique<ThumbnailConsumer>();
}

}  // namespace reel::jobs
