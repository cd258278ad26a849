#include "jobs/context/item_context.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "base/file_util.h"
#include "base/text_encoding.h"
#include "base/utf8.h"
#include "jobs/context/group_context.h"
#include "jobs/spec/prompt_kinds.h"
#include "llm/context/request_body.h"
#include "pipeline/smart_resize.h"
#include "storage/sha256.h"

namespace reel::jobs {

llm::ThinkingMode ThinkingOf(const JobSpec& job) {
  switch (job.model.thinking_mode) {
    case ThinkingMode::kEnabled:
      return llm::ThinkingMode::kEnabled;
    case ThinkingMode::kDisabled:
      return llm::ThinkingMode::kDisabled;
    case ThinkingMode::kAdaptive:
      return llm::ThinkingMode::kAdaptive;
  }
  return llm::ThinkingMode::kAdaptive;
}

Result<std::shared_ptr<const ContextSetup>> LoadContextSetup(const JobSpec& job) {
  auto setup = std::make_shared<ContextSetup>();
  REEL_ASSIGN_OR_RETURN(setup->chat_template, llm::BuiltInChatTemplate(job.context.chat_template));
  if (!job.context.tokenizer.empty()) {
    setup->tokenizer_path = ResolveJobPath(job.base_dir, job.context.tokenizer);
    REEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(setup->tokenizer_path, 1ull << 30));
    setup->tokenizer_sha256 = storage::Sha256Hex(text);
    Result<llm::Tokenizer> tok = llm::Tokenizer::FromJson(text, setup->tokenizer_path);
    if (!tok.ok()) return tok.status();
    // The template's special tokens (turn markers, media start/end, placeholders) must be single
    // tokens of the file: a file of another model would count them as text, wrongly.
    std::string missing;
    for (const std::string& special : setup->chat_template.special_tokens) {
      if (!tok->TokenToId(special)) missing += (missing.empty() ? "'" : ", '") + special + "'";
    }
    if (!missing.empty()) {
      return InvalidArgument(setup->tokenizer_path + ": has no token " + missing +
                             " of the chat template '" + setup->chat_template.name +
                             "': the tokenizer and 'context.template' are of different models");
    }
    setup->tokenizer = std::make_unique<llm::Tokenizer>(std::move(tok).value());
    setup->counter = std::make_unique<llm::TokenCounter>(
        setup->tokenizer.get(),
        setup->tokenizer_path + " (sha256 " + setup->tokenizer_sha256 + ")");
  } else {
    setup->counter = std::make_unique<llm::TokenCounter>(setup->chat_template.special_tokens);
  }
  std::string hashes;
  for (const std::string& file : job.context.attach) {
    const std::string path = ResolveJobPath(job.base_dir, file);
    Result<std::string> bytes =
        ReadFileToString(path, static_cast<uint64_t>(job.limits.max_file_bytes));
    if (!bytes.ok()) return bytes.status().WithPrefix("context.attach");
    Result<DecodedText> decoded =
        DecodeText(*bytes, {.fallback_encoding = job.text.fallback_encoding});
    if (!decoded.ok()) return decoded.status().WithPrefix("context.attach: " + path);
    if (decoded->text.find('\0') != std::string::npos) {
      return CorruptData("context.attach: " + path +
                         ": not a text file (it contains NUL bytes); attach documents or subtitle "
                         "files, give videos and images as inputs");
    }
    hashes += storage::Sha256Hex(*bytes) + " " + path + "\n";
    llm::ContextText text;
    text.source = "attached:" + std::filesystem::path(path).filename().string();
    text.text = std::move(decoded->text);
    while (!text.text.empty() && (text.text.back() == '\n' || text.text.back() == '\r')) {
      text.text.pop_back();
    }
    setup->attached.push_back(std::move(text));
  }
  if (!hashes.empty()) setup->attached_sha256 = storage::Sha256Hex(hashes);
  return std::shared_ptr<const ContextSetup>(std::move(setup));
}

