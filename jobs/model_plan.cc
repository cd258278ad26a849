#include "jobs/model_plan.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "jobs/context_frames.h"
#include "jobs/prompt_kinds.h"
#include "llm/request_body.h"
#include "storage/sha256.h"

namespace reel::jobs {
namespace {

using storage::TaskRecord;
using storage::TaskStatus;
using storage::TaskStep;

std::string Seconds(double s) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.1f", s);
  return buffer;
}

// Everything before the question of a segment: equal keys mean byte-identical prefixes.
std::string PrefixKey(const llm::Context& ctx, size_t segment, const llm::ContextInput& input) {
  const llm::ContextSegment& seg = ctx.segments[segment];
  std::string key = "system\n" + seg.system_prompt + "\n";
  for (size_t i = 0; i + 1 < seg.parts.size(); ++i) {
    const llm::ContextPart& p = seg.parts[i];
    key += "part " + std::to_string(static_cast<int>(p.kind)) + " " + std::to_string(p.width) +
           "x" + std::to_string(p.height) + "\n" + p.text + "\n";
    for (size_t f : p.frames) {
      key += std::to_string(f < input.frames.size() ? input.frames[f].sample_index : -1) + ",";
    }
    key += "\n";
  }
  key += "padding\n" + seg.padding + "\ntransport " + llm::TransportName(ctx.transport) + "\n" +
         input.item_path;
  return storage::Sha256Hex(key);
}

const char* KindName(llm::ContextItemKind kind) {
  switch (kind) {
    case llm::ContextItemKind::kVideo:
      return "video";
    case llm::ContextItemKind::kImage:
      return "image";
    case llm::ContextItemKind::kDocument:
      return "document";
    case llm::ContextItemKind::kSubtitle:
      return "subtitle";
  }
  return "?";
}

}  // namespace

ItemPlanner::ItemPlanner(const JobSpec& job, const ModelSetup& setup, int64_t item_id,
                         std::string media_path)
    : job_(job), setup_(setup), item_id_(item_id), media_path_(std::move(media_path)) {}

const std::string& ItemPlanner::item_path() const {
  static const std::string kNone;
  return item_ ? item_->path : kNone;
}

llm::ChapterTimeline ItemPlanner::Timeline() const {
  llm::ChapterTimeline timeline;
  if (!input_) return timeline;
  for (const llm::ContextFrame& f : input_->frames) timeline.frame_times.push_back(f.time_s);
  if (input_->duration_s > 0) timeline.duration_seconds = input_->duration_s;
  return timeline;
}

PlannerCounters ItemPlanner::TakeCounters() {
  PlannerCounters taken = counters_;
  counters_ = PlannerCounters();
  return taken;
}

void ItemPlanner::Adopt(std::vector<std::shared_ptr<const ItemContext>> built) {
  for (std::shared_ptr<const ItemContext>& c : built) {
    if (c != nullptr && c->item.id == item_id_) adopted_[c->settings_key] = std::move(c);
  }
}

Status ItemPlanner::Load(storage::Store& store) {
  if (item_) return Status::Ok();
  REEL_ASSIGN_OR_RETURN(std::optional<storage::ItemRecord> item, store.GetItem(item_id_));
  if (!item) return NotFound("item " + std::to_string(item_id_) + " is not in the database");
  item_ = std::move(*item);
  REEL_ASSIGN_OR_RETURN(llm::ContextInput input, LoadContextInput(store, item_id_));
  input_ = std::move(input);
  return Status::Ok();
}

std::string ItemPlanner::BaseKey(size_t prompt_index) const {
  return ContextSettingsKey(job_, job_.prompts[prompt_index], *setup_.context, *item_);
}

