#include "jobs/context/context_frames.h"

#include <nlohmann/json.hpp>

#include <algorithm>
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
      // A context over several files: the frame's file names it (group_context.h).
      std::string source = frame_source;
      if (frame.contains("source")) {
        const nlohmann::json* of = nullptr;
        if (manifest.contains("sources") && manifest["sources"].is_array() &&
            frame["source"].is_number_unsigned() &&
            frame["source"].get<size_t>() < manifest["sources"].size()) {
          of = &manifest["sources"][frame["source"].get<size_t>()];
        }
        if (of == nullptr || !of->is_object() || !of->contains("frame_source") ||
            !(*of)["frame_source"].is_string()) {
          continue;
        }
        source = (*of)["frame_source"].get<std::string>();
      }
      files.push_back(FramePath(
          cache_dir, FrameKey(source, frame["sample_index"].get<int64_t>(), width, height)));
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

namespace {

// The frames of one file (`path` as stored, its frames named by `frame_source`) at one size, or
// for a paged document each page at its own size (`page_sizes`, Context::frame_sizes).
Result<std::vector<std::string>> FrameFilesOf(
    const JobSpec& job, const std::string& path, const std::string& frame_source,
    const llm::ContextInput& input, int width, int height, int64_t max_pixels,
    const std::vector<std::pair<int, int>>& page_sizes, const std::vector<size_t>& frames,
    const std::string& cache_dir, ContextFramesReport& r) {
  auto size_of = [&](size_t f) {
    if (input.paged && f < page_sizes.size() && page_sizes[f].first > 0) return page_sizes[f];
    return std::make_pair(width, height);
  };
  std::vector<std::string> paths(input.frames.size());
  std::map<int64_t, size_t> missing;  // sample index -> input frame
  for (size_t f : frames) {
    if (f >= input.frames.size()) {
      return InvalidArgument(path + ": frame " + std::to_string(f) + " is not in the item");
    }
    if (!paths[f].empty()) continue;
    auto [w, h] = size_of(f);
    paths[f] = FramePath(cache_dir, FrameKey(frame_source, input.frames[f].sample_index, w, h));
    std::error_code ec;
    if (std::filesystem::is_regular_file(paths[f], ec)) {
      ++r.cached;
    } else {
      missing[input.frames[f].sample_index] = f;
    }
  }
  if (missing.empty()) return paths;
  const std::string file = UnescapeInvalidUtf8(path);  // stored as DisplayPath

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
        failure =
            page.error.ok()
                ? CorruptData(path + ": page " + std::to_string(page.number) + " has no picture")
                : page.error;
        return failure;
      }
      if (page.image.width != input.frames[f].width ||
          page.image.height != input.frames[f].height) {
        failure =
            CorruptData(path + ": page " + std::to_string(page.number) + " is now " +
                        std::to_string(page.image.width) + "x" + std::to_string(page.image.height) +
                        ", it was stored at " + std::to_string(input.frames[f].width) + "x" +
                        std::to_string(input.frames[f].height) +
                        ": the file changed since it was read (run the job again)");
        return failure;
      }
      auto [w, h] = size_of(f);
      Status written = WriteJpeg(paths[f], std::move(page.image), w, h, path);
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
      return CorruptData(path + ": " + std::to_string(missing.size()) +
                         " page pictures of the context could not be rendered again (first: "
                         "page " +
                         std::to_string(missing.begin()->first + 1) + ")");
    }
    return paths;
  }

  if (input.kind == llm::ContextItemKind::kImage) {
    REEL_ASSIGN_OR_RETURN(pipeline::Image image,
                          pipeline::ReadImageFile(file, job.limits.media.max_pixels));
    ++r.passes;
    for (const auto& [sample, f] : missing) {
      REEL_RETURN_IF_ERROR(WriteJpeg(paths[f], image, width, height, path));
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
  if (max_pixels > 0 && options.resize.mode == pipeline::ResizeMode::kSmart) {
    options.resize.smart.max_pixels = max_pixels;
    options.resize.smart.min_pixels = std::min(options.resize.smart.min_pixels, max_pixels);
  }
  Status failure;
  bool finished = false;
  auto sink = [&](pipeline::SampledFrame&& frame) -> Status {
    auto it = missing.find(frame.index);
    if (it == missing.end()) return Status::Ok();
    const size_t f = it->second;
    if (std::abs(frame.time_s - input.frames[f].time_s) > 1e-3) {
      failure = CorruptData(path + ": frame " + std::to_string(frame.index) + " is now at " +
                            std::to_string(frame.time_s) + " s, it was stored at " +
                            std::to_string(input.frames[f].time_s) +
                            " s: the file changed since it was sampled (run the job again)");
      return failure;
    }
    Status written = WriteJpeg(paths[f], std::move(frame.image), width, height, path);
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
  ++r.passes;
  Result<pipeline::SampleReport> sampled = pipeline::SampleVideo(file, options, sink);
  if (!failure.ok()) return failure;
  if (!sampled.ok() && !finished) return sampled.status();
  if (!missing.empty()) {
    return CorruptData(path + ": " + std::to_string(missing.size()) +
                       " frames of the context could not be decoded again (first: sample " +
                       std::to_string(missing.begin()->first) + ")");
  }
  return paths;
}

}  // namespace

Result<std::vector<std::string>> ContextFrameFiles(
    const JobSpec& job, const storage::ItemRecord& item, const llm::ContextInput& input,
    const llm::Context& context, const std::vector<size_t>& frames, const std::string& cache_dir,
    ContextFramesReport* report) {
  ContextFramesReport local;
  ContextFramesReport& r = report != nullptr ? *report : local;
  if (input.sources.empty()) {
    return FrameFilesOf(job, item.path, FrameSource(item), input, context.frame_width,
                        context.frame_height, context.frame_max_pixels, context.frame_sizes, frames,
                        cache_dir, r);
  }
  // Several files (jobs/context/group_context.h): each file's frames from its own file, at its
  // own size, named by its own frame source.
  for (size_t f : frames) {
    if (f >= input.frames.size()) {
      return InvalidArgument(item.path + ": frame " + std::to_string(f) + " is not in the context");
    }
  }
  std::vector<std::string> paths(input.frames.size());
  for (size_t s = 0; s < input.sources.size(); ++s) {
    const llm::ContextSource& source = input.sources[s];
    llm::ContextInput one;
    one.item_path = source.path;
    one.kind = source.kind;
    std::vector<size_t> index;  // one.frames -> input.frames
    for (size_t f = 0; f < input.frames.size(); ++f) {
      if (input.frames[f].source != s) continue;
      index.push_back(f);
      one.frames.push_back(input.frames[f]);
    }
    std::vector<size_t> wanted;
    for (size_t k = 0; k < index.size(); ++k) {
      if (std::find(frames.begin(), frames.end(), index[k]) != frames.end()) wanted.push_back(k);
    }
    if (wanted.empty()) continue;
    const llm::FrameSize size = s < context.source_sizes.size()
                                    ? context.source_sizes[s]
                                    : llm::FrameSize{context.frame_width, context.frame_height};
    REEL_ASSIGN_OR_RETURN(
        std::vector<std::string> files,
        FrameFilesOf(job, source.path, source.frame_source, one, size.width, size.height,
                     context.frame_max_pixels, {}, wanted, cache_dir, r));
    for (size_t k : wanted) paths[index[k]] = std::move(files[k]);
  }
  return paths;
}

}  // namespace reel::jobs
