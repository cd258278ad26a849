// Planning: for each input file, whether a run must process it, and why. Bytes are hashed only
// when the cheap facts (size, mtime, inode) changed or the item is new; a done item with the same
// hashes is skipped, a failed one too unless retry_failed. Thread-compatible; PlanItem uses the
// given Store only. Details: jobs/run/README.md, "Item plan".
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "jobs/spec/job_spec.h"
#include "pipeline/media_info.h"
#include "storage/records.h"
#include "storage/store.h"

namespace reel::jobs {

// Bumped whenever the built-in stages change what they store (thumbnail size, hash, chunking),
// so that existing items are redone once.
inline constexpr const char* kItemOutputsVersion = "reel-item-outputs/1";

struct FileFacts {
  int64_t size_bytes = 0;
  int64_t mtime_ns = 0;
  int64_t inode = 0;
};

// Errors: kNotFound (the file vanished), kIoError, kInvalidArgument (not a regular file).
Result<FileFacts> StatFile(const std::string& path);

// Lowercase hex SHA-256 of the file's bytes, read in 1 MiB blocks. Stops with kCancelled when
// `cancel` becomes true. Errors name the file.
Result<std::string> HashFile(const std::string& path, const std::atomic<bool>* cancel = nullptr);

// The hash of everything besides the file's bytes that shapes an item's outputs:
// kItemOutputsVersion, the item's kind, FrameSettingsKey(job) for videos and images (documents
// and subtitle files do not depend on it), the segment source of subtitle files, and for a video
// the names and SHA-256 of its side-car subtitle files (so editing a clip.srt redoes clip.mp4);
// for documents, subtitle files and videos with side-car files, text.fallback_encoding.
std::string ItemSettingsHash(const JobSpec& job, const InputFile& input);

enum class PlanAction { kProcess, kSkip };

struct ItemPlan {
  InputFile input;
  PlanAction action = PlanAction::kProcess;
  // Why, for people: "new", "content changed", "settings changed", "up to date", "failed
  // before (--retry-failed to retry)", "failed before; retrying", "left running by an
  // interrupted run", "pending".
  std::string reason;
  FileFacts facts;
  std::optional<std::string> content_hash;
  std::string settings_hash;
  bool hashed_bytes = false;   // the bytes were read (the cheap facts changed, or new item)
  bool facts_changed = false;  // the stored size/mtime/inode differ (store them again)
  std::optional<storage::ItemRecord> stored;  // the item as stored, if any
};

struct ItemPlanOptions {
  bool retry_failed = false;
};

// Plans one input; the stored item is looked up by DisplayPath(input.path) (base/utf8.h), the
// form the runner stores paths in. `store` may be null, or `job_id` 0, when there is no database
// yet (every item is then new). Errors: from StatFile / HashFile (the file vanished or is
// unreadable), and storage errors.
Result<ItemPlan> PlanItem(storage::Store* store, int64_t job_id, const InputFile& input,
                          const std::string& settings_hash, const ItemPlanOptions& options,
                          const std::atomic<bool>* cancel = nullptr);

// The storage kind of an input kind (kAuto is treated as video).
storage::ItemKind ToItemKind(InputKind kind);

// How many frames `sampling` would take from this video, from its probe: for fps, the trimmed
// duration times fps (the time timeline) or the frames in range times fps / src_fps (the index
// timeline, chosen as SamplingOptions::fps_timeline says from the probe's constant_rate), plus
// the last frame; the count; the timestamps in range; capped by max_frames and the stream's frame
// count. nullopt for keyframes and scene, which depend on the pictures.
std::optional<int64_t> EstimateFrames(const pipeline::SamplingOptions& sampling,
                                      const pipeline::MediaInfo& media);

}  // namespace reel::jobs
