#include "jobs/model/model_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "jobs/context/context_frames.h"
#include "jobs/context/group_context.h"
#include "jobs/spec/prompt_kinds.h"
#include "llm/context/request_body.h"
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

// `answer` cut to at most `cap` bytes (at a UTF-8 character boundary), " [...]" added when cut.
std::string CutAnswer(const std::string& answer, size_t cap) {
  if (answer.size() <= cap) return answer;
  size_t n = cap;
  while (n > 0 && (static_cast<unsigned char>(answer[n]) & 0xC0) == 0x80) --n;
  return answer.substr(0, n) + " [...]";
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
    case llm::ContextItemKind::kAudio:
      return "audio";
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
  REEL_ASSIGN_OR_RETURN(llm::ContextInput input, LoadContextInput(store, item_id_, &job_));
  AddAttachedTexts(*setup_.context, &input);
  REEL_RETURN_IF_ERROR(AddGroupMedia(store, job_, *item_, &input));
  input_ = std::move(input);
  return Status::Ok();
}

std::string ItemPlanner::BaseKey(size_t prompt_index) const {
  return GroupSettingsKey(
      ContextSettingsKey(job_, job_.prompts[prompt_index], *setup_.context, *item_), *input_);
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

Result<std::vector<std::string>> ItemPlanner::PieceAnswers(storage::Store& store,
                                                           const std::vector<ReducePiece>& pieces) {
  storage::TaskStore tasks(store.database());
  std::vector<std::string> answers;
  for (const ReducePiece& p : pieces) {
    REEL_ASSIGN_OR_RETURN(std::optional<storage::AnswerRecord> answer, tasks.GetAnswer(p.task_id));
    if (!answer) {
      return Internal("segments " + std::to_string(p.first_segment + 1) + "-" +
                      std::to_string(p.last_segment + 1) + " have no stored answer");
    }
    answers.push_back(std::move(answer->content));
  }
  return answers;
}

Result<llm::Context> ItemPlanner::BuildReduce(size_t prompt_index, int64_t margin,
                                              const std::vector<ReducePiece>& pieces,
                                              const std::vector<std::string>& answers,
                                              ReduceGroup group, std::optional<size_t> cap,
                                              bool shorten, llm::ContextInput* input) {
  const PromptSpec& prompt = job_.prompts[prompt_index];
  const size_t parts = group.last - group.first + 1;
  std::string text;
  for (size_t s = group.first; s <= group.last; ++s) {
    if (!text.empty()) text += "\n";
    text += "Part " + std::to_string(s - group.first + 1) + " of " + std::to_string(parts);
    if (pieces[s].start_seconds && pieces[s].end_seconds && input_->paged) {
      text += " (pages " + std::to_string(std::llround(*pieces[s].start_seconds)) + " to " +
              std::to_string(std::llround(*pieces[s].end_seconds)) + ")";
    } else if (!pieces[s].first_label.empty()) {  // several files: the files and times it covers
      text += " (" + pieces[s].first_label + " to " + pieces[s].last_label + ")";
    } else if (pieces[s].start_seconds && pieces[s].end_seconds) {
      text += " (" + Seconds(*pieces[s].start_seconds) + " s to " +
              Seconds(*pieces[s].end_seconds) + " s)";
    }
    text += ":\n" + (cap ? CutAnswer(answers[s], *cap) : answers[s]) + "\n";
  }
  llm::ContextInput in;
  in.item_path = input_->item_path;
  in.kind = llm::ContextItemKind::kDocument;
  in.duration_s = input_->duration_s;
  in.texts.push_back({"answers", std::nullopt, std::nullopt, std::move(text)});
  llm::ContextOptions options = ContextOptionsFor(job_, prompt, *input_);
  options.token_budget -= margin;
  options.question = ReduceQuestion(job_, prompt, options.question, static_cast<int64_t>(parts),
                                    /*several_files=*/!input_->sources.empty());
  options.fit_steps.clear();
  if (shorten) options.fit_steps = {llm::FitStep::kShortenText};
  Result<llm::Context> built =
      llm::BuildContext(in, options, setup_.context->chat_template, *setup_.context->counter);
  if (input != nullptr) *input = std::move(in);
  return built;
}

Result<std::vector<ItemPlanner::ReduceGroup>> ItemPlanner::ReduceGroups(
    size_t prompt_index, int64_t margin, const std::string& variant, int level,
    const std::vector<ReducePiece>& pieces, const std::vector<std::string>& answers) {
  std::string cache_key = variant + "\n" + std::to_string(level);
  for (const ReducePiece& p : pieces) cache_key += "\n" + p.custom_id;
  auto cached = groupings_.find(cache_key);
  if (cached != groupings_.end()) return cached->second;
  auto fits = [&](size_t first, size_t last) -> Result<bool> {
    Result<llm::Context> built =
        BuildReduce(prompt_index, margin, pieces, answers, {first, last}, std::nullopt,
                    /*shorten=*/false, nullptr);
    if (built.ok()) return true;
    if (built.status().code() == ErrorCode::kLimitExceeded) return false;
    return built.status();
  };
  std::vector<ReduceGroup> groups;
  // Everything in one reduce (the common case) is one build.
  REEL_ASSIGN_OR_RETURN(bool all, fits(0, pieces.size() - 1));
  if (all) {
    groups.push_back({0, pieces.size() - 1});
  } else {
    for (size_t first = 0; first < pieces.size();) {
      size_t last = first;
      REEL_ASSIGN_OR_RETURN(bool alone, fits(first, first));
      while (alone && last + 1 < pieces.size()) {
        REEL_ASSIGN_OR_RETURN(bool more, fits(first, last + 1));
        if (!more) break;
        ++last;
      }
      groups.push_back({first, last});  // alone and too long: shortened when built
      first = last + 1;
    }
    if (groups.size() == pieces.size()) {
      // No two neighbours fit together: pairs, shortened, so the levels end.
      groups.clear();
      for (size_t first = 0; first < pieces.size(); first += 2) {
        groups.push_back({first, std::min(first + 1, pieces.size() - 1)});
      }
    }
  }
  groupings_.emplace(cache_key, groups);
  return groups;
}

Result<std::optional<size_t>> ItemPlanner::ReduceCap(size_t prompt_index, int64_t margin,
                                                     const std::vector<ReducePiece>& pieces,
                                                     const std::vector<std::string>& answers,
                                                     ReduceGroup group) {
  auto fits = [&](std::optional<size_t> cap) -> Result<bool> {
    Result<llm::Context> built = BuildReduce(prompt_index, margin, pieces, answers, group, cap,
                                             /*shorten=*/false, nullptr);
    if (built.ok()) return true;
    if (built.status().code() == ErrorCode::kLimitExceeded) return false;
    return built.status();
  };
  REEL_ASSIGN_OR_RETURN(bool whole, fits(std::nullopt));
  if (whole) return std::optional<size_t>();
  size_t lo = 0, hi = 0;
  for (size_t s = group.first; s <= group.last; ++s) hi = std::max(hi, answers[s].size());
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    REEL_ASSIGN_OR_RETURN(bool ok, fits(mid));
    if (ok) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return std::optional<size_t>(lo);  // 0 and still too long: shorten_text cuts the rest
}

Result<const ItemContext*> ItemPlanner::ReduceContext(storage::Store& store, size_t prompt_index,
                                                      int64_t margin, const std::string& key,
                                                      const std::vector<ReducePiece>& pieces,
                                                      const std::vector<std::string>& answers,
                                                      ReduceGroup group, std::optional<size_t> cap,
                                                      const std::string& extra) {
  auto it = contexts_.find(key);
  if (it != contexts_.end()) return it->second.get();
  const PromptSpec& prompt = job_.prompts[prompt_index];
  llm::ContextInput in;
  Result<llm::Context> built =
      BuildReduce(prompt_index, margin, pieces, answers, group, cap, /*shorten=*/true, &in);
  ++counters_.contexts_built;
  if (!built.ok()) return built.status().WithPrefix("the reduce over the segments' answers");
  REEL_RETURN_IF_ERROR(
      StoreContext(store, *item_, prompt, *built, in, key, BaseKey(prompt_index), extra).status());
  auto c = std::make_shared<const ItemContext>(
      ItemContext{*item_, prompt, std::move(in), std::move(built).value(), key});
  return contexts_.emplace(key, std::move(c)).first->second.get();
}

Result<PlannedSend> ItemPlanner::MakeSend(const TaskRecord& task, size_t prompt_index,
                                          const ItemContext& c, size_t segment) {
  const PromptSpec& prompt = job_.prompts[prompt_index];
  PlannedSend send;
  send.task = task;
  send.prompt_index = prompt_index;
  // The messages with the frames from the job's frame cache, the model settings, the prompt
  // kind's schema (jobs/context/item_context.h); then this job's own schema and streaming.
  ContextFramesReport frames;
  REEL_ASSIGN_OR_RETURN(send.request,
                        ContextChatRequest(job_, c, segment, setup_.frame_cache, &frames));
  counters_.frame_passes += frames.passes;
  counters_.frames_decoded += frames.decoded;
  const std::string schema = setup_.schemas.count(prompt.id) ? setup_.schemas.at(prompt.id) : "";
  // The job's own schema replaces the kind's; a kind's schema (chapters) depends on the item's
  // length, so it is the one ContextChatRequest set.
  const bool own_schema = !prompt.json_schema.empty() || !prompt.json_schema_file.empty();
  if (own_schema && !schema.empty() && schema != send.request.json_schema) {
    send.request.json_schema = schema;
    send.request.json_schema_name = "answer";
  }
  send.request.stream = job_.model.stream;
  send.prefix_key = PrefixKey(c.context, segment, c.input);
  send.shape = std::string(KindName(c.input.kind)) + " " + llm::TransportName(c.context.transport) +
               " " + std::to_string(c.context.frame_width) + "x" +
               std::to_string(c.context.frame_height) + " " + storage::TaskStepName(task.step);
  send.final_step = storage::IsFinalTask(task);
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
  // What is asked, stored with each task (a reduce keeps the question its answer answers).
  const std::string question =
      PromptRequestFor(
          prompt, input_->duration_s > 0 ? std::optional<double>(input_->duration_s) : std::nullopt)
          .question;
  storage::TaskStore tasks(store.database());

  const std::string base_key = BaseKey(prompt_index);
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

  auto unit_step = [](size_t n) { return n == 1 ? TaskStep::kAsk : TaskStep::kMap; };
  // The round: the newest one asked; with ask_again, a new one when the newest was answered
  // before this run (request_setup.h).
  int round = 0;
  auto first_of_round = [&](int r) {
    return CustomId(job_, item_->path, prompt, schema, base_key, unit_step(rows.size()), 0, r);
  };
  while (by_id.count(first_of_round(round + 1)) > 0) ++round;
  if (options.ask_again) {
    auto it = by_id.find(first_of_round(round));
    if (it != by_id.end() && it->second.status == TaskStatus::kSucceeded &&
        (options.run_uid.empty() || it->second.last_run_uid.value_or("") != options.run_uid)) {
      ++round;
    }
  }
  auto id_of = [&](const std::string& key, TaskStep step, int64_t segment) {
    return CustomId(job_, item_->path, prompt, schema, key, step, segment, round);
  };

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
    t.question = question;
    REEL_ASSIGN_OR_RETURN(TaskRecord ensured, tasks.EnsureTask(t));
    units.push_back(std::move(ensured));
  }

  auto scheduled = [&](const TaskRecord& t) {
    return options.scheduled != nullptr && options.scheduled->count(t.id) > 0;
  };
  auto sendable = [&](const TaskRecord& t) {
    if (scheduled(t)) return false;
    if (options.tried != nullptr && options.tried->count(t.id) > 0) return false;
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
        send.final_step = storage::IsFinalTask(units[s]);
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

  // Every segment answered: the reduce, in levels when the answers do not fit one (model_plan.h).
  // The final reduce answered (by this Reel or, as one shortened reduce, an older one): done.
  const std::string final_id = id_of(variant, TaskStep::kReduce, 0);
  {
    auto it = by_id.find(final_id);
    if (it != by_id.end() && it->second.status == TaskStatus::kSucceeded) {
      plan.state = PromptState::kDone;
      plan.final_task_id = it->second.id;
      return plan;
    }
  }
  auto bare_send = [&](const TaskRecord& t) {
    PlannedSend send;
    send.task = t;
    send.prompt_index = prompt_index;
    send.final_step = storage::IsFinalTask(t);
    return send;
  };
  auto fail = [&](const std::string& message) {
    plan.state = PromptState::kFailed;
    plan.sends.clear();
    plan.message = message;
    return plan;
  };
  std::vector<ReducePiece> pieces;
  for (size_t s = 0; s < n; ++s) {
    pieces.push_back({units[s].id, units[s].custom_id, rows[s].start_seconds, rows[s].end_seconds,
                      static_cast<int64_t>(s), static_cast<int64_t>(s)});
  }
  if (!input_->sources.empty()) {  // several files: each part named by the files it covers
    Result<const ItemContext*> split = ContextFor(prompt_index, variant, margin);
    if (split.ok() && (*split)->context.segments.size() == n) {
      for (size_t s = 0; s < n; ++s) {
        pieces[s].first_label = (*split)->context.segments[s].first_label;
        pieces[s].last_label = (*split)->context.segments[s].last_label;
      }
    }
  }
  for (int level = 1;; ++level) {
    Result<std::vector<std::string>> answers = PieceAnswers(store, pieces);
    if (!answers.ok()) return fail(answers.status().message());
    Result<std::vector<ReduceGroup>> grouped =
        ReduceGroups(prompt_index, margin, variant, level, pieces, *answers);
    if (!grouped.ok()) {
      return fail(grouped.status().WithPrefix("the reduce over the segments' answers").message());
    }
    const std::vector<ReduceGroup>& groups = *grouped;
    const bool last_level = groups.size() == 1;
    const bool single = last_level && level == 1;  // one reduce, as before levels
    struct LevelTask {
      std::string key;
      std::string custom_id;
      std::optional<TaskRecord> task;
    };
    std::vector<LevelTask> level_tasks;
    for (size_t g = 0; g < groups.size(); ++g) {
      LevelTask lt;
      if (single) {
        lt.key = ReduceKey(variant);
      } else {
        std::string key = "reduce level " + std::to_string(level) + "\n" + variant;
        for (size_t p = groups[g].first; p <= groups[g].last; ++p) {
          key += "\n" + pieces[p].custom_id;
        }
        lt.key = storage::Sha256Hex(key);
      }
      lt.custom_id =
          last_level ? final_id : id_of(lt.key, TaskStep::kReduce, static_cast<int64_t>(g));
      auto it = by_id.find(lt.custom_id);
      if (it != by_id.end()) lt.task = it->second;
      level_tasks.push_back(std::move(lt));
    }
    auto describe = [&](size_t g) {
      const ReducePiece& a = pieces[groups[g].first];
      const ReducePiece& b = pieces[groups[g].last];
      std::string what = single ? std::string("reduce")
                                : "reduce level " + std::to_string(level) +
                                      (last_level ? std::string(" (final)")
                                                  : ", group " + std::to_string(g + 1) + " of " +
                                                        std::to_string(groups.size()));
      what += " (segments " + std::to_string(a.first_segment + 1) + "-" +
              std::to_string(b.last_segment + 1);
      if (a.start_seconds && b.end_seconds) {
        what += ", " + Seconds(*a.start_seconds) + " s to " + Seconds(*b.end_seconds) + " s";
      }
      return what + ")";
    };
    // Failed and not asked again: the prompt fails; in flight: wait.
    bool all_answered_here = true;
    std::vector<size_t> to_ask;
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::optional<TaskRecord>& t = level_tasks[g].task;
      if (t && t->status == TaskStatus::kSucceeded) continue;
      all_answered_here = false;
      if (!t || sendable(*t)) {
        to_ask.push_back(g);
      } else if (t->status == TaskStatus::kFailed && !scheduled(*t)) {
        return fail(single ? failure(*t)
                           : describe(g) + " failed (" + t->last_outcome.value_or("failed") + ")");
      }
    }
    if (!to_ask.empty()) {
      for (size_t g : to_ask) {
        LevelTask& lt = level_tasks[g];
        if (lt.task && !options.build_bodies) {
          plan.sends.push_back(bare_send(*lt.task));
          continue;
        }
        std::string extra;
        std::optional<size_t> cap;  // a group that does not fit whole: its answers cut evenly
        if (!single) {
          nlohmann::json parts = nlohmann::json::array();
          for (size_t p = groups[g].first; p <= groups[g].last; ++p) {
            nlohmann::json part = {{"task", pieces[p].custom_id},
                                   {"segments", {pieces[p].first_segment, pieces[p].last_segment}}};
            if (pieces[p].start_seconds && pieces[p].end_seconds) {
              part["time_range_s"] = {*pieces[p].start_seconds, *pieces[p].end_seconds};
            }
            parts.push_back(std::move(part));
          }
          const ReducePiece& a = pieces[groups[g].first];
          const ReducePiece& b = pieces[groups[g].last];
          nlohmann::json reduce = {{"level", level},
                                   {"final", last_level},
                                   {"group", g},
                                   {"groups", groups.size()},
                                   {"segments", {a.first_segment, b.last_segment}},
                                   {"parts", std::move(parts)}};
          if (a.start_seconds && b.end_seconds) {
            reduce["time_range_s"] = {*a.start_seconds, *b.end_seconds};
          }
          Result<std::optional<size_t>> capped =
              ReduceCap(prompt_index, margin, pieces, *answers, groups[g]);
          if (!capped.ok()) return fail(describe(g) + ": " + capped.status().message());
          cap = *capped;
          if (cap) {
            size_t cut = 0;
            for (size_t p = groups[g].first; p <= groups[g].last; ++p) {
              cut += (*answers)[p].size() - std::min((*answers)[p].size(), *cap);
            }
            reduce["shortened"] = {{"cap_bytes", *cap}, {"bytes_cut", cut}};
          }
          extra = nlohmann::json({{"reduce", std::move(reduce)}}).dump();
        }
        Result<const ItemContext*> context = ReduceContext(store, prompt_index, margin, lt.key,
                                                           pieces, *answers, groups[g], cap, extra);
        if (!context.ok()) {
          return fail(single ? context.status().message()
                             : describe(g) + ": " + context.status().message());
        }
        if (!lt.task) {
          REEL_ASSIGN_OR_RETURN(std::vector<storage::ContextRow> reduce_rows,
                                tasks.ListContexts(item_id_, prompt.id, lt.key));
          if (reduce_rows.empty()) return Internal("the reduce context was not stored");
          TaskRecord t;
          t.custom_id = lt.custom_id;
          t.item_id = item_id_;
          t.prompt_id = prompt.id;
          t.context_id = reduce_rows.front().id;
          t.step = TaskStep::kReduce;
          t.segment_index = last_level ? 0 : static_cast<int64_t>(g);
          t.segment_count = last_level ? 1 : static_cast<int64_t>(groups.size());
          t.start_seconds = pieces[groups[g].first].start_seconds;
          t.end_seconds = pieces[groups[g].last].end_seconds;
          t.local_prompt_tokens = reduce_rows.front().total_tokens;
          if (!schema.empty()) t.json_schema = schema;
          t.question = question;
          REEL_ASSIGN_OR_RETURN(TaskRecord ensured, tasks.EnsureTask(t));
          lt.task = std::move(ensured);
          if (!sendable(*lt.task)) continue;
        }
        if (options.build_bodies) {
          REEL_ASSIGN_OR_RETURN(PlannedSend send, MakeSend(*lt.task, prompt_index, **context, 0));
          plan.sends.push_back(std::move(send));
        } else {
          plan.sends.push_back(bare_send(*lt.task));
        }
      }
      return plan;
    }
    if (!all_answered_here) return plan;  // waiting for answers in flight
    if (last_level) {                     // answered after the check above (not expected)
      plan.state = PromptState::kDone;
      plan.final_task_id = level_tasks[0].task->id;
      return plan;
    }
    std::vector<ReducePiece> next;
    for (size_t g = 0; g < groups.size(); ++g) {
      const ReducePiece& a = pieces[groups[g].first];
      const ReducePiece& b = pieces[groups[g].last];
      next.push_back({level_tasks[g].task->id, level_tasks[g].custom_id, a.start_seconds,
                      b.end_seconds, a.first_segment, b.last_segment, a.first_label, b.last_label});
    }
    pieces = std::move(next);
  }
}

}  // namespace reel::jobs
