#include "jobs/frame_spool.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <string_view>

#include "base/file_util.h"
#include "pipeline/frame_sampler.h"
#include "pipeline/image_codec.h"
#include "pipeline/smart_resize.h"

namespace reel::jobs {
namespace {

namespace fs = std::filesystem;

// Encodes `image` at width x height and writes it (atomically: a killed run leaves no torn file).
Status WriteFrame(const pipeline::Image& image, int width, int height, int quality,
                  const std::string& path) {
  const pipeline::Image* source = &image;
  pipeline::Image resized;
  if (image.width != width || image.height != height) {
    REEL_ASSIGN_OR_RETURN(resized, pipeline::ResizeImage(image, width, height));
    source = &resized;
  }
  REEL_ASSIGN_OR_RETURN(std::vector<uint8_t> jpeg, pipeline::EncodeJpeg(*source, quality));
  return WriteFileAtomically(
      path, std::string_view(reinterpret_cast<const char*>(jpeg.data()), jpeg.size()));
}

}  // namespace

std::string FrameSpool::RootFor(const std::string& database) { return database + ".spool"; }

std::string FrameSpool::ItemDir(int64_t item_id) const {
  return (fs::path(root_) / ("item-" + std::to_string(item_id))).string();
}

std::string FrameSpool::FramePath(int64_t item_id, const llm::ContextInput& input, size_t frame,
                                  int width, int height) const {
  const int64_t sample = frame < input.frames.size() ? input.frames[frame].sample_index : -1;
  return (fs::path(ItemDir(item_id)) / (std::to_string(sample) + "_" + std::to_string(width) + "x" +
                                        std::to_string(height) + ".jpg"))
      .string();
}

Status FrameSpool::Prepare(const JobSpec& job, int64_t item_id, const std::string& media_path,
                           const llm::ContextInput& input, const std::vector<size_t>& frames,
                           int width, int height) const {
  // sample index -> (input frame, file), for the frames not on disk yet.
  std::map<int64_t, std::pair<size_t, std::string>> wanted;
  for (size_t f : frames) {
    if (f >= input.frames.size()) return Internal("frame " + std::to_string(f) + " out of range");
    std::string path = FramePath(item_id, input, f, width, height);
    std::error_code ec;
    if (fs::exists(path, ec)) continue;
    wanted.emplace(input.frames[f].sample_index, std::make_pair(f, std::move(path)));
  }
  if (wanted.empty()) return Status::Ok();
  REEL_RETURN_IF_ERROR(MakeDirectories(ItemDir(item_id)));
  const int quality = job.model.jpeg_quality;

  if (input.kind == llm::ContextItemKind::kImage) {
    REEL_ASSIGN_OR_RETURN(pipeline::Image image,
                          pipeline::ReadImageFile(media_path, job.limits.media.max_pixels));
    pipeline::ResizeOptions resize = job.resize.frames;
    resize.smart.max_pixels = job.resize.image_max_pixels;
    if (resize.smart.min_pixels > resize.smart.max_pixels) {
      resize.smart.min_pixels = resize.smart.max_pixels;
    }
    Result<pipeline::Size> target =
        pipeline::TargetSize(pipeline::Size{image.width, image.height}, resize);
    if (!target.ok()) return target.status().WithPrefix(media_path);
    if (target->width != image.width || target->height != image.height) {
      REEL_ASSIGN_OR_RETURN(image, pipeline::ResizeImage(image, target->width, target->height));
    }
    for (const auto& [sample, frame] : wanted) {
      Status s = WriteFrame(image, width, height, quality, frame.second);
      if (!s.ok()) return s.WithPrefix(media_path);
    }
    return Status::Ok();
  }

  pipeline::SampleOptions options;
  options.sampling = job.sampling;
  options.resize = job.resize.frames;
  options.limits = job.limits.media;
  size_t written = 0;
  auto sink = [&](pipeline::SampledFrame&& frame) -> Status {
    auto it = wanted.find(frame.index);
    if (it == wanted.end()) return Status::Ok();
    const llm::ContextFrame& stored = input.frames[it->second.first];
    if (std::abs(stored.time_s - frame.time_s) > 1e-6) {
      return CorruptData(media_path + ": frame " + std::to_string(frame.index) + " is at " +
                         std::to_string(frame.time_s) + " s now, " + std::to_string(stored.time_s) +
                         " s when its frames were stored: the file changed; run the job "
                         "again to redo the item");
    }
    REEL_RETURN_IF_ERROR(WriteFrame(frame.image, width, height, quality, it->second.second));
    ++written;
    return Status::Ok();
  };
  Result<pipeline::SampleReport> report = pipeline::SampleVideo(media_path, options, sink);
  if (!report.ok()) return report.status();
  if (written < wanted.size()) {
    return CorruptData(media_path + ": " + std::to_string(wanted.size() - written) +
                       " of the frames the model needs could not be decoded again");
  }
  return Status::Ok();
}

void FrameSpool::RemoveItem(int64_t item_id) const {
  std::error_code ec;
  fs::remove_all(ItemDir(item_id), ec);
}

void FrameSpool::RemoveAll() const {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

}  // namespace reel::jobs
