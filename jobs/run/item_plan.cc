#include "jobs/run/item_plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/file_util.h"
#include "base/utf8.h"
#include "jobs/stages/stages.h"
#include "storage/sha256.h"

namespace reel::jobs {

Result<FileFacts> StatFile(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound(path + ": no such file (was it removed?)");
    return IoError(path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  FileFacts facts;
  facts.size_bytes = st.st_size;
  facts.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  facts.inode = static_cast<int64_t>(st.st_ino);
  return facts;
}

Result<std::string> HashFile(const std::string& path, const std::atomic<bool>* cancel) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(path + ": no such file (was it removed?)");
    return IoError(path + ": cannot open: " + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  storage::Sha256 sha;
  // One buffer per thread: allocating and zeroing 1 MiB per file cost more than hashing a
  // small file (bench/scale_bench).
  thread_local std::vector<char> buffer(1 << 20);
  while (true) {
    if (cancel != nullptr && cancel->load()) return Cancelled(path + ": stopped by request");
    ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(path + ": read failed: " + std::strerror(errno));
    }
    if (n == 0) break;
    sha.Update(std::string_view(buffer.data(), static_cast<size_t>(n)));
  }
  return storage::Sha256::ToHex(sha.Finish());
}

std::string ItemSettingsHash(const JobSpec& job, const InputFile& input) {
  std::string key = std::string(kItemOutputsVersion) + "\nkind=" + InputKindName(input.kind);
  // Text items do not depend on frame settings: changing the sampling redoes videos only.
  if (input.kind == InputKind::kVideo || input.kind == InputKind::kImage) {
    key += "\n" + FrameSettingsKey(job);
  }
  if (input.kind == InputKind::kSubtitle) {
    // Subtitle items' cues were labelled "sidecar:NAME" before: relabel them on the next run.
    key += std::string("\nsource=") + kSubtitleFileSource;
  }
  if (input.kind == InputKind::kImage) {
    key += "\nimage_max_pixels=" + std::to_string(job.resize.image_max_pixels);
  }
  if ((input.kind == InputKind::kVideo || input.kind == InputKind::kImage) && job.vision.enabled) {
    key += "\n" + VisionSettingsKey(job);
  }
  bool reads_text = input.kind == InputKind::kDocument || input.kind == InputKind::kSubtitle;
  if (input.kind == InputKind::kDocument && IsPagedDocument(input.path)) {
    // PDFs, web pages, e-books, office files: their pages (jobs/stages/paged_document_stage.cc)
    // depend on the documents section, not on the text encoding fallback.
    key += "\n" + DocumentSettingsKey(job);
    reads_text = false;
  }
  if (input.kind == InputKind::kVideo || input.kind == InputKind::kAudio) {
    for (const std::string& sidecar : FindSidecarSubtitles(input.path)) {
      Result<std::string> hash = HashFile(sidecar);
      key += "\nsidecar=" + std::filesystem::path(sidecar).filename().string() + " " +
             (hash.ok() ? *hash : std::string("unreadable"));
      reads_text = true;
    }
  }
  if (input.kind == InputKind::kVideo) {
    // A side-car slide deck's text depends on its bytes and the documents section.
    const std::vector<std::string> decks = FindSidecarDocuments(input.path);
    for (const std::string& deck : decks) {
      Result<std::string> hash = HashFile(deck);
      key += "\nsidecar_document=" + std::filesystem::path(deck).filename().string() + " " +
             (hash.ok() ? *hash : std::string("unreadable"));
    }
    if (!decks.empty()) key += "\n" + DocumentSettingsKey(job);
  }
  // How text that is not UTF-8 is read changes the stored text (container subtitle streams
  // are left out: knowing whether a video has any needs a probe).
  if (reads_text) key += "\ntext.fallback_encoding=" + job.text.fallback_encoding;
  return storage::Sha256Hex(key);
}

storage::ItemKind ToItemKind(InputKind kind) {
  switch (kind) {
    case InputKind::kImage:
      return storage::ItemKind::kImage;
    case InputKind::kDocument:
      return storage::ItemKind::kDocument;
    case InputKind::kSubtitle:
      return storage::ItemKind::kSubtitle;
    case InputKind::kAudio:
      return storage::ItemKind::kAudio;
    case InputKind::kAuto:
    case InputKind::kVideo:
      break;
  }
  return storage::ItemKind::kVideo;
}

Result<ItemPlan> PlanItem(storage::Store* store, int64_t job_id, const InputFile& input,
                          const std::string& settings_hash, const ItemPlanOptions& options,
                          const std::atomic<bool>* cancel) {
  ItemPlan plan;
  plan.input = input;
  plan.settings_hash = settings_hash;
  REEL_ASSIGN_OR_RETURN(plan.facts, StatFile(input.path));
  if (store != nullptr && job_id != 0) {
    REEL_ASSIGN_OR_RETURN(plan.stored, store->FindItem(job_id, DisplayPath(input.path)));
  }
  const std::optional<storage::ItemRecord>& stored = plan.stored;
  plan.facts_changed = !stored || stored->size_bytes != plan.facts.size_bytes ||
                       stored->mtime_ns != plan.facts.mtime_ns || stored->inode != plan.facts.inode;
  if (!plan.facts_changed && stored->content_hash) {
    plan.content_hash = stored->content_hash;
  } else {
    REEL_ASSIGN_OR_RETURN(std::string hash, HashFile(input.path, cancel));
    plan.content_hash = std::move(hash);
    plan.hashed_bytes = true;
  }
  if (!stored) {
    plan.reason = "new";
    return plan;
  }
  const bool same_content = stored->content_hash && *stored->content_hash == *plan.content_hash;
  const bool same_settings = stored->settings_hash == settings_hash;
  if (storage::IsUpToDate(*stored, plan.content_hash, settings_hash)) {
    plan.action = PlanAction::kSkip;
    plan.reason = "up to date";
  } else if (!same_content) {
    plan.reason = "content changed";
  } else if (!same_settings) {
    plan.reason = "settings changed";
  } else if (stored->status == storage::ItemStatus::kFailed) {
    if (options.retry_failed) {
      plan.reason = "failed before; retrying";
    } else {
      plan.action = PlanAction::kSkip;
      plan.reason = "failed before (--retry-failed to retry)";
    }
  } else if (stored->status == storage::ItemStatus::kRunning) {
    plan.reason = "left running by an interrupted run";
  } else {
    plan.reason = "pending";
  }
  return plan;
}

std::optional<int64_t> EstimateFrames(const pipeline::SamplingOptions& sampling,
                                      const pipeline::MediaInfo& media) {
  if (!media.best_video) return std::nullopt;
  const pipeline::StreamInfo& video = media.streams[*media.best_video];
  double duration = video.duration_s > 0 ? video.duration_s : media.duration_s;
  double start = sampling.start_s.value_or(0);
  double end = sampling.end_s ? std::min(*sampling.end_s, duration) : duration;
  double window = std::max(0.0, end - start);
  int64_t frames_in_window = video.frames;
  if (video.fps > 0 && video.constant_rate) {
    frames_in_window = static_cast<int64_t>(std::ceil(window * video.fps));
  } else if (video.frames > 0 && duration > 0) {
    // Frames not evenly spaced: assume they are spread over the duration.
    frames_in_window = static_cast<int64_t>(std::ceil(video.frames * window / duration));
  }
  if (video.frames > 0) frames_in_window = std::min<int64_t>(frames_in_window, video.frames);
  int64_t estimate = 0;
  switch (sampling.policy) {
    case pipeline::SamplingPolicy::kFps: {
      using T = pipeline::FpsTimeline;
      const bool by_index = video.fps > 0 && frames_in_window > 0 &&
                            (sampling.fps_timeline == T::kIndex ||
                             (sampling.fps_timeline == T::kAuto && video.constant_rate));
      if (by_index) {
        // One frame every src_fps / fps frames of the window, then the last.
        estimate =
            static_cast<int64_t>(std::ceil(frames_in_window * sampling.fps / video.fps - 1e-9)) +
            (sampling.fps_keep_last ? 1 : 0);
      } else {
        // One frame per 1 / fps seconds of the window, then the last.
        estimate = static_cast<int64_t>(std::floor(window * sampling.fps + 1e-9)) +
                   (sampling.fps_keep_last ? 1 : 0);
      }
      if (window <= 0) estimate = 0;
      break;
    }
    case pipeline::SamplingPolicy::kCount:
      estimate = sampling.count;
      break;
    case pipeline::SamplingPolicy::kTimestamps:
      estimate = std::count_if(sampling.timestamps.begin(), sampling.timestamps.end(),
                               [&](double t) { return t >= start && t < end; });
      break;
    case pipeline::SamplingPolicy::kKeyframes:
    case pipeline::SamplingPolicy::kScene:
      return std::nullopt;
  }
  if (frames_in_window > 0) estimate = std::min(estimate, frames_in_window);
  if (sampling.max_frames) estimate = std::min<int64_t>(estimate, *sampling.max_frames);
  return std::max<int64_t>(estimate, 0);
}

}  // namespace reel::jobs
