// What must be asked now about one item: the tasks of each prompt (ask, map, reduce in levels,
// re-fit after a too-long refusal, rounds), read from and written to the database, and the
// requests to send for them. The run's model stage, `reel export` and the re-planning after an
// answer all use it, so a task's life is decided in one place.
// Threads: an ItemPlanner is used by one thread at a time; its Store is the caller's.
// The rules, case by case: jobs/model/README.md, "Model plan".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/context/item_context.h"
#include "jobs/model/request_setup.h"
#include "jobs/spec/job_spec.h"
#include "llm/answers/chapters.h"
#include "llm/client/chat_request.h"
#include "llm/context/context_builder.h"
#include "storage/store.h"
#include "storage/tasks.h"

namespace reel::jobs {

struct PlannedSend {
  storage::TaskRecord task;
  size_t prompt_index = 0;
  llm::ChatRequest request;  // messages null unless bodies were built
  // Sends with the same key share everything before the question (a cacheable prefix).
  std::string prefix_key;
  // Requests alike in token layout (kind, transport, frame size, step), for verify_tokens.
  std::string shape;
  bool final_step = false;  // its answer is the prompt's (storage::IsFinalTask)
};

enum class PromptState {
  kNoContext,  // nothing stored to ask about
  kPending,    // sends to make, or answers to wait for
  kDone,       // the final answer is stored
  kFailed,     // a task it needs failed and is not asked again
};

struct PromptPlan {
  PromptState state = PromptState::kNoContext;
  std::vector<PlannedSend> sends;
  std::string message;                   // kFailed: why; a note otherwise ("" when none)
  std::optional<int64_t> final_task_id;  // kDone: the task holding the answer
};

struct PlanOptions {
  bool build_bodies = true;    // false: only record the tasks (no endpoint, nothing sent)
  bool include_sent = false;   // tasks left 'sent' count as unanswered (export)
  bool resend_failed = false;  // --retry-failed
  // reel ask --again: a prompt answered before this run is asked anew, as a new round (its
  // tasks get new custom ids; the earlier answers stay). Without it the newest round is used.
  bool ask_again = false;
  std::string run_uid;                           // sends made by this run are not repeated by it
  const std::set<int64_t>* scheduled = nullptr;  // tasks the caller has in hand already
  // Tasks this run has sent, or tried to: never sent twice by one run (one the server failed
  // waits for the next run; one whose send could not be recorded is not tried in a loop).
  const std::set<int64_t>* tried = nullptr;
};

// What planning cost: contexts built (each a full fit and exact count of the item) or taken as
// the context stage built them, and the passes over items' files that decoded request frames.
struct PlannerCounters {
  int64_t contexts_built = 0;
  int64_t contexts_reused = 0;  // given to Adopt and used
  int64_t frame_passes = 0;
  int64_t frames_decoded = 0;
};

class ItemPlanner {
 public:
  // `media_path` is the item's file as the operating system names it.
  ItemPlanner(const JobSpec& job, const ModelSetup& setup, int64_t item_id, std::string media_path);

  Result<PromptPlan> Plan(storage::Store& store, size_t prompt_index, const PlanOptions& options);

  int64_t item_id() const { return item_id_; }
  const std::string& media_path() const { return media_path_; }
  const std::string& item_path() const;  // as stored (after the first Plan)
  // The item's sampled frame times and duration (after the first Plan), for checking answers.
  llm::ChapterTimeline Timeline() const;
  // The counters since the last call.
  PlannerCounters TakeCounters();
  // Contexts of this item the context stage built in this run (with the job's current settings,
  // from the same stored rows): used, by settings key, instead of building them again.
  void Adopt(std::vector<std::shared_ptr<const ItemContext>> built);

 private:
  Status Load(storage::Store& store);
  // The settings key of the prompt's context as the job builds it now (the base of re-fits and
  // reduces).
  std::string BaseKey(size_t prompt_index) const;
  // The context of `prompt` under `key` (built with `margin` tokens less budget), cached.
  Result<const ItemContext*> ContextFor(size_t prompt_index, const std::string& key,
                                        int64_t margin);
  // `rows` of one settings key, with missing segments stored (an older Reel killed mid-way).
  Result<std::vector<storage::ContextRow>> CompleteRows(storage::Store& store, size_t prompt_index,
                                                        const std::string& key, int64_t margin,
                                                        std::vector<storage::ContextRow> rows);
  Result<PlannedSend> MakeSend(const storage::TaskRecord& task, size_t prompt_index,
                               const ItemContext& c, size_t segment);
  // One answer a reduce level is asked over: a map's, or a reduce's of the level below.
  struct ReducePiece {
    int64_t task_id = 0;
    std::string custom_id;
    std::optional<double> start_seconds;
    std::optional<double> end_seconds;
    int64_t first_segment = 0;  // the segments of the video it covers
    int64_t last_segment = 0;
    // Several files in one context: its first and last frame ("a.mp4 0.0 s", "d.png"), which
    // head it instead of the times; "" otherwise.
    std::string first_label = {};
    std::string last_label = {};
  };
  // Consecutive pieces [first, last] asked over in one reduce.
  struct ReduceGroup {
    size_t first = 0;
    size_t last = 0;
  };
  // The answers of `pieces`, in order.
  Result<std::vector<std::string>> PieceAnswers(storage::Store& store,
                                                const std::vector<ReducePiece>& pieces);
  // The reduce context over pieces [first, last], each answer cut to `cap` bytes (" [...]"
  // added) when set; with `shorten`, fitted with shorten_text, else only checked (kLimitExceeded
  // when it does not fit).
  Result<llm::Context> BuildReduce(size_t prompt_index, int64_t margin,
                                   const std::vector<ReducePiece>& pieces,
                                   const std::vector<std::string>& answers, ReduceGroup group,
                                   std::optional<size_t> cap, bool shorten,
                                   llm::ContextInput* input);
  // The groups of one level (cached by the pieces' ids).
  Result<std::vector<ReduceGroup>> ReduceGroups(size_t prompt_index, int64_t margin,
                                                const std::string& variant, int level,
                                                const std::vector<ReducePiece>& pieces,
                                                const std::vector<std::string>& answers);
  // For a group that does not fit whole: the largest cap on each answer's bytes with which it
  // fits (the longest answers cut first, evenly); nullopt when it fits whole.
  Result<std::optional<size_t>> ReduceCap(size_t prompt_index, int64_t margin,
                                          const std::vector<ReducePiece>& pieces,
                                          const std::vector<std::string>& answers,
                                          ReduceGroup group);
  // The reduce context of one group (answers cut to `cap`), fitted with shorten_text, stored
  // under `key` with the manifest's "reduce" record (`extra`, "" for a single reduce), cached.
  Result<const ItemContext*> ReduceContext(storage::Store& store, size_t prompt_index,
                                           int64_t margin, const std::string& key,
                                           const std::vector<ReducePiece>& pieces,
                                           const std::vector<std::string>& answers,
                                           ReduceGroup group, std::optional<size_t> cap,
                                           const std::string& extra);

  const JobSpec& job_;
  const ModelSetup& setup_;
  const int64_t item_id_;
  const std::string media_path_;
  std::optional<storage::ItemRecord> item_;
  std::optional<llm::ContextInput> input_;
  std::map<std::string, std::shared_ptr<const ItemContext>> contexts_;  // by settings key
  std::map<std::string, std::shared_ptr<const ItemContext>> adopted_;   // not used yet
  std::map<std::string, std::vector<ReduceGroup>> groupings_;           // by level key
  PlannerCounters counters_;
};

}  // namespace reel::jobs