Result<const ItemContext*> ItemPlanner::ContextFor(size_t prompt_index, const std::string& key,
                                                   int64_t margin) {
  auto it = contexts_.find(key);
  if (it != contexts_.end()) return it->second.get();
  const PromptSpec& prompt = job_.prompts[prompt_index];
  auto adopted = adopted_.find(key);
  if (adopted != adopted_.end() && margin == 0 && adopted->second->prompt.id == prompt.id) {
    ++counters_.contexts_reused;
    const ItemContext* c = adopted->second.get();
    contexts_.emplace(key, std::move(adopted->second));
    adopted_.erase(adopted);
    return c;
  }
  llm::ContextOptions options = ContextOptionsFor(job_, prompt, *input_);
  options.token_budget -= margin;
  Result<llm::Context> built =
      llm::BuildContext(*input_, options, setup_.context->chat_template, *setup_.context->counter);
  ++counters_.contexts_built;
  if (!built.ok()) return built.status();
  auto c = std::make_shared<const ItemContext>(
      ItemContext{*item_, prompt, *input_, std::move(built).value(), key});
  return contexts_.emplace(key, std::move(c)).first->second.get();
}

Result<std::vector<storage::ContextRow>> ItemPlanner::CompleteRows(
    storage::Store& store, size_t prompt_index, const std::string& key, int64_t margin,
    std::vector<storage::ContextRow> rows) {
  bool complete = true;
  for (size_t s = 0; s < rows.size(); ++s) {
    if (rows[s].segment_index != static_cast<int64_t>(s) ||
        rows[s].segment_count != static_cast<int64_t>(rows.size())) {
      complete = false;
    }
  }
  if (complete) return rows;
  REEL_ASSIGN_OR_RETURN(const ItemContext* built, ContextFor(prompt_index, key, margin));
  const llm::Context* context = &built->context;
  const PromptSpec& prompt = job_.prompts[prompt_index];
  REEL_RETURN_IF_ERROR(
      StoreContext(store, *item_, prompt, *context, *input_, key, BaseKey(prompt_index)).status());
  storage::TaskStore tasks(store.database());
  REEL_ASSIGN_OR_RETURN(rows, tasks.ListContexts(item_id_, prompt.id, key));
  // Rows of another build under the same key (none expected) are left out.
  std::vector<storage::ContextRow> mine;
  for (size_t s = 0; s < context->segments.size(); ++s) {
    const std::string hash = storage::Sha256Hex(context->ManifestJson(*input_, s));
    for (const storage::ContextRow& row : rows) {
      if (row.context_hash == hash) {
        mine.push_back(row);
        break;
      }
    }
  }
  if (mine.size() != context->segments.size()) {
    return Internal("the stored segments of prompt '" + prompt.id + "' could not be completed");
  }
  return mine;
}

Result<const ItemContext*> ItemPlanner::ReduceContext(storage::Store& store, size_t prompt_index,
                                                      const std::string& variant, int64_t margin,
                                                      const std::vector<TaskRecord>& maps,
                                                      const std::vector<storage::ContextRow>& rows,
                                                      std::string* reduce_key) {
  *reduce_key = ReduceKey(variant);
  auto it = contexts_.find(*reduce_key);
  if (it != contexts_.end()) return it->second.get();
  storage::TaskStore tasks(store.database());
  const PromptSpec& prompt = job_.prompts[prompt_index];
  std::string text;
  for (size_t s = 0; s < maps.size(); ++s) {
    REEL_ASSIGN_OR_RETURN(std::optional<storage::AnswerRecord> answer, tasks.GetAnswer(maps[s].id));
    if (!answer) return Internal("segment " + std::to_string(s) + " has no stored answer");
    if (!text.empty()) text += "\n";
    text += "Part " + std::to_string(s + 1) + " of " + std::to_string(maps.size());
    if (rows[s].start_seconds && rows[s].end_seconds) {
      text +=
          " (" + Seconds(*rows[s].start_seconds) + " s to " + Seconds(*rows[s].end_seconds) + " s)";
    }
    text += ":\n" + answer->content + "\n";
  }
  llm::ContextInput in;
  in.item_path = input_->item_path;
  in.kind = llm::ContextItemKind::kDocument;
  in.duration_s = input_->duration_s;
  in.texts.push_back({"answers", std::nullopt, std::nullopt, std::move(text)});
  llm::ContextOptions options = ContextOptionsFor(job_, prompt, *input_);
  options.token_budget -= margin;
  options.question =
      ReduceQuestion(job_, prompt, options.question, static_cast<int64_t>(maps.size()));
  options.fit_steps = {llm::FitStep::kShortenText};
  Result<llm::Context> built =
      llm::BuildContext(in, options, setup_.context->chat_template, *setup_.context->counter);
  ++counters_.contexts_built;
  if (!built.ok()) return built.status().WithPrefix("the reduce over the segments' answers");
  REEL_RETURN_IF_ERROR(
      StoreContext(store, *item_, prompt, *built, in, *reduce_key, BaseKey(prompt_index)).status());
  auto c = std::make_shared<const ItemContext>(
      ItemContext{*item_, prompt, std::move(in), std::move(built).value(), *reduce_key});
  return contexts_.emplace(*reduce_key, std::move(c)).first->second.get();
}