void AddAttachedTexts(const ContextSetup& setup, llm::ContextInput* input) {
  for (const llm::ContextText& text : setup.attached) input->texts.push_back(text);
}

namespace {

// A document read as pages (jobs/stages/paged_document_stage.cc; its media facts "document" and
// "pages"): page texts and pictures by page number, labels, which pages read well as text, and
// in `documents.pages: images` mode (the fact's "send_text" false) no text, only page markers.
void LoadPages(const std::string& media_json, llm::ContextInput& in) {
  nlohmann::json media = nlohmann::json::parse(media_json, nullptr, false);
  if (!media.is_object() || !media.contains("document") || !media["document"].is_object()) return;
  in.paged = true;
  const bool send_text = media["document"].value("send_text", true);
  std::map<int64_t, std::string> labels;
  if (media.contains("pages") && media["pages"].is_array()) {
    for (const nlohmann::json& page : media["pages"]) {
      if (page.is_object() && page.contains("label") && page["label"].is_string()) {
        labels[page.value("page", int64_t{0})] = page["label"].get<std::string>();
      }
    }
  }
  std::set<int64_t> with_text, good_text;
  for (llm::ContextText& t : in.texts) {
    if (!IsDocumentPageSource(t.source) || !t.start_s) continue;
    const int64_t page = static_cast<int64_t>(*t.start_s);
    with_text.insert(page);
    if (auto it = labels.find(page); it != labels.end()) t.label = it->second;
    size_t visible = 0;
    for (unsigned char ch : t.text) visible += std::isspace(ch) == 0 ? 1 : 0;
    // pipeline/documents' own threshold for a scanned page (OcrOptions::min_text_chars).
    if (t.source != "ocr" && visible >= 16) good_text.insert(page);
    if (!send_text) t.text.clear();
  }
  for (llm::ContextFrame& f : in.frames) {
    const int64_t page = static_cast<int64_t>(f.time_s);
    f.page_has_text = good_text.count(page) > 0;
    in.source_width = std::max(in.source_width, f.width);
    in.source_height = std::max(in.source_height, f.height);
    if (with_text.insert(page).second) {  // a picture without text still gets its marker
      llm::ContextText marker;
      marker.source = "page";
      marker.start_s = marker.end_s = static_cast<double>(page);
      if (auto it = labels.find(page); it != labels.end()) marker.label = it->second;
      in.texts.push_back(std::move(marker));
    }
  }
}

}  // namespace

void ChooseTimedText(const SpeechSpec& speech, std::vector<llm::ContextText>* texts) {
  auto is_speech = [](const llm::ContextText& t) { return t.source == storage::kSpeechSource; };
  auto is_subtitle = [](const llm::ContextText& t) {
    return t.source.starts_with("subtitle:") || t.source.starts_with("sidecar:");
  };
  const bool has_speech = std::any_of(texts->begin(), texts->end(), is_speech);
  const bool has_subtitles = std::any_of(texts->begin(), texts->end(), is_subtitle);
  std::function<bool(const llm::ContextText&)> drop;
  if (!speech.enabled) {
    drop = is_speech;
  } else if (speech.prefer == SpeechPrefer::kSubtitles && has_subtitles) {
    drop = is_speech;
  } else if (speech.prefer == SpeechPrefer::kSpeech && has_speech) {
    drop = is_subtitle;
  } else {
    return;
  }
  texts->erase(std::remove_if(texts->begin(), texts->end(), drop), texts->end());
}

