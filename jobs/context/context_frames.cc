#include "jobs/context/context_frames.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string_view>

#include "base/file_util.h"
#include "base/utf8.h"
#include "pipeline/frame_sampler.h"
#include "pipeline/image_codec.h"
#include "pipeline/smart_resize.h"
#include "storage/sha256.h"

namespace reel::jobs {
namespace {

constexpr int kJpegQuality = 90;

std::string FrameKey(const std::string& source, int64_t sample_index, int width, int height) {
  return storage::Sha256Hex(source + "\nsample=" + std::to_string(sample_index) +
                            "\nsize=" + std::to_string(width) + "x" + std::to_string(height) +
                            "\nquality=" + std::to_string(kJpegQuality));
}

std::string FramePath(const std::string& dir, const std::string& key) {
  return (std::filesystem::path(dir) / key.substr(0, 2) / (key + ".jpg")).string();
}

Status WriteJpeg(const std::string& path, pipeline::Image image, int width, int height,
                 const std::string& name) {
  if (image.width != width || image.height != height) {
    Result<pipeline::Image> resized = pipeline::ResizeImage(image, width, height);
    if (!resized.ok()) return resized.status().WithPrefix(name);
    image = std::move(resized).value();
  }
  Result<std::vector<uint8_t>> jpeg = pipeline::EncodeJpeg(image, kJpegQuality);
  if (!jpeg.ok()) return jpeg.status().WithPrefix(name);
  REEL_RETURN_IF_ERROR(MakeDirectories(std::filesystem::path(path).parent_path().string()));
  return WriteFileAtomically(
      path, std::string_view(reinterpret_cast<const char*>(jpeg->data()), jpeg->size()));
}

}  // namespace

std::string FrameSource(const storage::ItemRecord& item) {
  std::string source = "reel-frame 1\ncontent=" + item.content_hash.value_or("") +
                       "\nsettings=" + item.settings_hash;
  if (!item.content_hash) {  // unknown content: the file's identity stands in
    source += "\npath=" + item.path + "\nsize=" + std::to_string(item.size_bytes) +
              "\nmtime=" + std::to_string(item.mtime_ns.value_or(-1));
  }
  return source;
}

std::vector<std::string> ManifestFrameFiles(const std::string& cache_dir,
                                            const std::string& frame_source,
                                            const std::string& manifest_json) {
  std::vector<std::string> files;
  const nlohmann::json manifest = nlohmann::json::parse(manifest_json, nullptr, false);
  if (!manifest.is_object() || !manifest.contains("parts") || !manifest["parts"].is_array()) {
    return files;
  }
  for (const nlohmann::json& part : manifest["parts"]) {
    if (!part.is_object() || !part.contains("frames") || !part["frames"].is_array()) continue;
    const std::string type = part.value("type", "");
    if (type != "image" && type != "video") continue;  // video_file: the server reads the file
    int width = 0, height = 0;
    if (std::sscanf(part.value("size", "").c_str(), "%dx%d", &width, &height) != 2) continue;
    for (const nlohmann::json& frame : part["frames"]) {
      if (!frame.is_object() || !frame.contains("sample_index")) continue;
      if (!frame["sample_index"].is_number_integer()) continue;
      files.push_back(FramePath(
          cache_dir, FrameKey(frame_source, frame["sample_index"].get<int64_t>(), width, height)));
    }
  }
  return files;
}

std::string FrameCacheDir(const JobSpec& job, const std::string& database) {
  if (!job.storage.frame_cache.empty()) {
    return ResolveJobPath(job.base_dir, job.storage.frame_cache);
  }
  if (!database.empty()) return database + ".frames";
  return ResolveJobPath(job.base_dir, job.storage.database) + ".frames";
}

Result<std::vector<std::string>> ContextFrameFiles(
    const JobSpec& job, const storage::ItemRecord& item, const llm::ContextInput& input,
    const llm::Context& context, const std::vector<size_t>& frames, const std::string& cache_dir,
    ContextFramesReport* report) {
  ContextFramesReport local;
  ContextFramesReport& r = report != nullptr ? *report : local;
  const int width = context.frame_width, height = context.frame_height;
  // Paged documents: each page at its own size (Context::frame_sizes).
  auto size_of = [&](size_t f) {
    if (input.paged && f < context.frame_sizes.size() && context.frame_sizes[f].first > 0) {
      return context.frame_sizes[f];
    }
    return std::make_pair(width, height);
  };
  std::vector<std::string> paths(input.frames.size());
  std::map<int64_t, size_t> missing;  // sample index -> input frame
  for (size_t f : frames) {
    if (f >= input.frames.size()) {
      return InvalidArgument(item.path + ": frame " + std::to_string(f) + " is not in the item");
    }
    if (!paths[f].empty()) continue;
    auto [w, h] = size_of(f);
    paths[f] =
        FramePath(cache_dir, FrameKey(FrameSource(item), input.frames[f].sample_index, w, h));
    std::error_code ec;
    if (std::filesystem::is_regular_file(paths[f], ec)) {
      ++r.cached;
    } else {
      missing[input.frames[f].sample_index] = f;
    }
  }
  if (missing.empty()) return paths;
  const std::string file = UnescapeInvalidUtf8(item.path);  // stored as DisplayPath

  if (input.paged) {
    // The pages are rendered again as the item was read (the same settings, the same size),
    // only the ones needed; a page that no longer has the stored size means the file changed.
    pipeline::DocumentOptions options = DocumentOptionsFor(job);
    options.text = false;
    options.ocr.enabled = false;
    options.pages.first = static_cast<int>(missing.begin()->first) + 1;
    options.pages.last = static_cast<int>(missing.rbegin()->first) + 1;
    Status failure;
    auto sink = [&](pipeline::DocumentPage&& page) -> Status {
      auto it = missing.find(page.number - 1);
      if (it == missing.end()) return Status::Ok();
      const size_t f = it->second;
      if (!page.error.ok() || page.image.empty()) {
        failure = page.error.ok() ? CorruptData(item.path + ": page " +
                                                std::to_string(page.number) + " has no picture")
                                  : page.error;
        return failure;
      }
      if (page.image.width != input.frames[f].width ||
          page.image.height != input.frames[f].height) {
        failure =
            CorruptData(item.path + ": page " + std::to_string(page.number) + " is now " +
                        std::to_string(page.image.width) + "x" + std::to_string(page.image.height) +
                        ", it was stored at " + std::to_string(input.frames[f].width) + "x" +
                        std::to_string(input.frames[f].height) +
                        ": the file changed since it was read (run the job again)");
        return failure;
      }
      auto [w, h] = size_of(f);
      Status written = WriteJpeg(paths[f], std::move(page.image), w, h, item.path);
      if (!written.ok()) {
        failure = written;
        return failure;
      }
      ++r.decoded;
      missing.erase(it);
      return Status::Ok();
    };
    r.passes = 1;
    Result<pipeline::DocumentReport> read = pipeline::ReadDocument(file, options, sink);
    if (!failure.ok()) return failure;
    if (!read.ok()) return read.status();
    if (!missing.empty()) {
      return CorruptData(item.path + ": " + std::to_string(missing.size()) +
                         " page pictures of the context could not be rendered again (first: "
                         "page " +
                         std::to_string(missing.begin()->first + 1) + ")");
    }
    return paths;
  }

  if (input.kind == llm::ContextItemKind::kImage) {
    REEL_ASSIGN_OR_RETURN(pipeline::Image image,
                          pipeline::ReadImageFile(file, job.limits.media.max_pixels));
    r.passes = 1;
    for (const auto& [sample, f] : missing) {
      REEL_RETURN_IF_ERROR(WriteJpeg(paths[f], image, width, height, item.path));
      ++r.decoded;
    }
    return paths;
  }

  // One pass over the video with the settings the item was sampled with (the same sample),
  // at the context's frame size; it stops after the last frame needed.
  pipeline::SampleOptions options;
  options.sampling = job.sampling;
  options.resize = job.resize.frames;
  options.limits = job.limits.media;
  if (context.frame_max_pixels > 0 && options.resize.mode == pipeline::ResizeMode::kSmart) {
    options.resize.smart.max_pixels = context.frame_max_pixels;
    options.resize.smart.min_pixels =
        std::min(options.resize.smart.min_pixels, context.frame_max_pixels);
  }
  Status failure;
  bool finished = false;
  auto sink = [&](pipeline::SampledFrame&& frame) -> Status {
    auto it = missing.find(frame.index);
    if (it == missing.end()) return Status::Ok();
    const size_t f = it->second;
    if (std::abs(frame.time_s - input.frames[f].time_s) > 1e-3) {
      failure = CorruptData(item.path + ": frame " + std::to_string(frame.index) + " is now at " +
                            std::to_string(frame.time_s) + " s, it was stored at " +
                            std::to_string(input.frames[f].time_s) +
                            " s: the file changed since it was sampled (run the job again)");
      return failure;
    }
    Status written = WriteJpeg(paths[f], std::move(frame.image), width, height, item.path);
    if (!written.ok()) {
      failure = written;
      return failure;
    }
    ++r.decoded;
    missing.erase(it);
    if (missing.empty()) {
      finished = true;
      return Cancelled("all frames written");  // stops the pass early
    }
    return Status::Ok();
  };
  r.passes = 1;
  Result<pipeline::SampleReport> sampled = pipeline::SampleVideo(file, options, sink);
  if (!failure.ok()) return failure;
  if (!sampled.ok() && !finished) return sampled.status();
  if (!missing.empty()) {
    return CorruptData(item.path + ": " + std::to_string(missing.size()) +
                       " frames of the context could not be decoded again (first: sample " +
                       std::to_string(missing.begin()->first) + ")");
  }
  return paths;
}

}  // namespace reel::jobs
