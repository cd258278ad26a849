// The model stage: after the context stage has stored an item's contexts, hands the item to the
// run's ModelRun, which records its questions as tasks and (with an endpoint) asks them.
#include "jobs/context/group_context.h"
#include "jobs/model/model_run.h"
#include "jobs/stages/stages.h"

namespace reel::jobs {
namespace {

class ModelStage : public StoredItemStage {
 public:
  explicit ModelStage(ModelRun* run) : run_(run) {}
  const char* name() const override { return "model"; }
  Status Run(storage::Store& store, int64_t item_id, int64_t run_id,
             ItemWork& work) const override {
    (void)run_id;
    if (run_ == nullptr || work.job == nullptr || work.job->prompts.empty()) return Status::Ok();
    // Read for a question over several files, not asked about alone (group_context.h).
    if (IsGroupMember(*work.job, work.input.path)) return Status::Ok();
    return run_->AddItem(store, item_id, work.input.path, std::move(work.contexts));
  }

 private:
  ModelRun* run_;
};

}  // namespace

std::unique_ptr<StoredItemStage> MakeModelStage(ModelRun* run) {
  return std::make_unique<ModelStage>(run);
}

}  // namespace reel::jobs