Status TranscriptReady(storage::Store& store, const JobSpec& job, const storage::ItemRecord& item) {
  const bool audio_item = item.kind == storage::ItemKind::kAudio;
  if (!audio_item && item.kind != storage::ItemKind::kVideo) return Status::Ok();
  if (!TranscribesSpeech(job, audio_item)) return Status::Ok();
  REEL_ASSIGN_OR_RETURN(std::optional<storage::TranscriptRecord> t, store.GetTranscript(item.id));
  const std::string key = ItemSpeechSettingsKey(job, audio_item, item.content_hash.value_or(""));
  const std::string wait = ": questions wait for the transcript of its speech (";
  if (!t || t->settings_key != key) {
    return Unavailable(item.path + wait + "not transcribed yet)");
  }
  switch (t->status) {
    case storage::TranscriptStatus::kDone:
      return Status::Ok();
    case storage::TranscriptStatus::kFailed:
      if (audio_item) {  // nothing else to ask about (the speech stage failed the item)
        return CorruptData(item.path +
                           ": its audio could not be read: " + t->error.value_or("unknown"));
      }
      return Status::Ok();
    case storage::TranscriptStatus::kRunning:
      return Unavailable(item.path + wait + "not finished; run again to finish it)");
    case storage::TranscriptStatus::kPartial:
      break;
  }
  return Unavailable(item.path + wait + std::to_string(t->failed_chunks) + " of " +
                     std::to_string(t->chunks) + " speech chunks not transcribed: " +
                     t->error.value_or("unknown") + "; run again to retry them)");
}

Result<llm::ContextInput> LoadContextInput(storage::Store& store, int64_t item_id,
                                           const JobSpec* job) {
  REEL_ASSIGN_OR_RETURN(std::optional<storage::ItemRecord> item, store.GetItem(item_id));
  if (!item) return NotFound("item " + std::to_string(item_id) + " is not in the database");
  llm::ContextInput in;
  in.item_path = item->path;
  switch (item->kind) {
    case storage::ItemKind::kVideo:
      in.kind = llm::ContextItemKind::kVideo;
      break;
    case storage::ItemKind::kImage:
      in.kind = llm::ContextItemKind::kImage;
      break;
    case storage::ItemKind::kDocument:
      in.kind = llm::ContextItemKind::kDocument;
      break;
    case storage::ItemKind::kSubtitle:
      in.kind = llm::ContextItemKind::kSubtitle;
      break;
    case storage::ItemKind::kAudio:
      in.kind = llm::ContextItemKind::kAudio;
      break;
  }
  if (item->media_json) {
    nlohmann::json media = nlohmann::json::parse(*item->media_json, nullptr, false);
    if (media.is_object()) {
      if (media.contains("duration_seconds") && media["duration_seconds"].is_number()) {
        in.duration_s = media["duration_seconds"].get<double>();
      }
      if (media.contains("video") && media["video"].is_object()) {
        const auto& v = media["video"];
        in.source_width = v.value("width", 0);
        in.source_height = v.value("height", 0);
        // Frames are resized from the display shape (sample aspect applied) unless the sample
        // says "storage"; lower_resolution must start from the same shape.
        std::string sar = v.value("sample_aspect_ratio", std::string());
        bool display = !(media.contains("sample") && media["sample"].is_object() &&
                         media["sample"].value("shape", std::string()) == "storage");
        int num = 0, den = 0;
        if (display && std::sscanf(sar.c_str(), "%d:%d", &num, &den) == 2) {
          in.source_width =
              pipeline::DisplaySize({in.source_width, in.source_height}, {num, den}).width;
        }
        int rotation = v.value("rotation", 0);
        if (rotation % 180 != 0) std::swap(in.source_width, in.source_height);
      }
    }
  }
  REEL_ASSIGN_OR_RETURN(std::vector<storage::FrameRecord> frames, store.ListFrames(item_id));
  for (const storage::FrameRecord& f : frames) {
    llm::ContextFrame c;
    c.sample_index = f.sample_index;
    c.time_s = f.time_seconds;
    c.width = f.width;
    c.height = f.height;
    c.phash = f.phash;
    c.duplicate = f.duplicate_of.has_value();
    in.frames.push_back(c);
  }
  if (in.kind == llm::ContextItemKind::kImage && in.source_width == 0 && !frames.empty()) {
    in.source_width = frames[0].width;
    in.source_height = frames[0].height;
  }
  REEL_ASSIGN_OR_RETURN(std::vector<storage::SegmentRecord> segments, store.ListSegments(item_id));
  llm::ContextText document;
  document.source = "document";
  // A video's side-car documents (its slide deck): one document each, pages with markers.
  std::vector<llm::ContextText> decks;
  for (const storage::SegmentRecord& s : segments) {
    if (s.source == "document") {  // chunks of one document, in order
      if (!document.text.empty()) document.text += "\n";
      document.text += s.text;
      continue;
    }
    if (in.kind == llm::ContextItemKind::kVideo && s.source.starts_with(kSlidesSourcePrefix)) {
      auto deck = std::find_if(decks.begin(), decks.end(),
                               [&](const llm::ContextText& d) { return d.source == s.source; });
      if (deck == decks.end()) {
        llm::ContextText text;
        text.source = s.source;
        deck = decks.insert(decks.end(), std::move(text));
      }
      deck->text += "Page " + std::to_string(static_cast<int64_t>(s.start_seconds)) + ":\n" +
                    s.text + (s.text.ends_with('\n') ? "\n" : "\n\n");
      continue;
    }
    in.texts.push_back({s.source, s.start_seconds, s.end_seconds, s.text});
  }
  if (!document.text.empty()) in.texts.insert(in.texts.begin(), document);
  in.texts.insert(in.texts.begin(), decks.begin(), decks.end());
  if (in.kind == llm::ContextItemKind::kDocument && item->media_json) {
    LoadPages(*item->media_json, in);
  }
  if (job != nullptr) {
    // An audio item's transcript is taken with speech off too (TranscribesSpeech).
    SpeechSpec speech = job->speech;
    if (item->kind == storage::ItemKind::kAudio) speech.enabled = true;
    ChooseTimedText(speech, &in.texts);
  }
  return in;
}