Result<PlannedSend> ItemPlanner::MakeSend(const TaskRecord& task, size_t prompt_index,
                                          const ItemContext& c, size_t segment) {
  const PromptSpec& prompt = job_.prompts[prompt_index];
  PlannedSend send;
  send.task = task;
  send.prompt_index = prompt_index;
  // The messages with the frames from the job's frame cache, the model settings, the prompt
  // kind's schema (jobs/item_context.h); then this job's own schema and streaming.
  ContextFramesReport frames;
  REEL_ASSIGN_OR_RETURN(send.request,
                        ContextChatRequest(job_, c, segment, setup_.frame_cache, &frames));
  counters_.frame_passes += frames.passes;
  counters_.frames_decoded += frames.decoded;
  const std::string schema = setup_.schemas.count(prompt.id) ? setup_.schemas.at(prompt.id) : "";
  if (!schema.empty() && schema != send.request.json_schema) {
    send.request.json_schema = schema;
    send.request.json_schema_name = "answer";
  }
  send.request.stream = job_.model.stream;
  send.prefix_key = PrefixKey(c.context, segment, c.input);
  send.shape = std::string(KindName(c.input.kind)) + " " + llm::TransportName(c.context.transport) +
               " " + std::to_string(c.context.frame_width) + "x" +
               std::to_string(c.context.frame_height) + " " + storage::TaskStepName(task.step);
  return send;
}

