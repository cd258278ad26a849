// The frames a context sends, at the context's frame size, as JPEG files in a cache directory:
// decoded once per item and size in one pass, named by the SHA-256 of what they are (a changed file
// or setting never reuses a stale one), written atomically.
// Thread safety: reentrant; two processes filling one cache write the same bytes.
// Why a cache, and its cost per hour of video: jobs/context/README.md, "Context frames".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/spec/job_spec.h"
#include "llm/context/context_builder.h"
#include "storage/records.h"

namespace reel::jobs {

// The frame cache of a job writing `database` (the database the command opened, e.g. `--db`'s
// file; "" = the job's storage.database): the job's storage.frame_cache when set, else
// "<database>.frames" beside that database.
std::string FrameCacheDir(const JobSpec& job, const std::string& database);

// What an item's frame files are made from (its content and frame-settings hashes; the file's
// identity when its content is unknown): the first part of every frame file's key. Stored with a
// context row (contexts.frame_source) so its files can be found after the item changed.
std::string FrameSource(const storage::ItemRecord& item);

// The cache files a stored context's manifest sends (its image and video parts' frames at their
// size), made from `frame_source`. Files that were never written are listed too.
std::vector<std::string> ManifestFrameFiles(const std::string& cache_dir,
                                            const std::string& frame_source,
                                            const std::string& manifest_json);

struct ContextFramesReport {
  int cached = 0;   // frames found in the cache
  int decoded = 0;  // frames decoded and written now
  int passes = 0;   // passes over the item's file (0 or 1)
};

// Paths of the JPEGs of `frames` (indices into input.frames), indexed like input.frames ("" for
// frames not asked for). `item` is the stored item (its path, content and settings hashes).
// Errors name the item's file: it cannot be read, it no longer gives the stored frames (it
// changed since it was sampled), a frame could not be decoded.
Result<std::vector<std::string>> ContextFrameFiles(
    const JobSpec& job, const storage::ItemRecord& item, const llm::ContextInput& input,
    const llm::Context& context, const std::vector<size_t>& frames, const std::string& cache_dir,
    ContextFramesReport* report = nullptr);

}  // namespace reel::jobs