namespace {

std::optional<double> DurationOf(const llm::ContextInput& input) {
  if (input.duration_s > 0) return input.duration_s;
  return std::nullopt;
}

}  // namespace

llm::ContextOptions ContextOptionsFor(const JobSpec& job, const PromptSpec& prompt,
                                      const llm::ContextInput& input) {
  const ContextSpec& c = job.context;
  llm::ContextOptions o;
  o.token_budget = c.token_budget;
  o.reserve_output_tokens = c.reserve_output_tokens;
  o.transport = c.transport;
  o.server_num_frames = c.server_num_frames;
  o.server_fps = c.server_fps;
  o.server_timestamps = c.server_timestamps;
  o.fit_steps = FitStepsOf(c);
  if (input.paged && c.fit_steps.empty()) {
    // Documents: pictures of pages that read well as text go first, then the pictures' size;
    // then the pages are split into ranges (docs/documents.md).
    o.fit_steps = {llm::FitStep::kDropPagePictures, llm::FitStep::kLowerResolution,
                   llm::FitStep::kSplit};
  }
  o.min_fps = c.min_fps;
  o.min_pixels_floor = c.min_pixels;
  o.resize_factor = job.resize.frames.smart.factor;
  o.max_aspect_ratio = job.resize.frames.smart.max_aspect_ratio;
  o.documents_first = c.documents_first;
  o.prefix_block = c.prefix_block;
  o.thinking_mode = ThinkingOf(job);
  const PromptRequest request = PromptRequestFor(prompt, DurationOf(input));
  o.system_prompt = request.system;
  o.question = request.question;
  return o;
}

