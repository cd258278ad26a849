// Contexts of stored items, shared by the context stage and `reel context`: stored rows become an
// llm::ContextInput, the job's settings llm::ContextOptions, a built context's segments rows of
// the contexts table. A context's settings key hashes everything it is built from, so a run
// rebuilds only what changed. Details: jobs/context/README.md, "Item contexts".
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "jobs/context/context_frames.h"
#include "jobs/spec/job_spec.h"
#include "llm/client/chat_request.h"
#include "llm/context/chat_template.h"
#include "llm/context/context_builder.h"
#include "llm/context/token_counter.h"
#include "llm/tokenizer/tokenizer.h"
#include "storage/records.h"
#include "storage/store.h"

namespace reel::jobs {

// The template, and the tokenizer (or the estimate) of a job; loaded once, shared by threads.
struct ContextSetup {
  llm::ChatTemplate chat_template;
  std::unique_ptr<llm::Tokenizer> tokenizer;  // null: estimate
  std::string tokenizer_path;
  std::string tokenizer_sha256;
  std::unique_ptr<llm::TokenCounter> counter;
  // context.attach: each file's text (decoded to UTF-8) as a document named "attached:<file
  // name>", and the SHA-256 of them all ("" when there are none).
  std::vector<llm::ContextText> attached;
  std::string attached_sha256;
};

// Errors: the tokenizer file cannot be read or is refused (the message names it), or lacks one of
// the template's special tokens (a tokenizer of another model: kInvalidArgument naming them); an
// attached file (context.attach) cannot be read or is not text (the message names it).
Result<std::shared_ptr<const ContextSetup>> LoadContextSetup(const JobSpec& job);

// The stored item as builder input. With a job, its timed text is what the job's speech settings
// choose (ChooseTimedText; an audio item's transcript is taken with speech off too); null: every
// stored text. Errors: the item is missing.
Result<llm::ContextInput> LoadContextInput(storage::Store& store, int64_t item_id,
                                           const JobSpec* job);

// The timed text a context takes from a video's: subtitles (streams "subtitle:N", side-car files
// "sidecar:NAME") and the transcript (source "speech") as speech.prefer says; the transcript not
// at all while speech is off (one stored by an earlier run stays searchable). Other texts stay.
void ChooseTimedText(const SpeechSpec& speech, std::vector<llm::ContextText>* texts);

// Whether contexts of `item` can be built now: with speech on, a video's transcript, and always an
// audio item's (TranscribesSpeech), must be finished for the job's settings (done, or failed for
// good: its audio cannot be read). Not ready: kUnavailable saying why (still running, partial: a
// rerun retries).
Status TranscriptReady(storage::Store& store, const JobSpec& job, const storage::ItemRecord& item);

// Adds the job's attached texts (ContextSetup::attached) to `input`, after its own texts.
void AddAttachedTexts(const ContextSetup& setup, llm::ContextInput* input);

// The builder's options: the job's context settings, and the system text and question the prompt
// sends (jobs/spec/prompt_kinds.h: a chapters prompt's built-in question names the item's
// duration).
llm::ContextOptions ContextOptionsFor(const JobSpec& job, const PromptSpec& prompt,
                                      const llm::ContextInput& input);

std::string ContextSettingsKey(const JobSpec& job, const PromptSpec& prompt,
                               const ContextSetup& setup, const storage::ItemRecord& item);

// Stores each segment of `context` (built from `item`) as a contexts row, all in one transaction
// (a crash leaves the whole context stored or none of it); returns the ids. `base_key`: the
// settings key of the job's context it derives from (a re-fit, a reduce); "" = `settings_key`.
// The rows name their frame source (jobs/context/context_frames.h), for deleting their cached
// frames when they are superseded. `manifest_extra` (compact JSON object, "" = none): members added
// to every row's manifest (a reduce level's record of what it covers, jobs/model/model_plan.h).
Result<std::vector<int64_t>> StoreContext(storage::Store& store, const storage::ItemRecord& item,
                                          const PromptSpec& prompt, const llm::Context& context,
                                          const llm::ContextInput& input,
                                          const std::string& settings_key,
                                          const std::string& base_key = "",
                                          const std::string& manifest_extra = "");

// Deletes the contexts of `item` the job no longer builds (`current`: each prompt's settings key
// now) and the frame files in `frame_cache` that only they sent; rows a task or request refers
// to are kept, marked superseded (storage::Store::RetireContexts). Errors: the database's.
Result<storage::RetiredContexts> RetireOldContexts(
    storage::Store& store, int64_t item_id,
    const std::vector<std::pair<std::string, std::string>>& current,
    const std::string& frame_cache);

// llm::ThinkingMode of the job's model setting.
llm::ThinkingMode ThinkingOf(const JobSpec& job);

// A context built from a stored item with the job's current settings: what the context stage
// stores and what a request sends.
struct ItemContext {
  storage::ItemRecord item;
  PromptSpec prompt;
  llm::ContextInput input;
  llm::Context context;
  std::string settings_key;
};

// The group's item of a question over several files (context.group) gets every file's frames,
// as the context stage builds it (jobs/context/group_context.h; a member is not asked about
// alone: the caller skips it). Errors: the item is missing; a member of its group cannot be read
// (AddGroupMedia); the context does not fit (kLimitExceeded, from BuildContext).
Result<ItemContext> BuildItemContext(storage::Store& store, const JobSpec& job,
                                     const ContextSetup& setup, int64_t item_id,
                                     const PromptSpec& prompt);

// The chat request of segment `segment` of `c`: the messages (llm/context/request_body.h) with the
// frames from the frame cache `frame_cache` (FrameCacheDir; decoded from the item's file, in one
// pass, when missing; see jobs/context/context_frames.h), the job's model settings and the prompt
// kind's JSON schema (chapters). The file transport sends the item's absolute path as a file://
// URL.
Result<llm::ChatRequest> ContextChatRequest(const JobSpec& job, const ItemContext& c,
                                            size_t segment, const std::string& frame_cache,
                                            ContextFramesReport* frames = nullptr);

}  // namespace reel::jobs
