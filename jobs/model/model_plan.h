// What must be asked now about one item: the tasks of each prompt, read from and written to the
// database, and the requests to send for them. The run's model stage, `reel export` and the
// re-planning after an answer all use it, so a task's life is decided in one place.
//
// For one (item, prompt), with K the context's settings key (jobs/context/item_context.h):
//   - a prompt that does not apply to the item (jobs/spec/prompt_kinds.h: chapters of a document or
//   a
//     still image): nothing to ask;
//   - no stored context for K (the context stage failed or has not run): nothing to ask;
//   - a task of K whose last send was refused as too long: the context is built again with the
//     server's difference as extra margin (RefitMargin), stored under RefitKey, and asked
//     instead (once: a re-fitted context is never re-fitted);
//   - one segment: one "ask" task; several (a split video): one "map" task per segment, then,
//     once every map has an answer, a "reduce" task over the answers with their time ranges
//     ("Part i of N (a s to b s):" each);
//   - a reduce in levels when the answers with their headers, the reduce question, the template
//     and the reserved output do not fit the budget unshortened: the answers are grouped, in
//     time order, greedily into the fewest consecutive groups that each fit (exactly, built by
//     the context builder with no fit step), a reduce is asked over each group (level 1), then
//     the same over those answers (level 2, each headed with the time range its group covers),
//     and so on until one group holds them all: that reduce is the final task. A group of one
//     answer that does not fit alone has it cut to fit; when no two neighbours fit together the
//     level pairs them, every answer cut evenly to the largest length that fits, so every level
//     has fewer answers than the one below and the levels end (the manifest's "reduce" record
//     says by how much: "shortened"). An intermediate reduce is a "reduce"
//     task with segment_count = its level's group count (> 1; storage::IsFinalTask), keyed by
//     the ids of the tasks it is asked over; its context's manifest holds "reduce" (level,
//     group, the segments and time range covered, the tasks it reads). When everything fits
//     one reduce, the task, context and body are those of a single reduce;
//   - a task is sent when it is waiting, when it was left 'sent' (export only: the run requeues
//     those at its start), or when it failed before this run and --retry-failed asks again
//     (never a too-long one: the same body would be refused again); never twice by one run
//     (PlanOptions::tried: a question the server failed waits for the next run);
//   - rounds (`reel ask --again`): the tasks above are those of the newest round asked; with
//     ask_again, a prompt whose newest round was answered before this run starts the next round
//     (new custom ids, so every task of it is asked anew; the earlier answers stay stored).
// The prompt is done when its final task (ask or the last reduce) has an answer, failed when a
// task it needs failed and is not asked again (the message names the level and group of a
// failed reduce).
//
// Threads: an ItemPlanner is used by one thread at a time (callers serialise per item); its
// Store is the caller's.
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
