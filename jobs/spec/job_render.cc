// The resolved job as YAML, and the canonical frame-settings text. Written by hand (no yaml-cpp
// here): strings are emitted as JSON strings, which are valid YAML double-quoted scalars.
#include <nlohmann/json.hpp>

#include <sstream>

#include "jobs/spec/job_spec.h"
#include "jobs/spec/job_values.h"
#include "vision/checkpoint.h"

namespace reel::jobs {
namespace {

// A YAML double-quoted scalar that parses back to `text` (including the ${VAR} escape).
std::string Str(const std::string& text) {
  return nlohmann::json(EscapeVariables(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Num(double value) { return FormatNumber(value); }
std::string Bool(bool value) { return value ? "true" : "false"; }

template <typename T>
std::string Opt(const std::optional<T>& value) {
  if (!value) return "null";
  if constexpr (std::is_same_v<T, double>) {
    return Num(*value);
  } else {
    return std::to_string(*value);
  }
}

// The comment line of a resolved spec that names its base directory.
constexpr std::string_view kBaseDirLine = "# Relative paths start at ";

}  // namespace

std::string RenderResolvedJob(const JobSpec& job) {
  std::ostringstream out;
  const pipeline::SamplingOptions& s = job.sampling;
  const pipeline::ResizeOptions& r = job.resize.frames;
  out << "# " << job.source << ", resolved: every setting explicit.\n";
  if (!job.base_dir.empty()) {
    out << kBaseDirLine << Str(job.base_dir) << ".\n";  // read by ResolvedJobBaseDir
  }
  out << "version: " << job.version << "\n";
  out << "name: " << Str(job.name) << "\n";
  out << "description: " << Str(job.description) << "\n";

  out << "inputs:";
  if (job.inputs.empty()) out << " []";
  out << "\n";
  for (const InputSpec& input : job.inputs) {
    out << "  - path: " << Str(input.path) << "\n";
    out << "    kind: " << InputKindName(input.kind) << "\n";
  }

  out << "sampling:\n";
  out << "  policy: " << SamplingPolicyKey(s.policy) << "\n";
  out << "  fps: " << Num(s.fps) << "\n";
  out << "  fps_epsilon: " << Num(s.fps_epsilon) << "\n";
  out << "  keep_last: " << Bool(s.fps_keep_last) << "\n";
  out << "  fps_timeline: " << FpsTimelineKey(s.fps_timeline) << "\n";
  out << "  count: " << s.count << "\n";
  out << "  timestamps: [";
  for (size_t i = 0; i < s.timestamps.size(); ++i) {
    out << (i ? ", " : "") << Num(s.timestamps[i]);
  }
  out << "]\n";
  out << "  scene_threshold: " << Num(s.scene_threshold) << "\n";
  out << "  scene_min_shot: " << Num(s.scene_min_shot_s) << "\n";
  out << "  start: " << Opt(s.start_s) << "\n";
  out << "  end: " << Opt(s.end_s) << "\n";
  out << "  max_frames: " << Opt(s.max_frames) << "\n";

  out << "resize:\n";
  out << "  mode: " << ResizeModeKey(r.mode) << "\n";
  out << "  factor: " << r.smart.factor << "\n";
  out << "  min_pixels: " << r.smart.min_pixels << "\n";
  out << "  max_pixels: " << r.smart.max_pixels << "\n";
  out << "  image_max_pixels: " << job.resize.image_max_pixels << "\n";
  out << "  max_long_side: " << r.long_side.max_long_side << "\n";
  out << "  max_aspect_ratio: " << Num(r.smart.max_aspect_ratio) << "\n";
  out << "  shape: " << FrameShapeKey(r.shape) << "\n";
  out << "  deinterlace: " << Bool(r.deinterlace) << "\n";

  out << "vision:\n";
  out << "  enabled: " << Bool(job.vision.enabled) << "\n";
  out << "  weights: " << Str(job.vision.weights) << "\n";
  out << "  batch_size: " << job.vision.batch_size << "\n";
  out << "  dtype: " << VisionDTypeName(job.vision.dtype) << "\n";
  out << "  threads: " << job.vision.threads << "\n";
  out << "  max_pixels: " << job.vision.max_pixels << "\n";
  out << "  dedup_threshold: " << Num(job.vision.dedup_threshold) << "\n";

  out << "context:\n";
  out << "  token_budget: " << job.context.token_budget << "\n";
  out << "  reserve_output_tokens: " << job.context.reserve_output_tokens << "\n";
  out << "  fit_strategy: " << FitStrategyName(job.context.fit_strategy) << "\n";
  {
    const ContextSpec& c = job.context;
    // Explicit steps only: otherwise fit_strategy stays the setting (a comment shows its steps).
    out << (c.fit_steps.empty() ? "  # fit_steps: [" : "  fit_steps: [");
    std::vector<llm::FitStep> steps = FitStepsOf(c);
    for (size_t i = 0; i < steps.size(); ++i) {
      out << (i ? ", " : "") << llm::FitStepName(steps[i]);
    }
    out << (c.fit_steps.empty() ? "]  (from fit_strategy)\n" : "]\n");
    out << "  tokenizer: "
        << (c.tokenizer.empty() ? "\"\"  # none: counts are estimated" : Str(c.tokenizer)) << "\n";
    out << "  template: " << Str(c.chat_template) << "\n";
    out << "  transport: " << llm::TransportName(c.transport) << "\n";
    out << "  server_num_frames: " << c.server_num_frames << "\n";
    out << "  server_fps: " << Num(c.server_fps) << "\n";
    out << "  server_timestamps: " << (c.server_timestamps ? "true" : "false") << "\n";
    out << "  documents: " << (c.documents_first ? "before" : "after") << "\n";
    out << "  min_fps: " << Num(c.min_fps) << "\n";
    out << "  min_pixels: " << c.min_pixels << "\n";
    out << "  prefix_block: " << c.prefix_block << "\n";
    if (!c.attach.empty()) {
      out << "  attach:\n";
      for (const std::string& file : c.attach) out << "    - " << Str(file) << "\n";
    }
    if (!c.group.empty()) {
      out << "  group:\n";
      for (const std::string& file : c.group) out << "    - " << Str(file) << "\n";
    }
  }

  const ModelSpec& m = job.model;
  out << "model:\n";
  out << "  endpoint: " << (m.endpoint ? Str(*m.endpoint) : "null  # prepare / export only")
      << "\n";
  out << "  name: " << Str(m.name) << "\n";
  out << "  api_key_env: " << Str(m.api_key_env) << "\n";
  out << "  thinking_mode: " << ThinkingModeName(m.thinking_mode) << "\n";
  out << "  temperature: " << Num(m.temperature) << "\n";
  out << "  top_p: " << Num(m.top_p) << "\n";
  out << "  top_k: " << m.top_k << "\n";
  out << "  seed: " << Opt(m.seed) << "\n";
  out << "  max_output_tokens: " << m.max_output_tokens << "\n";
  out << "  concurrency: " << m.concurrency << "\n";
  out << "  connect_timeout: " << Num(m.connect_timeout_s) << "\n";
  out << "  read_timeout: " << Num(m.read_timeout_s) << "\n";
  out << "  request_timeout: " << Num(m.request_timeout_s) << "\n";
  out << "  retries: " << m.retries << "\n";
  out << "  dialect: " << Str(m.dialect) << "\n";
  out << "  stream: " << (m.stream ? "true" : "false") << "\n";
  out << "  verify_tokens: " << (m.verify_tokens ? "true" : "false") << "\n";
  out << "  requests_per_minute: " << Num(m.requests_per_minute) << "\n";
  out << "  tokens_per_minute: " << Num(m.tokens_per_minute) << "\n";
  out << "  circuit_give_up: " << Num(m.circuit_give_up_s) << "\n";
  out << "  jpeg_quality: " << m.jpeg_quality << "\n";
  out << "  reduce_question: " << Str(m.reduce_question) << "\n";
  out << "  price:\n";
  out << "    input_per_million: " << Num(m.price_input_per_million) << "\n";
  out << "    cached_input_per_million: " << Num(m.price_cached_input_per_million) << "\n";
  out << "    output_per_million: " << Num(m.price_output_per_million) << "\n";
  out << "    gpu_hour: " << Num(m.price_gpu_hour) << "\n";
  out << "    gpus: " << m.gpus << "\n";

  const SpeechSpec& sp = job.speech;
  out << "speech:\n";
  out << "  enabled: " << Bool(sp.enabled) << "\n";
  out << "  backend: " << Str(sp.backend) << "\n";
  out << "  endpoint: " << (sp.endpoint ? Str(*sp.endpoint) : "null  # offline (pocketsphinx)")
      << "\n";
  out << "  model: " << Str(sp.model) << "\n";
  out << "  language: " << Str(sp.language) << "\n";
  out << "  api_key_env: " << Str(sp.api_key_env) << "\n";
  out << "  prefer: " << SpeechPreferName(sp.prefer) << "\n";
  out << "  max_chunk: " << Num(sp.max_chunk_s) << "\n";
  out << "  concurrency: " << sp.concurrency << "\n";
  out << "  connect_timeout: " << Num(sp.connect_timeout_s) << "\n";
  out << "  read_timeout: " << Num(sp.read_timeout_s) << "\n";
  out << "  retries: " << sp.retries << "\n";
  out << "  time_limit: " << Num(sp.time_limit_s) << "\n";

  out << "prompts:";
  if (job.prompts.empty()) out << " []";
  out << "\n";
  for (const PromptSpec& p : job.prompts) {
    out << "  - id: " << Str(p.id) << "\n";
    out << "    kind: " << PromptKindName(p.kind) << "\n";
    out << "    system: " << Str(p.system) << "\n";
    out << "    question: " << Str(p.question);
    if (p.kind == PromptKind::kChapters && p.question.empty()) out << "  # the built-in question";
    out << "\n";
    if (!p.json_schema.empty()) {
      out << "    json_schema: " << Str(p.json_schema) << "\n";
    } else if (!p.json_schema_file.empty()) {
      out << "    json_schema: " << Str(p.json_schema_file) << "\n";
    }
    if (!p.reduce.empty()) out << "    reduce: " << Str(p.reduce) << "\n";
  }

  out << "storage:\n";
  out << "  database: " << Str(job.storage.database);
  if (!job.base_dir.empty()) {
    out << "  # " << Str(ResolveJobPath(job.base_dir, job.storage.database));
  }
  out << "\n";
  out << "  frame_cache: " << Str(job.storage.frame_cache)
      << (job.storage.frame_cache.empty() ? "  # <database>.frames" : "") << "\n";

  out << "text:\n";
  out << "  fallback_encoding: " << Str(job.text.fallback_encoding) << "\n";

  out << RenderDocumentsSection(job.documents);

  const LimitsSpec& l = job.limits;
  out << "limits:\n";
  out << "  item_time_limit: " << Num(l.media.time_limit_s) << "\n";
  out << "  max_file_size: " << l.max_file_bytes << "  # " << FormatByteSize(l.max_file_bytes)
      << "\n";
  out << "  retries: " << l.item_retries << "\n";
  out << "  max_decode_error_rate: " << Num(l.media.max_error_rate) << "\n";
  out << "  min_decode_errors: " << l.media.min_errors_for_rate << "\n";
  out << "  max_frame_pixels: " << l.media.max_pixels << "\n";
  out << "  max_frame_side: " << l.media.max_side << "\n";
  out << "  decoder_threads: " << l.media.decoder_threads << "\n";
  return out.str();
}

std::string ResolvedJobBaseDir(std::string_view spec_text) {
  // Only the comment lines at the top, before the first setting.
  for (size_t at = 0; at < spec_text.size() && spec_text[at] == '#';) {
    size_t end = spec_text.find('\n', at);
    if (end == std::string_view::npos) end = spec_text.size();
    std::string_view line = spec_text.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(kBaseDirLine) || !line.ends_with(".")) continue;
    line.remove_prefix(kBaseDirLine.size());
    line.remove_suffix(1);
    const nlohmann::json quoted = nlohmann::json::parse(line, nullptr, false);
    if (!quoted.is_string()) return "";
    std::string dir;
    const std::string escaped = quoted.get<std::string>();  // Str: "${" written as "$${"
    for (size_t i = 0; i < escaped.size(); ++i) {
      if (escaped.compare(i, 3, "$${") == 0) ++i;
      dir += escaped[i];
    }
    return dir;
  }
  return "";
}

std::string VisionSettingsKey(const JobSpec& job) {
  const VisionSpec& v = job.vision;
  if (!v.enabled) return "";
  const std::string weights = ResolveJobPath(job.base_dir, v.weights);
  std::ostringstream out;
  out << "reel-vision-settings/1\n";
  out << "vision.weights=" << weights << "\n" << vision::CheckpointIdentity(weights);
  out << "vision.dtype=" << VisionDTypeName(v.dtype) << "\n";
  out << "vision.max_pixels=" << v.max_pixels << "\n";
  out << "vision.dedup_threshold=" << Num(v.dedup_threshold) << "\n";
  return out.str();
}

std::string SpeechBackendOf(const SpeechSpec& speech) {
  if (speech.backend != "auto") return speech.backend;
  return speech.endpoint ? "openai" : "pocketsphinx";
}

namespace {

std::string SpeechKeyText(const JobSpec& job, const std::string& content_hash) {
  const SpeechSpec& s = job.speech;
  std::ostringstream out;
  out << "reel-speech-settings/1\n";
  out << "content=" << content_hash << "\n";
  out << "speech.backend=" << SpeechBackendOf(s) << "\n";
  out << "speech.model=" << s.model << "\n";
  out << "speech.language=" << s.language << "\n";
  out << "speech.max_chunk=" << Num(s.max_chunk_s) << "\n";
  out << "sampling.start=" << Opt(job.sampling.start_s) << "\n";
  out << "sampling.end=" << Opt(job.sampling.end_s) << "\n";
  return out.str();
}

}  // namespace

std::string SpeechSettingsKey(const JobSpec& job, const std::string& content_hash) {
  return job.speech.enabled ? SpeechKeyText(job, content_hash) : std::string();
}

bool TranscribesSpeech(const JobSpec& job, bool audio_item) {
  return audio_item || job.speech.enabled;
}

std::string ItemSpeechSettingsKey(const JobSpec& job, bool audio_item,
                                  const std::string& content_hash) {
  return TranscribesSpeech(job, audio_item) ? SpeechKeyText(job, content_hash) : std::string();
}

std::string FrameSettingsKey(const JobSpec& job) {
  using P = pipeline::SamplingPolicy;
  using M = pipeline::ResizeMode;
  const pipeline::SamplingOptions& s = job.sampling;
  const pipeline::ResizeOptions& r = job.resize.frames;
  const pipeline::MediaLimits& l = job.limits.media;
  std::ostringstream out;
  out << "reel-frame-settings/1\n";
  out << "sampling.policy=" << SamplingPolicyKey(s.policy) << "\n";
  switch (s.policy) {
    case P::kFps:
      out << "sampling.fps=" << Num(s.fps) << "\n";
      out << "sampling.fps_epsilon=" << Num(s.fps_epsilon) << "\n";
      out << "sampling.keep_last=" << Bool(s.fps_keep_last) << "\n";
      out << "sampling.fps_timeline=" << FpsTimelineKey(s.fps_timeline) << "\n";
      break;
    case P::kCount:
      out << "sampling.count=" << s.count << "\n";
      break;
    case P::kKeyframes:
      break;
    case P::kScene:
      out << "sampling.scene_threshold=" << Num(s.scene_threshold) << "\n";
      out << "sampling.scene_min_shot=" << Num(s.scene_min_shot_s) << "\n";
      // The score itself: FFmpeg's select scene score (earlier releases scored thumbnails, so
      // items sampled by them are redone).
      out << "sampling.scene_score=ffmpeg-select\n";
      break;
    case P::kTimestamps:
      out << "sampling.timestamps=";
      for (size_t i = 0; i < s.timestamps.size(); ++i) {
        out << (i ? "," : "") << Num(s.timestamps[i]);
      }
      out << "\n";
      break;
  }
  out << "sampling.start=" << (s.start_s ? Num(*s.start_s) : "none") << "\n";
  out << "sampling.end=" << (s.end_s ? Num(*s.end_s) : "none") << "\n";
  out << "sampling.max_frames=" << (s.max_frames ? std::to_string(*s.max_frames) : "none") << "\n";
  out << "resize.mode=" << ResizeModeKey(r.mode) << "\n";
  out << "resize.shape=" << FrameShapeKey(r.shape) << "\n";
  // Only when off: items sampled before deinterlacing existed keep their settings hash.
  if (!r.deinterlace) out << "resize.deinterlace=off\n";
  switch (r.mode) {
    case M::kSmart:
      out << "resize.factor=" << r.smart.factor << "\n";
      out << "resize.min_pixels=" << r.smart.min_pixels << "\n";
      out << "resize.max_pixels=" << r.smart.max_pixels << "\n";
      out << "resize.image_max_pixels=" << job.resize.image_max_pixels << "\n";
      out << "resize.max_aspect_ratio=" << Num(r.smart.max_aspect_ratio) << "\n";
      break;
    case M::kLongSide:
      out << "resize.factor=" << r.long_side.factor << "\n";
      out << "resize.max_long_side=" << r.long_side.max_long_side << "\n";
      break;
    case M::kNone:
      break;
  }
  out << "limits.max_decode_error_rate=" << Num(l.max_error_rate) << "\n";
  out << "limits.min_decode_errors=" << l.min_errors_for_rate << "\n";
  out << "limits.max_frame_pixels=" << l.max_pixels << "\n";
  out << "limits.max_frame_side=" << l.max_side << "\n";
  return out.str();
}

}  // namespace reel::jobs
