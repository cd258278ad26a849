// The vision encoder in a run (`vision.enabled`): pooled features per frame pair, stored in
// `features` (fp16), near-duplicate pairs marked (frames.duplicate_of). VisionService, one per run
// and shared by every worker, loads the encoder on first use, serialises its Encode calls and
// never encodes an identical frame pair twice with the same weights.
// The service, consumer and stage: jobs/stages/README.md, "Vision stage".
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
