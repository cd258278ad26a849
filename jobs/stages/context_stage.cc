// The context stage: after an item is committed (or found up to date), builds and stores the
// context of each prompt whose context is missing or was built from other settings (prompts that
// do not apply to the item, jobs/spec/prompt_kinds.h, get none: nothing is asked about them), hands
// the builds to the model stage (ItemWork::contexts), and retires the contexts the job no longer
// builds.
#include <mutex>

#include "jobs/context/group_context.h"
#include "jobs/context/item_context.h"
#include "jobs/spec/prompt_kinds.h"
#include "jobs/stages/stages.h"

namespace reel::jobs {
namespace {

class ContextStage : public StoredItemStage {
 public:
  explicit ContextStage(std::string frame_cache) : frame_cache_(std::move(frame_cache)) {}
  const char* name() const override { return "context"; }

  Status Run(storage::Store& store, int64_t item_id, int64_t run_id,
             ItemWork& work) const override {
    const JobSpec& job = *work.job;
    if (job.prompts.empty()) {  // every stored context is one the job no longer builds
      return RetireOldContexts(store, item_id, {}, frame_cache_).status();
    }
    // A file read for a question over several files: its frames are in the group item's context.
    if (IsGroupMember(job, work.input.path)) return Status::Ok();
    REEL_ASSIGN_OR_RETURN(std::shared_ptr<const ContextSetup> setup, Setup(job));
    REEL_ASSIGN_OR_RETURN(std::optional<storage::ItemRecord> item, store.GetItem(item_id));
    if (!item) return NotFound(work.input.path + ": item vanished before its contexts were built");
    // With speech on, a video's questions wait until its transcript is finished.
    REEL_RETURN_IF_ERROR(TranscriptReady(store, job, *item));
    std::optional<llm::ContextInput> input;
    std::string failures;
    std::vector<std::pair<std::string, std::string>> current;  // (prompt id, settings key)
    auto load_input = [&]() -> Status {
      if (input) return Status::Ok();
      REEL_ASSIGN_OR_RETURN(llm::ContextInput loaded, LoadContextInput(store, item_id, &job));
      AddAttachedTexts(*setup, &loaded);
      REEL_RETURN_IF_ERROR(AddGroupMedia(store, job, *item, &loaded));
      input = std::move(loaded);
      return Status::Ok();
    };
    for (const PromptSpec& prompt : job.prompts) {
      std::string key = ContextSettingsKey(job, prompt, *setup, *item);
      if (!job.context.group.empty()) {  // the key names every file of the group
        REEL_RETURN_IF_ERROR(load_input());
        key = GroupSettingsKey(key, *input);
      }
      if (!PromptAppliesToEveryItem(prompt)) {
        REEL_RETURN_IF_ERROR(load_input());
        // Not asked about this item (e.g. chapters of a document): no context, and one an older
        // run stored is retired below.
        if (!PromptAppliesTo(prompt, *input)) continue;
      }
      current.emplace_back(prompt.id, key);
      REEL_ASSIGN_OR_RETURN(bool stored, store.HasContexts(item_id, prompt.id, key));
      if (stored) continue;
      REEL_RETURN_IF_ERROR(load_input());
      Result<llm::Context> context = llm::BuildContext(
          *input, ContextOptionsFor(job, prompt, *input), setup->chat_template, *setup->counter);
      if (!context.ok()) {
        failures += (failures.empty() ? "" : "; ") + std::string("prompt '") + prompt.id +
                    "': " + context.status().message();
        continue;
      }
      REEL_RETURN_IF_ERROR(StoreContext(store, *item, prompt, *context, *input, key).status());
      // The model stage sends this build (jobs/model/model_plan.h: ItemPlanner::Adopt).
      work.contexts.push_back(std::make_shared<const ItemContext>(
          ItemContext{*item, prompt, *input, std::move(context).value(), key}));
    }
    (void)run_id;
    // The contexts the job no longer builds (a changed prompt, setting or item), and their frames.
    REEL_RETURN_IF_ERROR(RetireOldContexts(store, item_id, current, frame_cache_).status());
    if (!failures.empty()) {
      return LimitExceeded(work.input.path + ": no context: " + failures);
    }
    return Status::Ok();
  }

 private:
  // The job's template and tokenizer, loaded once for the run (a runner uses one job).
  Result<std::shared_ptr<const ContextSetup>> Setup(const JobSpec& job) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (job_ != &job || !setup_) {
      Result<std::shared_ptr<const ContextSetup>> loaded = LoadContextSetup(job);
      if (!loaded.ok()) return loaded.status();
      setup_ = *loaded;
      job_ = &job;
    }
    return setup_;
  }
  const std::string frame_cache_;
  mutable std::mutex mutex_;
  mutable const JobSpec* job_ = nullptr;
  mutable std::shared_ptr<const ContextSetup> setup_;
};

}  // namespace

std::unique_ptr<StoredItemStage> MakeContextStage(std::string frame_cache) {
  return std::make_unique<ContextStage>(std::move(frame_cache));
}

}  // namespace reel::jobs
