// The per-item pipeline's seams: ItemStages (probe, frames, text) fill one ItemWork, stored whole
// by the runner; FrameConsumers see each frame while it is in memory; StoredItemStages (speech,
// context, model) run after the item is committed. Threads: one ItemWork per item, on its worker;
// stages and consumers are shared by all workers and must be thread-safe.
// The order and how stages plug in: jobs/stages/README.md, "Item stage".
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/spec/job_spec.h"
#include "pipeline/image.h"
#include "pipeline/media_info.h"
#include "storage/records.h"
#include "storage/store.h"

namespace reel::jobs {

struct VisionItemState;  // jobs/stages/vision_stage.cc
struct ItemContext;      // jobs/context/item_context.h

// Everything known about one item while it is processed.
struct ItemWork {
  const JobSpec* job = nullptr;
  InputFile input;
  const std::atomic<bool>* cancel = nullptr;  // set when the run is stopping; may be null
  std::optional<pipeline::MediaInfo> media;   // set by the probe stage (videos)
  storage::ItemOutputs outputs;               // what will be stored
  // Facts for items.media_json, merged into one JSON object by the processor (key -> JSON text).
  std::vector<std::pair<std::string, std::string>> media_facts;
  std::vector<std::string> warnings;  // things worth logging that did not fail the item
  std::vector<std::string> notes;     // facts for the event log only (level info), e.g. a text
                                      // encoding recognised by its byte-order mark
  // Segment source -> the encoding its text was read in, for text not read as plain UTF-8;
  // stored in items.media_json as "text_encodings".
  std::vector<std::pair<std::string, std::string>> text_encodings;
  // The vision stage's frames and features of this item (set by its frame consumer).
  std::shared_ptr<VisionItemState> vision;
  // The contexts the context stage built (and stored) for this item in this run, handed to the
  // model stage so it sends them instead of building them again.
  std::vector<std::shared_ptr<const ItemContext>> contexts;
  // Set by a StoredItemStage that marked the item failed after it was stored (an audio file whose
  // audio cannot be decoded: Store::MarkItemFailed): the message, naming the file. The stages
  // after it are not run and the runner counts the item as failed.
  std::optional<std::string> failed;

  bool cancelled() const { return cancel != nullptr && cancel->load(); }
};

// Sees every frame of an item as it is decoded: upright RGB at the job's resize target. It may
// fill fields of `record` (the built-in one sets the thumbnail and the perceptual hash).
// Frames arrive in decoding order, which is not always sample order.
class FrameConsumer {
 public:
  virtual ~FrameConsumer() = default;
  virtual const char* name() const = 0;
  virtual Status Consume(ItemWork& work, const pipeline::Image& image,
                         storage::FrameRecord& record) const = 0;
};

// One step that reads the input and adds to ItemWork. A failure fails the item; its message
// must name the file.
class ItemStage {
 public:
  virtual ~ItemStage() = default;
  virtual const char* name() const = 0;
  virtual bool AppliesTo(const ItemWork& work) const = 0;
  virtual Status Run(ItemWork& work) const = 0;
  // Whether the stage reads only text and needs nothing from the stages before it (the probe):
  // such a stage is run again for a video whose processing failed, so its text is kept
  // (ItemProcessor::TextOfFailedItem).
  virtual bool reads_text_alone() const { return false; }
};

// A step that needs the committed item (its frame ids, its stored text): the transcript of its
// speech, the context builder and the model client. Runs after MarkItemDone with the worker's
// own Store, and for an item found up to date too (each decides from what is stored whether it
// has work).
class StoredItemStage {
 public:
  virtual ~StoredItemStage() = default;
  virtual const char* name() const = 0;
  virtual Status Run(storage::Store& store, int64_t item_id, int64_t run_id,
                     ItemWork& work) const = 0;
};

}  // namespace reel::jobs