std::string ContextSettingsKey(const JobSpec& job, const PromptSpec& prompt,
                               const ContextSetup& setup, const storage::ItemRecord& item) {
  const ContextSpec& c = job.context;
  nlohmann::json key = {
      {"format", 1},
      {"item", {{"content", item.content_hash.value_or("")}, {"settings", item.settings_hash}}},
      {"prompt",
       {{"id", prompt.id},
        {"kind", PromptKindName(prompt.kind)},
        {"system", prompt.system},
        {"question", prompt.question}}},
      {"thinking", llm::ThinkingModeName(ThinkingOf(job))},
      {"context",
       {{"budget", c.token_budget},
        {"reserve", c.reserve_output_tokens},
        {"template", c.chat_template},
        {"tokenizer", setup.tokenizer_sha256},
        {"transport", llm::TransportName(c.transport)},
        {"server_num_frames", c.server_num_frames},
        {"server_fps", c.server_fps},
        {"server_timestamps", c.server_timestamps},
        {"documents_first", c.documents_first},
        {"min_fps", c.min_fps},
        {"min_pixels", c.min_pixels},
        {"prefix_block", c.prefix_block}}},
  };
  nlohmann::json steps = nlohmann::json::array();
  for (llm::FitStep s : FitStepsOf(c)) steps.push_back(llm::FitStepName(s));
  key["context"]["fit_steps"] = steps;
  // Only when there are some: the keys of jobs without attachments stay as they were.
  if (!setup.attached_sha256.empty()) key["context"]["attached"] = setup.attached_sha256;
  // Likewise only with speech on, and for videos (audio items always): the transcript and which
  // timed text is taken.
  const bool audio_item = item.kind == storage::ItemKind::kAudio;
  if ((job.speech.enabled && item.kind == storage::ItemKind::kVideo) || audio_item) {
    key["speech"] = {{"transcript", storage::Sha256Hex(ItemSpeechSettingsKey(
                                        job, audio_item, item.content_hash.value_or("")))},
                     {"prefer", SpeechPreferName(job.speech.prefer)}};
  }
  return storage::Sha256Hex(key.dump());
}

Result<std::vector<int64_t>> StoreContext(storage::Store& store, const storage::ItemRecord& item,
                                          const PromptSpec& prompt, const llm::Context& context,
                                          const llm::ContextInput& input,
                                          const std::string& settings_key,
                                          const std::string& base_key,
                                          const std::string& manifest_extra) {
  const int64_t item_id = item.id;
  nlohmann::json extra = nlohmann::json::object();
  if (!manifest_extra.empty()) extra = nlohmann::json::parse(manifest_extra);
  const bool cached_frames = context.transport != llm::Transport::kFile &&
                             !context.kept_frames.empty() &&
                             (input.kind == llm::ContextItemKind::kVideo ||
                              input.kind == llm::ContextItemKind::kImage || input.paged);
  std::vector<storage::ContextRecord> rows;
  for (size_t s = 0; s < context.segments.size(); ++s) {
    const llm::ContextSegment& seg = context.segments[s];
    storage::ContextRecord r;
    r.item_id = item_id;
    r.prompt_id = prompt.id;
    r.text_tokens = seg.tokens.text;
    r.image_tokens = seg.tokens.image;
    r.video_tokens = seg.tokens.video;
    r.manifest_json = context.ManifestJson(input, s);
    if (!extra.empty()) {
      nlohmann::json m = nlohmann::json::parse(r.manifest_json);
      m.update(extra);
      r.manifest_json = m.dump();
    }
    r.settings_key = settings_key;
    r.count_method = context.count_exact ? "exact" : "estimate";
    r.transport = llm::TransportName(context.transport);
    r.segment_index = static_cast<int64_t>(s);
    r.segment_count = static_cast<int64_t>(context.segments.size());
    r.base_key = base_key.empty() ? settings_key : base_key;
    if (cached_frames) r.frame_source = FrameSource(item);
    rows.push_back(std::move(r));
  }
  return store.PutContexts(rows);  // one transaction: all segments or none
}

