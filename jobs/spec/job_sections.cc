// Parser's sections (job_parser.h): each section of a job file (inputs, sampling, resize,
// vision, context, model, prompts, storage, text, limits) into its part of the JobSpec.
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "jobs/spec/job_parser.h"
#include "llm/client/dialect.h"
#include "llm/client/endpoint_url.h"
#include "llm/client/json_schema.h"

namespace reel::jobs::parser {
namespace {

const std::vector<std::string> kTopKeys = {
    "version", "name",   "description", "inputs",  "sampling", "resize", "vision",   "context",
    "model",   "speech", "prompts",     "storage", "text",     "limits", "documents"};
const std::vector<std::string> kInputKeys = {"path", "kind"};
const std::vector<std::string> kSamplingKeys = {
    "policy",         "fps",   "fps_epsilon", "keep_last",
    "fps_timeline",   "count", "timestamps",  "scene_threshold",
    "scene_min_shot", "start", "end",         "max_frames"};
const std::vector<std::string> kResizeKeys = {
    "mode",          "factor",           "min_pixels", "max_pixels", "image_max_pixels",
    "max_long_side", "max_aspect_ratio", "shape",      "deinterlace"};
const std::vector<std::string> kVisionKeys = {"enabled", "weights",    "batch_size",     "dtype",
                                              "threads", "max_pixels", "dedup_threshold"};
const std::vector<std::string> kContextKeys = {"token_budget", "reserve_output_tokens",
                                               "fit_strategy", "fit_steps",
                                               "tokenizer",    "template",
                                               "transport",    "server_num_frames",
                                               "server_fps",   "server_timestamps",
                                               "documents",    "min_fps",
                                               "min_pixels",   "prefix_block",
                                               "attach",       "group"};

const EnumNames<llm::Transport>& TransportNames() {
  static const EnumNames<llm::Transport> names{{{"images", llm::Transport::kImages},
                                                {"video", llm::Transport::kVideo},
                                                {"file", llm::Transport::kFile}}};
  return names;
}
const std::vector<std::string> kModelKeys = {"endpoint",
                                             "name",
                                             "api_key_env",
                                             "thinking_mode",
                                             "temperature",
                                             "top_p",
                                             "top_k",
                                             "seed",
                                             "max_output_tokens",
                                             "concurrency",
                                             "connect_timeout",
                                             "read_timeout",
                                             "request_timeout",
                                             "retries",
                                             "dialect",
                                             "stream",
                                             "verify_tokens",
                                             "requests_per_minute",
                                             "tokens_per_minute",
                                             "circuit_give_up",
                                             "jpeg_quality",
                                             "reduce_question",
                                             "price"};
const std::vector<std::string> kPriceKeys = {"input_per_million", "cached_input_per_million",
                                             "output_per_million", "gpu_hour", "gpus"};
const std::vector<std::string> kPromptKeys = {"id",       "kind",        "system",
                                              "question", "json_schema", "reduce"};
const std::vector<std::string> kStorageKeys = {"database", "frame_cache"};
const std::vector<std::string> kTextKeys = {"fallback_encoding"};
const std::vector<std::string> kLimitsKeys = {
    "item_time_limit",   "max_file_size",    "retries",        "max_decode_error_rate",
    "min_decode_errors", "max_frame_pixels", "max_frame_side", "decoder_threads"};

// Keys that only matter for some sampling policies.
struct PolicyKey {
  const char* key;
  std::vector<pipeline::SamplingPolicy> policies;
};

}  // namespace

void Parser::ReadJob(const YAML::Node& root) {
  std::optional<Fields> top = ReadMap(root, root.Mark(), "", kTopKeys);
  if (!top) return;
  const Fields& fields = *top;
  job_.source = source_;
  job_.base_dir = base_dir_;

  int64_t version = kJobFormatVersion;
  if (ReadInteger(fields, "version", "", &version, 1, INT32_MAX) && version != kJobFormatVersion) {
    Error(MarkOf(*fields.Find("version")), "'version' " + std::to_string(version) +
                                               " is not supported; this Reel reads version " +
                                               std::to_string(kJobFormatVersion));
  }
  if (!ReadString(fields, "name", "", &job_.name)) {
    if (!fields.Find("name")) {
      Error(root.Mark(),
            "missing required key 'name' (a short name for the job, e.g. "
            "name: lecture-notes)");
    } else if (fields.Find("name")->value.IsNull()) {
      Error(MarkOf(*fields.Find("name")), "'name' is empty");
    }
  } else {
    CheckName(*fields.Find("name"));
  }
  ReadString(fields, "description", "", &job_.description);

  if (!fields.Has("inputs")) {
    Error(fields.Find("inputs") ? MarkOf(*fields.Find("inputs")) : root.Mark(),
          "missing required key 'inputs' (a list of files or globs, relative to the job file)");
  } else {
    ReadInputs(fields);
  }
  ReadSampling(fields, root);
  ReadResize(fields, root);
  ReadVision(fields, root);
  ReadModel(fields, root);
  ReadSpeech(fields);
  ReadContext(fields, root);
  ReadPrompts(fields);
  ReadStorage(fields, root);
  ReadTextSettings(fields);
  ReadLimits(fields, root);
  ReadDocuments(fields);
}

void Parser::CheckName(const Field& f) {
  const std::string& name = job_.name;
  if (name.empty()) {
    Error(MarkOf(f), "'name' is empty");
  } else if (name.size() > 128) {
    Error(MarkOf(f), "'name' is longer than 128 characters");
  } else if (name == "." || name == ".." || std::any_of(name.begin(), name.end(), [](char c) {
               return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
             })) {
    Error(MarkOf(f),
          "'name' may not contain '/', '\\' or control characters, nor be '.' or "
          "'..' (it names the default database file)");
  }
}

void Parser::ReadInputs(const Fields& fields) {
  std::optional<YAML::Node> list =
      ReadList(fields, "inputs", static_cast<size_t>(options_.max_inputs));
  if (!list) return;
  if (list->size() == 0) {
    Error(MarkOf(*fields.Find("inputs")), "'inputs' is empty; list at least one file or glob");
    return;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    YAML::Node entry = (*list)[i];
    std::string path = Element("inputs", i);
    InputSpec input;
    YAML::Mark mark = entry.Mark();
    if (entry.IsScalar()) {
      Field f{"", entry, entry};
      std::optional<std::string> text = Text(f, path);
      if (!text) continue;
      input.path = *text;
    } else if (entry.IsMap()) {
      std::optional<Fields> entry_fields = ReadMap(entry, mark, path, kInputKeys);
      if (!entry_fields) continue;
      if (!ReadString(*entry_fields, "path", path, &input.path)) {
        if (!entry_fields->Has("path")) {
          Error(mark, Quoted(path) + ": missing required key 'path'");
        }
        continue;
      }
      ReadEnum(*entry_fields, "kind", path, InputKindNames(), &input.kind);
      const Field* path_field = entry_fields->Find("path");
      mark = MarkOf(*path_field);
    } else {
      Error(mark.is_null() ? MarkOf(*fields.Find("inputs")) : mark,
            Quoted(path) + " must be a path, a glob, or a map with 'path' and 'kind'; got " +
                Describe(entry));
      continue;
    }
    if (input.path.empty()) {
      Error(mark, Quoted(path) + " is an empty path");
      continue;
    }
    if (!ValidGlob(input.path)) {
      Error(mark, Quoted(path) +
                      ": '**' must be a whole path component (as in 'a/**/b.mp4'), "
                      "got " +
                      Quoted(input.path));
      continue;
    }
    input.where = source_ + ":" + Position(mark);
    job_.inputs.push_back(std::move(input));
  }
}

bool Parser::ValidGlob(const std::string& pattern) {
  size_t pos = 0;
  while ((pos = pattern.find("**", pos)) != std::string::npos) {
    bool starts = pos == 0 || pattern[pos - 1] == '/';
    size_t after = pos + 2;
    bool ends = after == pattern.size() || pattern[after] == '/';
    if (!starts || !ends) return false;
    pos = after;
  }
  return true;
}

void Parser::ReadSampling(const Fields& top, const YAML::Node& root) {
  const Field* section = top.Find("sampling");
  if (section == nullptr) return;
  const std::string path = "sampling";
  std::optional<Fields> fields = ReadMap(section->value, MarkOf(*section), path, kSamplingKeys);
  if (!fields) return;
  pipeline::SamplingOptions& s = job_.sampling;
  ReadEnum(*fields, "policy", path, SamplingPolicyNames(), &s.policy);
  ReadNumber(*fields, "fps", path, &s.fps, 0, true, 1000);
  ReadNumber(*fields, "fps_epsilon", path, &s.fps_epsilon, 0, false, 0.5);
  ReadBool(*fields, "keep_last", path, &s.fps_keep_last);
  ReadEnum(*fields, "fps_timeline", path, FpsTimelineNames(), &s.fps_timeline);
  ReadInt(*fields, "count", path, &s.count, 1, 1000000);
  ReadNumber(*fields, "scene_threshold", path, &s.scene_threshold, 0, false, 1);
  ReadSeconds(*fields, "scene_min_shot", path, &s.scene_min_shot_s, 0, false, 1e9);
  double seconds = 0;
  if (ReadSeconds(*fields, "start", path, &seconds, 0, false, 1e9)) s.start_s = seconds;
  if (ReadSeconds(*fields, "end", path, &seconds, 0, true, 1e9)) s.end_s = seconds;
  int frames = 0;
  if (ReadInt(*fields, "max_frames", path, &frames, 1, 1000000)) s.max_frames = frames;
  if (s.start_s && s.end_s && *s.start_s >= *s.end_s) {
    Error(MarkOf(*fields->Find("end")), "'sampling.end' (" + FormatNumber(*s.end_s) +
                                            " s) must be after 'sampling.start' (" +
                                            FormatNumber(*s.start_s) + " s)");
  }
  if (const Field* f = fields->Find("timestamps"); f != nullptr && !f->value.IsNull()) {
    if (!f->value.IsSequence()) {
      Error(MarkOf(*f), "'sampling.timestamps' must be a list of times, got " + Describe(f->value));
    } else {
      for (size_t i = 0; i < f->value.size(); ++i) {
        Field item{"", f->key_node, f->value[i]};
        std::string item_path = Element("sampling.timestamps", i);
        std::optional<std::string> text = Text(item, item_path);
        if (!text) continue;
        std::optional<double> t = ParseSeconds(*text);
        if (!t) {
          Error(MarkOf(item),
                Quoted(item_path) + " must be a time in seconds, got " + Quoted(*text));
        } else if (*t < 0) {
          Error(MarkOf(item), Quoted(item_path) + " must be at least 0, got " + *text);
        } else {
          s.timestamps.push_back(*t);
        }
      }
    }
  }
  using P = pipeline::SamplingPolicy;
  if (s.policy == P::kTimestamps && s.timestamps.empty()) {
    const Field* policy = fields->Find("policy");
    Error(policy ? MarkOf(*policy) : MarkOf(*section),
          "'sampling.policy' is 'timestamps' but 'sampling.timestamps' lists no times");
  }
  static const std::vector<PolicyKey> kPolicyKeys = {
      {"fps", {P::kFps}},
      {"fps_epsilon", {P::kFps}},
      {"keep_last", {P::kFps}},
      {"fps_timeline", {P::kFps}},
      {"count", {P::kCount}},
      {"timestamps", {P::kTimestamps}},
      {"scene_threshold", {P::kScene}},
      {"scene_min_shot", {P::kScene}},
  };
  for (const PolicyKey& pk : kPolicyKeys) {
    const Field* f = fields->Find(pk.key);
    if (f == nullptr || f->value.IsNull()) continue;
    if (std::find(pk.policies.begin(), pk.policies.end(), s.policy) == pk.policies.end()) {
      Warn(f->key_node.Mark(), "'sampling." + std::string(pk.key) + "' has no effect with policy " +
                                   Quoted(SamplingPolicyKey(s.policy)));
    }
  }
}

void Parser::ReadResize(const Fields& top, const YAML::Node& root) {
  const Field* section = top.Find("resize");
  if (section == nullptr) return;
  const std::string path = "resize";
  std::optional<Fields> fields = ReadMap(section->value, MarkOf(*section), path, kResizeKeys);
  if (!fields) return;
  pipeline::ResizeOptions& r = job_.resize.frames;
  ReadEnum(*fields, "mode", path, ResizeModeNames(), &r.mode);
  ReadEnum(*fields, "shape", path, FrameShapeNames(), &r.shape);
  ReadBool(*fields, "deinterlace", path, &r.deinterlace);
  int factor = r.smart.factor;
  if (ReadInt(*fields, "factor", path, &factor, 1, 1024)) {
    r.smart.factor = factor;
    r.long_side.factor = factor;
  }
  constexpr int64_t kMaxArea = int64_t{1} << 40;
  ReadInteger(*fields, "min_pixels", path, &r.smart.min_pixels, 1, kMaxArea);
  ReadInteger(*fields, "max_pixels", path, &r.smart.max_pixels, 1, kMaxArea);
  ReadInteger(*fields, "image_max_pixels", path, &job_.resize.image_max_pixels, 1, kMaxArea);
  ReadInt(*fields, "max_long_side", path, &r.long_side.max_long_side, 1, 1 << 20);
  ReadNumber(*fields, "max_aspect_ratio", path, &r.smart.max_aspect_ratio, 1, false, 1e6);
  const int64_t min_area = int64_t{r.smart.factor} * r.smart.factor;
  // A max_pixels below one patch is reported below; comparing it with min_pixels would only
  // repeat that. When min_pixels is the default, the message says so and points at max_pixels.
  if (r.smart.min_pixels > r.smart.max_pixels && r.smart.max_pixels >= min_area) {
    const Field* min_field = fields->Find("min_pixels");
    const Field* max_field = fields->Find("max_pixels");
    const bool min_given = min_field != nullptr && !min_field->value.IsNull();
    const bool max_given = max_field != nullptr && !max_field->value.IsNull();
    const std::string min = std::to_string(r.smart.min_pixels);
    const std::string max = std::to_string(r.smart.max_pixels);
    if (max_given && !min_given) {
      Error(MarkOf(*max_field), "'resize.max_pixels' (" + max +
                                    ") is smaller than the default 'resize.min_pixels' (" + min +
                                    "): set 'resize.min_pixels' too");
    } else if (min_given && !max_given) {
      Error(MarkOf(*min_field), "'resize.min_pixels' (" + min +
                                    ") is larger than the default 'resize.max_pixels' (" + max +
                                    "): set 'resize.max_pixels' too");
    } else {
      Error(min_field ? MarkOf(*min_field) : MarkOf(*section),
            "'resize.min_pixels' (" + min + ") is larger than 'resize.max_pixels' (" + max + ")");
    }
  }
  for (const char* key : {"max_pixels", "image_max_pixels"}) {
    int64_t value =
        std::string(key) == "max_pixels" ? r.smart.max_pixels : job_.resize.image_max_pixels;
    if (value < min_area) {
      const Field* f = fields->Find(key);
      Error(f ? MarkOf(*f) : MarkOf(*section),
            "'resize." + std::string(key) + "' (" + std::to_string(value) +
                ") is smaller than one factor x factor patch (" + std::to_string(min_area) + ")");
    }
  }
  if (r.long_side.max_long_side < r.long_side.factor) {
    const Field* f = fields->Find("max_long_side");
    Error(f ? MarkOf(*f) : MarkOf(*section),
          "'resize.max_long_side' (" + std::to_string(r.long_side.max_long_side) +
              ") is smaller than 'resize.factor' (" + std::to_string(r.long_side.factor) +
              "), the smallest a frame side can be");
  }
}

void Parser::ReadVision(const Fields& top, const YAML::Node& root) {
  const Field* section = top.Find("vision");
  if (section == nullptr) return;
  const std::string path = "vision";
  std::optional<Fields> fields = ReadMap(section->value, MarkOf(*section), path, kVisionKeys);
  if (!fields) return;
  VisionSpec& v = job_.vision;
  ReadBool(*fields, "enabled", path, &v.enabled);
  ReadString(*fields, "weights", path, &v.weights);
  ReadInt(*fields, "batch_size", path, &v.batch_size, 1, 4096);
  ReadEnum(*fields, "dtype", path, VisionDTypeNames(), &v.dtype);
  ReadInt(*fields, "threads", path, &v.threads, 0, 4096);
  ReadInteger(*fields, "max_pixels", path, &v.max_pixels, 0, int64_t{1} << 32);
  ReadNumber(*fields, "dedup_threshold", path, &v.dedup_threshold, -1, false, 1);
  if (v.max_pixels > 0 && v.max_pixels < 784) {
    const Field* f = fields->Find("max_pixels");
    Error(f ? MarkOf(*f) : MarkOf(*section),
          "'vision.max_pixels' must be 0 (the frames' own size) or at least 784 (28 x 28), got " +
              std::to_string(v.max_pixels));
  }
  if (v.enabled && v.weights.empty()) {
    const Field* f = fields->Find("enabled");
    Error(f ? MarkOf(*f) : MarkOf(*section),
          "'vision.enabled' is true but 'vision.weights' is not set (the directory of the "
          "model's safetensors shards)");
  }
}

void Parser::ReadModel(const Fields& top, const YAML::Node& root) {
  const Field* section = top.Find("model");
  if (section == nullptr) return;
  const std::string path = "model";
  std::optional<Fields> fields = ReadMap(section->value, MarkOf(*section), path, kModelKeys);
  if (!fields) return;
  ModelSpec& m = job_.model;
  std::string endpoint;
  if (ReadString(*fields, "endpoint", path, &endpoint)) {
    if (endpoint.empty()) {
      // "${ENDPOINT:-}" expanding to nothing: prepare / export only.
    } else if (!endpoint.starts_with("http://") && !endpoint.starts_with("https://")) {
      Error(MarkOf(*fields->Find("endpoint")),
            "'model.endpoint' must be an http:// or https:// URL (e.g. "
            "http://localhost:8000/v1), got " +
                Quoted(endpoint));
    } else if (Status url = llm::CheckEndpointUrl(endpoint); !url.ok()) {
      Error(MarkOf(*fields->Find("endpoint")), "'model.endpoint': " + url.message());
    } else {
      while (endpoint.size() > 8 && endpoint.back() == '/') endpoint.pop_back();
      m.endpoint = endpoint;
    }
  }
  if (ReadString(*fields, "name", path, &m.name) && m.name.empty()) {
    Error(MarkOf(*fields->Find("name")), "'model.name' is empty");
  }
  if (ReadString(*fields, "api_key_env", path, &m.api_key_env) && !m.api_key_env.empty() &&
      !ValidEnvName(m.api_key_env)) {
    // The value may be a secret pasted by mistake: never repeat it.
    Error(MarkOf(*fields->Find("api_key_env")),
          "'model.api_key_env' must be the NAME of an environment variable (letters, digits, "
          "'_'; e.g. MINIMAX_API_KEY) that holds the key, not the key itself");
    m.api_key_env.clear();
  }
  if (m.endpoint && !m.api_key_env.empty() && !options_.lookup_env(m.api_key_env)) {
    Warn(MarkOf(*fields->Find("api_key_env")),
         "environment variable '" + m.api_key_env + "' ('model.api_key_env') is not set now");
  }
  ReadEnum(*fields, "thinking_mode", path, ThinkingModeNames(), &m.thinking_mode);
  ReadNumber(*fields, "temperature", path, &m.temperature, 0, false, 2);
  ReadNumber(*fields, "top_p", path, &m.top_p, 0, true, 1);
  if (ReadInt(*fields, "top_k", path, &m.top_k, -1, 1 << 20) && m.top_k == 0) {
    Error(MarkOf(*fields->Find("top_k")), "'model.top_k' must be -1 (disabled) or at least 1");
  }
  int64_t seed = 0;
  if (ReadInteger(*fields, "seed", path, &seed, INT64_MIN, INT64_MAX)) m.seed = seed;
  ReadInteger(*fields, "max_output_tokens", path, &m.max_output_tokens, 1, INT32_MAX);
  ReadInt(*fields, "concurrency", path, &m.concurrency, 1, 4096);
  ReadSeconds(*fields, "connect_timeout", path, &m.connect_timeout_s, 0, true, 86400);
  ReadSeconds(*fields, "read_timeout", path, &m.read_timeout_s, 0, true, 7 * 86400);
  if (ReadSeconds(*fields, "request_timeout", path, &m.request_timeout_s, 0, true, 30 * 86400) &&
      m.request_timeout_s <= m.read_timeout_s) {
    Warn(MarkOf(*fields->Find("request_timeout")),
         "'model.request_timeout' is not longer than 'model.read_timeout': a long prefill is "
         "cut by the request timeout before the read timeout could end it");
  }
  ReadInt(*fields, "retries", path, &m.retries, 0, 100);
  if (ReadString(*fields, "dialect", path, &m.dialect) && m.dialect != "auto" &&
      !llm::DialectByName(m.dialect).ok()) {
    Error(MarkOf(*fields->Find("dialect")),
          "'model.dialect' must be one of 'auto', 'vllm', 'sglang', 'openai'; got " +
              Quoted(m.dialect));
  }
  ReadBool(*fields, "stream", path, &m.stream);
  ReadBool(*fields, "verify_tokens", path, &m.verify_tokens);
  ReadNumber(*fields, "requests_per_minute", path, &m.requests_per_minute, 0, false, 1e9);
  ReadNumber(*fields, "tokens_per_minute", path, &m.tokens_per_minute, 0, false, 1e15);
  ReadSeconds(*fields, "circuit_give_up", path, &m.circuit_give_up_s, 0, true, 30 * 86400);
  ReadInt(*fields, "jpeg_quality", path, &m.jpeg_quality, 1, 100);
  ReadString(*fields, "reduce_question", path, &m.reduce_question);
  if (const Field* price = fields->Find("price")) {
    const std::string price_path = "model.price";
    if (std::optional<Fields> p = ReadMap(price->value, MarkOf(*price), price_path, kPriceKeys)) {
      ReadNumber(*p, "input_per_million", price_path, &m.price_input_per_million, 0, false, 1e9);
      ReadNumber(*p, "cached_input_per_million", price_path, &m.price_cached_input_per_million, 0,
                 false, 1e9);
      ReadNumber(*p, "output_per_million", price_path, &m.price_output_per_million, 0, false, 1e9);
      ReadNumber(*p, "gpu_hour", price_path, &m.price_gpu_hour, 0, false, 1e9);
      ReadInt(*p, "gpus", price_path, &m.gpus, 1, 1 << 20);
    }
  }
}

void Parser::ReadJsonSchema(const Fields& fields, const std::string& path, PromptSpec* prompt) {
  const Field* f = fields.Find("json_schema");
  if (f == nullptr || f->value.IsNull()) return;
  const std::string where = path + ".json_schema";
  std::string text;
  if (f->value.IsMap()) {
    text = YamlToJson(f->value).dump();
  } else if (f->value.IsScalar()) {
    text = f->value.Scalar();
    if (text.empty()) {
      Error(MarkOf(*f), Quoted(where) + " is empty");
      return;
    }
    if (text.front() != '{') {
      prompt->json_schema_file = text;  // read when the run starts
      return;
    }
  } else {
    Error(MarkOf(*f), Quoted(where) +
                          " must be a map (the schema), JSON text or a file name, got " +
                          Describe(f->value));
    return;
  }
  Result<llm::JsonSchema> schema = llm::JsonSchema::Parse(text);
  if (!schema.ok()) {
    Error(MarkOf(*f), Quoted(where) + ": " + schema.status().message());
    return;
  }
  // Compact, in the schema's own key order (guided decoding follows it).
  prompt->json_schema = nlohmann::ordered_json::parse(text).dump();
}

nlohmann::ordered_json Parser::YamlToJson(const YAML::Node& node) {
  using nlohmann::ordered_json;
  if (node.IsMap()) {
    ordered_json out = ordered_json::object();
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      out[key.IsScalar() ? key.Scalar() : std::string()] = YamlToJson(value);
    }
    return out;
  }
  if (node.IsSequence()) {
    ordered_json out = ordered_json::array();
    for (size_t i = 0; i < node.size(); ++i) out.push_back(YamlToJson(node[i]));
    return out;
  }
  if (!node.IsDefined() || node.IsNull()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  if (text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  ordered_json number = ordered_json::parse(text, nullptr, false);
  if (number.is_number()) return number;
  return text;
}

void Parser::ReadContext(const Fields& top, const YAML::Node& root) {
  const Field* section = top.Find("context");
  ContextSpec& c = job_.context;
  std::optional<Fields> fields;
  if (section != nullptr) {
    fields = ReadMap(section->value, MarkOf(*section), "context", kContextKeys);
  }
  bool reserve_set = false;
  if (fields) {
    const std::string path = "context";
    ReadInteger(*fields, "token_budget", path, &c.token_budget, 1, INT32_MAX);
    reserve_set =
        ReadInteger(*fields, "reserve_output_tokens", path, &c.reserve_output_tokens, 0, INT32_MAX);
    ReadEnum(*fields, "fit_strategy", path, FitStrategyNames(), &c.fit_strategy);
    if (std::optional<YAML::Node> steps = ReadList(*fields, "fit_steps", 16)) {
      const Field* f = fields->Find("fit_steps");
      c.fit_steps.clear();
      for (const YAML::Node& step : *steps) {
        Result<llm::FitStep> parsed = llm::ParseFitStep(step.IsScalar() ? step.Scalar() : "");
        if (!parsed.ok()) {
          Error(step.Mark().is_null() ? MarkOf(*f) : step.Mark(),
                "'context.fit_steps': " + parsed.status().message());
        } else {
          c.fit_steps.push_back(*parsed);
        }
      }
    }
    ReadString(*fields, "tokenizer", path, &c.tokenizer);
    if (ReadString(*fields, "template", path, &c.chat_template)) {
      if (!llm::BuiltInChatTemplate(c.chat_template).ok()) {
        Error(MarkOf(*fields->Find("template")),
              "'context.template' must be one of 'minimax-m3', 'chatml'; got '" + c.chat_template +
                  "'");
      }
    }
    ReadEnum(*fields, "transport", path, TransportNames(), &c.transport);
    ReadInt(*fields, "server_num_frames", path, &c.server_num_frames, 0, 1000000);
    ReadNumber(*fields, "server_fps", path, &c.server_fps, 0, true, 1000);
    ReadBool(*fields, "server_timestamps", path, &c.server_timestamps);
    std::string documents;
    if (ReadString(*fields, "documents", path, &documents)) {
      if (documents != "before" && documents != "after") {
        Error(MarkOf(*fields->Find("documents")),
              "'context.documents' must be 'before' or 'after'; got '" + documents + "'");
      }
      c.documents_first = documents != "after";
    }
    ReadNumber(*fields, "min_fps", path, &c.min_fps, 0, true, 1000);
    ReadInteger(*fields, "min_pixels", path, &c.min_pixels, 784, INT32_MAX);
    ReadInt(*fields, "prefix_block", path, &c.prefix_block, 0, 65536);
    if (std::optional<YAML::Node> files = ReadList(*fields, "attach", 1024)) {
      for (const YAML::Node& file : *files) {
        if (!file.IsScalar() || file.Scalar().empty()) {
          Error(file.Mark().is_null() ? MarkOf(*fields->Find("attach")) : file.Mark(),
                "'context.attach' lists file paths; got " + Describe(file));
        } else {
          c.attach.push_back(file.Scalar());
        }
      }
    }
    // One question over several videos and images (what `reel ask a.mp4 b.mp4 "q"` sets, and so
    // what its stored job says): these inputs are read into the context of the one left out.
    if (std::optional<YAML::Node> files = ReadList(*fields, "group", 1024)) {
      const YAML::Mark list_mark = MarkOf(*fields->Find("group"));
      for (const YAML::Node& file : *files) {
        const YAML::Mark mark = file.Mark().is_null() ? list_mark : file.Mark();
        if (!file.IsScalar() || file.Scalar().empty()) {
          Error(mark, "'context.group' lists input files; got " + Describe(file));
          continue;
        }
        const std::string& entry = file.Scalar();
        const bool listed = std::any_of(job_.inputs.begin(), job_.inputs.end(),
                                        [&](const InputSpec& i) { return i.path == entry; });
        if (!listed || entry.find_first_of("*?") != std::string::npos) {
          Error(mark, "'context.group' lists " + Quoted(entry) +
                          ", which is not a file of 'inputs' (name it as 'inputs' does, no glob)");
          continue;
        }
        c.group.push_back(entry);
      }
      if (!job_.inputs.empty() &&
          std::all_of(job_.inputs.begin(), job_.inputs.end(), [&](const InputSpec& i) {
            return std::find(c.group.begin(), c.group.end(), i.path) != c.group.end();
          })) {
        Error(list_mark,
              "'context.group' lists every input; leave out the one the question is asked "
              "about (its answer holds the group's)");
      }
    }
  }
  const int64_t max_output = job_.model.max_output_tokens;
  if (!reserve_set) {
    c.reserve_output_tokens = max_output;
  } else if (c.reserve_output_tokens < max_output) {
    Error(MarkOf(*fields->Find("reserve_output_tokens")),
          "'context.reserve_output_tokens' (" + std::to_string(c.reserve_output_tokens) +
              ") is less than 'model.max_output_tokens' (" + std::to_string(max_output) +
              "); the server would reject prompts that fill the rest");
  }
  if (c.reserve_output_tokens >= c.token_budget) {
    const Field* f =
        fields ? fields->Find(reserve_set ? "reserve_output_tokens" : "token_budget") : nullptr;
    Error(f ? MarkOf(*f) : (section ? MarkOf(*section) : root.Mark()),
          "the output reserve (" + std::to_string(c.reserve_output_tokens) +
              " tokens) leaves no room for the prompt in 'context.token_budget' (" +
              std::to_string(c.token_budget) + ")");
  }
}

void Parser::ReadPrompts(const Fields& top) {
  std::optional<YAML::Node> list =
      ReadList(top, "prompts", static_cast<size_t>(options_.max_prompts));
  if (!list) {
    if (job_.model.endpoint) {
      Warn(YAML::Mark::null_mark(),
           "'model.endpoint' is set but there are no 'prompts': nothing will be "
           "asked");
    }
    return;
  }
  std::map<std::string, YAML::Mark> ids;
  for (size_t i = 0; i < list->size(); ++i) {
    YAML::Node entry = (*list)[i];
    std::string path = Element("prompts", i);
    YAML::Mark mark = entry.Mark().is_null() ? MarkOf(*top.Find("prompts")) : entry.Mark();
    if (!entry.IsMap()) {
      Error(mark, Quoted(path) + " must be a map with 'id' and 'question', got " + Describe(entry));
      continue;
    }
    std::optional<Fields> fields = ReadMap(entry, mark, path, kPromptKeys);
    if (!fields) continue;
    PromptSpec prompt;
    bool ok = true;
    // A kind that is not one (`kind: chapter`) gets its did-you-mean alone: which keys are
    // required depends on the kind, so their absence is not reported beside it.
    bool unknown_kind = false;
    if (fields->Has("kind") && !ReadEnum(*fields, "kind", path, PromptKindNames(), &prompt.kind)) {
      ok = false;
      unknown_kind = true;
    }
    const bool chapters = prompt.kind == PromptKind::kChapters;
    if (chapters && !fields->Has("id")) {
      prompt.id = "chapters";  // the built-in kind names itself
    } else if (!ReadString(*fields, "id", path, &prompt.id)) {
      if (!fields->Has("id") && !unknown_kind) {
        Error(mark, Quoted(path) + ": missing required key 'id'");
      }
      ok = false;
    } else if (!ValidPromptId(prompt.id)) {
      Error(MarkOf(*fields->Find("id")),
            Quoted(path + ".id") + " may use only letters, digits, '_', '-' and '.', got " +
                Quoted(prompt.id));
      ok = false;
    }
    if (ok) {
      const YAML::Mark id_mark = fields->Has("id") ? MarkOf(*fields->Find("id")) : mark;
      if (auto [pos, inserted] = ids.emplace(prompt.id, id_mark); !inserted) {
        Error(id_mark, "duplicate prompt id " + Quoted(prompt.id) + " (first at " +
                           Position(pos->second) + ")");
        ok = false;
      }
    }
    if (chapters && !fields->Has("question")) {
      // The built-in question (llm/answers/chapters.h), with the item's duration.
    } else if (!ReadString(*fields, "question", path, &prompt.question)) {
      if (!fields->Has("question") && !unknown_kind) {
        Error(mark, Quoted(path) + ": missing required key 'question'");
      }
      ok = false;
    } else if (prompt.question.empty() && !chapters) {
      Error(MarkOf(*fields->Find("question")), Quoted(path + ".question") + " is empty");
      ok = false;
    }
    ReadString(*fields, "system", path, &prompt.system);
    ReadJsonSchema(*fields, path, &prompt);
    ReadString(*fields, "reduce", path, &prompt.reduce);
    if (ok) job_.prompts.push_back(std::move(prompt));
  }
  if (list->size() == 0 && job_.model.endpoint) {
    Warn(MarkOf(*top.Find("prompts")),
         "'model.endpoint' is set but 'prompts' is empty: nothing will be asked");
  }
}

void Parser::ReadStorage(const Fields& top, const YAML::Node& root) {
  job_.storage.database = job_.name + ".db";
  const Field* section = top.Find("storage");
  if (section == nullptr) return;
  std::optional<Fields> fields = ReadMap(section->value, MarkOf(*section), "storage", kStorageKeys);
  if (!fields) return;
  std::string database;
  if (ReadString(*fields, "database", "storage", &database)) {
    if (database.empty()) {
      Error(MarkOf(*fields->Find("database")), "'storage.database' is empty");
    } else {
      job_.storage.database = database;
    }
  }
  ReadString(*fields, "frame_cache", "storage", &job_.storage.frame_cache);
}

void Parser::ReadTextSettings(const Fields& top) {
  const Field* section = top.Find("text");
  if (section == nullptr) return;
  std::optional<Fields> fields = ReadMap(section->value, MarkOf(*section), "text", kTextKeys);
  if (!fields) return;
  std::string encoding;
  if (ReadString(*fields, "fallback_encoding", "text", &encoding)) {
    Status known = CheckTextEncoding(encoding);
    if (!known.ok()) {
      Error(MarkOf(*fields->Find("fallback_encoding")),
            "'text.fallback_encoding': " + known.message());
    } else {
      job_.text.fallback_encoding = encoding;
    }
  }
}

void Parser::ReadLimits(const Fields& top, const YAML::Node& root) {
  const Field* section = top.Find("limits");
  if (section == nullptr) return;
  const std::string path = "limits";
  std::optional<Fields> fields = ReadMap(section->value, MarkOf(*section), path, kLimitsKeys);
  if (!fields) return;
  LimitsSpec& l = job_.limits;
  ReadSeconds(*fields, "item_time_limit", path, &l.media.time_limit_s, 0, true, 30 * 86400);
  ReadBytes(*fields, "max_file_size", path, &l.max_file_bytes, 1);
  ReadInt(*fields, "retries", path, &l.item_retries, 0, 100);
  ReadNumber(*fields, "max_decode_error_rate", path, &l.media.max_error_rate, 0, false, 1);
  ReadInt(*fields, "min_decode_errors", path, &l.media.min_errors_for_rate, 0, INT32_MAX);
  ReadInteger(*fields, "max_frame_pixels", path, &l.media.max_pixels, 1, int64_t{1} << 40);
  ReadInt(*fields, "max_frame_side", path, &l.media.max_side, 1, 1 << 20);
  ReadInt(*fields, "decoder_threads", path, &l.media.decoder_threads, 0, 4096);
}

}  // namespace reel::jobs::parser
