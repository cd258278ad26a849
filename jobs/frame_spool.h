// Frames for the model: the JPEG files a request body reads its frames from.
//
// The database keeps thumbnails, not frames at the model's size, so before an item's requests
// are built its video is sampled again with the job's settings (the same frames: sampling is
// deterministic) and each frame a context keeps is encoded (model.jpeg_quality) to a file in a
// spool folder beside the database, `<database>.spool/item-<id>/`. Images are read and resized
// the way the image stage does. A frame whose time differs from the stored one means the file
// changed since its frames were stored: an error naming it. The item's folder is removed once
// its requests are done (or written to a Batch file); the whole spool when a run starts.
//
// Threads: Prepare may run for different items on different threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/job_spec.h"
#include "llm/context_builder.h"

namespace reel::jobs {

class FrameSpool {
 public:
  // `root` is the spool folder (created when needed).
  explicit FrameSpool(std::string root) : root_(std::move(root)) {}

  // The spool of a database: "<database>.spool".
  static std::string RootFor(const std::string& database);

  // Writes the files of `frames` (indices into input.frames) at `width` x `height`, those not
  // written yet. `media_path` is the file as the operating system names it.
  Status Prepare(const JobSpec& job, int64_t item_id, const std::string& media_path,
                 const llm::ContextInput& input, const std::vector<size_t>& frames, int width,
                 int height) const;

  // The file of input frame `frame` at that size (whether or not it exists).
  std::string FramePath(int64_t item_id, const llm::ContextInput& input, size_t frame, int width,
                        int height) const;

  void RemoveItem(int64_t item_id) const;
  void RemoveAll() const;
  const std::string& root() const { return root_; }

 private:
  std::string ItemDir(int64_t item_id) const;
  std::string root_;
};

}  // namespace reel::jobs