Result<PromptPlan> ItemPlanner::Plan(storage::Store& store, size_t prompt_index,
                                     const PlanOptions& options) {
  REEL_RETURN_IF_ERROR(Load(store));
  const PromptSpec& prompt = job_.prompts.at(prompt_index);
  PromptPlan plan;
  // A prompt that does not apply to the item (chapters of a document) is never asked, even where
  // an older run stored a context for it.
  if (!PromptAppliesTo(prompt, *input_)) return plan;  // kNoContext
  const std::string schema = setup_.schemas.count(prompt.id) ? setup_.schemas.at(prompt.id) : "";
  storage::TaskStore tasks(store.database());

  const std::string base_key = ContextSettingsKey(job_, prompt, *setup_.context, *item_);
  REEL_ASSIGN_OR_RETURN(std::vector<storage::ContextRow> rows,
                        tasks.ListContexts(item_id_, prompt.id, base_key));
  if (rows.empty()) return plan;  // kNoContext
  // A split context is stored in one transaction; a database written by an older Reel (which
  // stored the segments one by one) can hold some of them after a kill: store the rest (the same
  // rows: contexts are keyed by their manifest's hash).
  REEL_ASSIGN_OR_RETURN(rows, CompleteRows(store, prompt_index, base_key, 0, std::move(rows)));
  REEL_ASSIGN_OR_RETURN(std::vector<TaskRecord> stored, tasks.ListTasks(item_id_));
  std::map<std::string, TaskRecord> by_id;
  for (TaskRecord& t : stored) by_id.emplace(t.custom_id, std::move(t));

  auto id_of = [&](const std::string& key, TaskStep step, int64_t segment) {
    return CustomId(job_, item_->path, prompt, schema, key, step, segment);
  };
  auto unit_step = [](size_t n) { return n == 1 ? TaskStep::kAsk : TaskStep::kMap; };

  // A too-long refusal of the context as built: fit it again with the server's difference.
  int64_t margin = 0;
  for (size_t s = 0; s < rows.size(); ++s) {
    auto it = by_id.find(id_of(base_key, unit_step(rows.size()), static_cast<int64_t>(s)));
    if (it != by_id.end() && it->second.status == TaskStatus::kFailed &&
        it->second.last_outcome.value_or("") == "prompt too long") {
      margin = std::max(margin, RefitMargin(it->second));
    }
  }
  std::string variant = base_key;
  if (margin > 0) {
    variant = RefitKey(base_key, margin);
    REEL_ASSIGN_OR_RETURN(rows, tasks.ListContexts(item_id_, prompt.id, variant));
    if (!rows.empty()) {
      REEL_ASSIGN_OR_RETURN(rows,
                            CompleteRows(store, prompt_index, variant, margin, std::move(rows)));
    }
    if (rows.empty()) {
      Result<const ItemContext*> refit = ContextFor(prompt_index, variant, margin);
      if (!refit.ok()) {
        plan.state = PromptState::kFailed;
        plan.message = "the server found the prompt too long; re-fitting it with " +
                       std::to_string(margin) +
                       " tokens more margin failed: " + refit.status().message();
        return plan;
      }
      REEL_RETURN_IF_ERROR(
          StoreContext(store, *item_, prompt, (*refit)->context, *input_, variant, base_key)
              .status());
      REEL_ASSIGN_OR_RETURN(rows, tasks.ListContexts(item_id_, prompt.id, variant));
      plan.message = "re-fitted with " + std::to_string(margin) +
                     " tokens more margin after the server found it too long";
    }
  }

  const size_t n = rows.size();
  std::vector<TaskRecord> units;
  for (size_t s = 0; s < n; ++s) {
    const std::string id = id_of(variant, unit_step(n), static_cast<int64_t>(s));
    auto it = by_id.find(id);
    if (it != by_id.end()) {
      units.push_back(it->second);
      continue;
    }
    TaskRecord t;
    t.custom_id = id;
    t.item_id = item_id_;
    t.prompt_id = prompt.id;
    t.context_id = rows[s].id;
    t.step = unit_step(n);
    t.segment_index = static_cast<int64_t>(s);
    t.segment_count = static_cast<int64_t>(n);
    t.start_seconds = rows[s].start_seconds;
    t.end_seconds = rows[s].end_seconds;
    t.local_prompt_tokens = rows[s].total_tokens;
    if (!schema.empty()) t.json_schema = schema;
    REEL_ASSIGN_OR_RETURN(TaskRecord ensured, tasks.EnsureTask(t));
    units.push_back(std::move(ensured));
  }

  auto scheduled = [&](const TaskRecord& t) {
    return options.scheduled != nullptr && options.scheduled->count(t.id) > 0;
  };
  auto sendable = [&](const TaskRecord& t) {
    if (scheduled(t)) return false;
    switch (t.status) {
      case TaskStatus::kWaiting:
        return true;
      case TaskStatus::kSent:
        return options.include_sent;
      case TaskStatus::kFailed:
        return options.resend_failed && t.last_outcome.value_or("") != "prompt too long" &&
               (options.run_uid.empty() || t.last_run_uid.value_or("") != options.run_uid);
      case TaskStatus::kSucceeded:
        return false;
    }
    return false;
  };
  auto failure = [](const TaskRecord& t) {
    std::string what = t.step == TaskStep::kMap ? "segment " + std::to_string(t.segment_index + 1) +
                                                      " of " + std::to_string(t.segment_count)
                                                : std::string(storage::TaskStepName(t.step));
    return what + " failed (" + t.last_outcome.value_or("failed") + ")";
  };

  plan.state = PromptState::kPending;
  if (n == 1 && units[0].status == TaskStatus::kSucceeded) {
    plan.state = PromptState::kDone;
    plan.final_task_id = units[0].id;
    return plan;
  }
  std::vector<size_t> to_send;
  bool all_answered = true;
  for (size_t s = 0; s < n; ++s) {
    const TaskRecord& t = units[s];
    if (t.status == TaskStatus::kSucceeded) continue;
    all_answered = false;
    if (sendable(t)) {
      to_send.push_back(s);
    } else if (t.status == TaskStatus::kFailed && !scheduled(t)) {
      plan.state = PromptState::kFailed;
      plan.message = failure(t);
      return plan;
    }
  }
  if (!to_send.empty()) {
    if (!options.build_bodies) {  // recorded; nothing is sent
      for (size_t s : to_send) {
        PlannedSend send;
        send.task = units[s];
        send.prompt_index = prompt_index;
        plan.sends.push_back(std::move(send));
      }
      return plan;
    }
    REEL_ASSIGN_OR_RETURN(const ItemContext* c, ContextFor(prompt_index, variant, margin));
    std::vector<size_t> frames;
    for (size_t s : to_send) {
      if (s >= c->context.segments.size()) {
        return Internal("segment " + std::to_string(s) + " is missing from the context built now");
      }
      if (storage::Sha256Hex(c->context.ManifestJson(*input_, s)) != rows[s].context_hash) {
        plan.message = "the context built now differs from the stored one (segment " +
                       std::to_string(s) + "); the one built now is sent";
      }
      std::vector<size_t> f = llm::FramesNeeded(c->context, s);
      frames.insert(frames.end(), f.begin(), f.end());
    }
    // Every frame these requests need, decoded in one pass into the frame cache.
    if (!frames.empty()) {
      std::sort(frames.begin(), frames.end());
      frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
      ContextFramesReport report;
      Result<std::vector<std::string>> files =
          ContextFrameFiles(job_, *item_, *input_, c->context, frames, setup_.frame_cache, &report);
      counters_.frame_passes += report.passes;
      counters_.frames_decoded += report.decoded;
      REEL_RETURN_IF_ERROR(files.status());
    }
    for (size_t s : to_send) {
      REEL_ASSIGN_OR_RETURN(PlannedSend send, MakeSend(units[s], prompt_index, *c, s));
      plan.sends.push_back(std::move(send));
    }
    return plan;
  }
  if (n == 1 || !all_answered) return plan;  // waiting for answers in flight

  // Every segment answered: the reduce.
  const std::string reduce_id = id_of(variant, TaskStep::kReduce, 0);
  auto it = by_id.find(reduce_id);
  std::optional<TaskRecord> reduce;
  if (it != by_id.end()) reduce = it->second;
  if (reduce && reduce->status == TaskStatus::kSucceeded) {
    plan.state = PromptState::kDone;
    plan.final_task_id = reduce->id;
    return plan;
  }
  if (reduce && !sendable(*reduce)) {
    if (reduce->status == TaskStatus::kFailed && !scheduled(*reduce)) {
      plan.state = PromptState::kFailed;
      plan.message = failure(*reduce);
    }
    return plan;
  }
  if (!options.build_bodies && reduce) {
    PlannedSend send;
    send.task = *reduce;
    send.prompt_index = prompt_index;
    plan.sends.push_back(std::move(send));
    return plan;
  }
  std::string reduce_key;
  Result<const ItemContext*> context =
      ReduceContext(store, prompt_index, variant, margin, units, rows, &reduce_key);
  if (!context.ok()) {
    plan.state = PromptState::kFailed;
    plan.message = context.status().message();
    return plan;
  }
  if (!reduce) {
    REEL_ASSIGN_OR_RETURN(std::vector<storage::ContextRow> reduce_rows,
                          tasks.ListContexts(item_id_, prompt.id, reduce_key));
    if (reduce_rows.empty()) return Internal("the reduce context was not stored");
    TaskRecord t;
    t.custom_id = reduce_id;
    t.item_id = item_id_;
    t.prompt_id = prompt.id;
    t.context_id = reduce_rows.front().id;
    t.step = TaskStep::kReduce;
    t.segment_index = 0;
    t.segment_count = 1;
    if (rows.front().start_seconds) t.start_seconds = rows.front().start_seconds;
    if (rows.back().end_seconds) t.end_seconds = rows.back().end_seconds;
    t.local_prompt_tokens = reduce_rows.front().total_tokens;
    if (!schema.empty()) t.json_schema = schema;
    REEL_ASSIGN_OR_RETURN(TaskRecord ensured, tasks.EnsureTask(t));
    reduce = std::move(ensured);
    if (!sendable(*reduce)) return plan;
  }
  PlannedSend send;
  if (options.build_bodies) {
    REEL_ASSIGN_OR_RETURN(send, MakeSend(*reduce, prompt_index, **context, 0));
  } else {
    send.task = *reduce;
    send.prompt_index = prompt_index;
  }
  plan.sends.push_back(std::move(send));
  return plan;
}

}  // namespace reel::jobs
