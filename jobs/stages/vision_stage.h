// The vision encoder in a run (`vision.enabled`): pooled features per frame pair, stored in the
// `features` table (fp16), and near-duplicate frame pairs marked (frames.duplicate_of) so the
// context builder leaves them out.
//
// - VisionService: one per run, shared by every worker. Loads the encoder on first use (only a
//   run with something to encode pays for the weights); its Encode calls are serialised and
//   each uses all of the encoder's threads (vision.threads), so items running side by side never
//   oversubscribe the CPU. Looks features up by (model, input hash) in the run's database
//   through its own read-only connection, so an identical frame pair is never encoded twice
//   with the same weights, across items and runs.
// - The consumer keeps each frame at the feature size (vision.max_pixels) until its pair partner
//   arrives (pairs are sample indexes 2k and 2k+1), then encodes complete pairs in batches of
//   vision.batch_size.
// - The stage, after the frames: encodes what is left (a frame without a partner, such as an odd
//   last frame or an image, as a pair of itself), marks every pair whose feature has a cosine
//   similarity above vision.dedup_threshold with the last kept pair as a near-duplicate of it,
//   and puts the features into the item's outputs (stored with its frames, in one transaction).
#pragma once

#include <memory>
#include <string>

#include "jobs/spec/job_spec.h"
#include "jobs/stages/item_stage.h"

namespace reel::jobs {

class VisionService;

// `database_path`: the run's database (read for feature reuse; never written by the service).
std::shared_ptr<VisionService> MakeVisionService(const JobSpec& job,
                                                 const std::string& database_path);
std::unique_ptr<FrameConsumer> MakeVisionConsumer(std::shared_ptr<VisionService> service);
std::unique_ptr<ItemStage> MakeVisionStage(std::shared_ptr<VisionService> service);

}  // namespace reel::jobs
