// ItemProcessor: turns one input file into the outputs stored for it, by running the item
// stages (jobs/stages/item_stage.h) that apply to its kind. Reads files only; never touches the
// database, so a failure or a cancellation leaves nothing half-written.
//
// Thread safety: Process() is const and may run on many threads at once (each call has its own
// ItemWork). The processor owns its stages and consumers.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/spec/job_spec.h"
#include "jobs/stages/item_stage.h"

namespace reel::jobs {

class ItemProcessor {
 public:
  // The built-in pipeline: probe, frames (thumbnail + dHash per frame), image, subtitles,
  // documents. No stored-item stages yet.
  static ItemProcessor Default();
  // Default() plus what `job` turns on: with vision.enabled, the vision encoder's frame consumer
  // and stage (jobs/stages/vision_stage.h), reading feature reuse from `database_path`.
  static ItemProcessor ForJob(const JobSpec& job, const std::string& database_path);

  ItemProcessor() = default;
  ItemProcessor(ItemProcessor&&) = default;
  ItemProcessor& operator=(ItemProcessor&&) = default;

  // Hooks for the stages to come (and for tests).
  void AddFrameConsumer(std::unique_ptr<FrameConsumer> consumer);  // before Add*Stage calls
  void AddStage(std::unique_ptr<ItemStage> stage);
  void AddStoredStage(std::unique_ptr<StoredItemStage> stage);
  const std::vector<std::unique_ptr<StoredItemStage>>& stored_stages() const {
    return stored_stages_;
  }

  // Runs the applicable stages in order. On success, work.outputs is ready for MarkItemDone:
  // frames sorted by sample index, segments without duplicate (source, start, text), and
  // media_json set from the stages' facts. Errors: the first failing stage's status, with a
  // message that names the file (kCancelled when `cancel` became true); kLimitExceeded for a
  // file larger than limits.max_file_size.
  Result<ItemWork> Process(const JobSpec& job, const InputFile& input,
                           const std::atomic<bool>* cancel = nullptr) const;

  // For a video that Process failed (no stream, no video stream, undecodable): the text that
  // needs no pictures, from the stages that read text alone (ItemStage::reads_text_alone: its
  // text streams when the file opens, its side-car subtitles), so the failed item keeps its
  // subtitles. Segments without duplicates, ready for Store::ReplaceItemSegments; empty when
  // there is none. What could not be read is added to `warnings`.
  std::vector<storage::SegmentRecord> TextOfFailedItem(const JobSpec& job, const InputFile& input,
                                                       const std::atomic<bool>* cancel,
                                                       std::vector<std::string>* warnings) const;

 private:
  std::vector<std::unique_ptr<FrameConsumer>> consumers_;
  std::vector<std::unique_ptr<ItemStage>> stages_;
  std::vector<std::unique_ptr<StoredItemStage>> stored_stages_;
};

// True for failures worth retrying (kUnavailable, kIoError): the file or the database may be
// fine a moment later. Corrupt or unsupported data is never retried.
bool IsTransient(const Status& status);

}  // namespace reel::jobs