Result<storage::RetiredContexts> RetireOldContexts(
    storage::Store& store, int64_t item_id,
    const std::vector<std::pair<std::string, std::string>>& current,
    const std::string& frame_cache) {
  REEL_ASSIGN_OR_RETURN(storage::RetiredContexts retired, store.RetireContexts(item_id, current));
  if (retired.retired.empty()) return retired;
  // Deleted after the commit: a crash in between leaves files nothing names (harmless; the cache
  // is safe to delete), never a row whose files are gone.
  std::set<std::string> keep;
  for (const auto& [source, manifest] : retired.kept_frames) {
    for (std::string& f : ManifestFrameFiles(frame_cache, source, manifest)) {
      keep.insert(std::move(f));
    }
  }
  for (const storage::RetiredContext& r : retired.retired) {
    if (!r.frame_source) continue;
    for (const std::string& f : ManifestFrameFiles(frame_cache, *r.frame_source, r.manifest_json)) {
      if (keep.count(f) > 0) continue;
      std::error_code ec;
      std::filesystem::remove(f, ec);  // absent (never sent): nothing to do
    }
  }
  return retired;
}

Result<ItemContext> BuildItemContext(storage::Store& store, const JobSpec& job,
                                     const ContextSetup& setup, int64_t item_id,
                                     const PromptSpec& prompt) {
  REEL_ASSIGN_OR_RETURN(std::optional<storage::ItemRecord> item, store.GetItem(item_id));
  if (!item) return NotFound("item " + std::to_string(item_id) + " is not in the database");
  ItemContext c;
  c.item = std::move(*item);
  REEL_ASSIGN_OR_RETURN(c.input, LoadContextInput(store, item_id, &job));
  AddAttachedTexts(setup, &c.input);
  // A question over several files (context.group): the group's item holds every file's frames.
  REEL_RETURN_IF_ERROR(AddGroupMedia(store, job, c.item, &c.input));
  REEL_ASSIGN_OR_RETURN(c.context,
                        llm::BuildContext(c.input, ContextOptionsFor(job, prompt, c.input),
                                          setup.chat_template, *setup.counter));
  c.settings_key = GroupSettingsKey(ContextSettingsKey(job, prompt, setup, c.item), c.input);
  c.prompt = prompt;
  return c;
}

Result<llm::ChatRequest> ContextChatRequest(const JobSpec& job, const ItemContext& c,
                                            size_t segment, const std::string& frame_cache,
                                            ContextFramesReport* frames) {
  if (segment >= c.context.segments.size()) {
    return InvalidArgument(c.item.path + ": the context has " +
                           std::to_string(c.context.segments.size()) + " segment(s), no segment " +
                           std::to_string(segment));
  }
  std::vector<size_t> needed = llm::FramesNeeded(c.context, segment);
  std::vector<std::string> files;
  if (!needed.empty()) {
    REEL_ASSIGN_OR_RETURN(
        files, ContextFrameFiles(job, c.item, c.input, c.context, needed, frame_cache, frames));
  }
  std::string url;
  if (c.context.transport == llm::Transport::kFile) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(UnescapeInvalidUtf8(c.item.path), ec);
    url = "file://";
    for (unsigned char ch : p.lexically_normal().string()) {  // percent-encoded (url2pathname)
      if (std::isalnum(ch) || ch == '/' || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
        url += static_cast<char>(ch);
      } else {
        static const char kHex[] = "0123456789ABCDEF";
        url += '%';
        url += kHex[ch >> 4];
        url += kHex[ch & 15];
      }
    }
  }
  llm::ChatRequest request;
  REEL_ASSIGN_OR_RETURN(request.messages, llm::BuildMessages(c.context, segment, files, url));
  const ModelSpec& m = job.model;
  request.max_completion_tokens = m.max_output_tokens;
  request.temperature = m.temperature;
  request.top_p = m.top_p;
  if (m.top_k != -1) request.top_k = m.top_k;
  request.seed = m.seed;
  request.thinking_mode = llm::ThinkingModeName(ThinkingOf(job));
  request.prompt_tokens_estimate = c.context.segments[segment].tokens.total;
  const PromptRequest kind = PromptRequestFor(c.prompt, DurationOf(c.input));
  if (kind.json_schema) {
    request.json_schema = *kind.json_schema;
    request.json_schema_name = kind.schema_name;
  }
  return request;
}

}  // namespace reel::jobs
