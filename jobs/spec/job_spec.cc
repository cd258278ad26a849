// Job file parsing and validation. The only file in Reel that includes yaml-cpp.
//
// yaml-cpp reports problems by throwing; every call into it is inside Parser::Run's try block, and
// every problem in the job becomes a Diagnostic, so one pass reports all of them.
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/strings.h"
#include "base/text_encoding.h"
#include "base/utf8.h"
#include "jobs/spec/job_spec.h"
#include "jobs/spec/job_values.h"
#include "llm/client/dialect.h"
#include "llm/client/endpoint_url.h"
#include "llm/client/json_schema.h"

namespace reel::jobs {
namespace {

namespace fs = std::filesystem;

struct Diagnostic {
  int line = 0;  // 1-based; 0 = no position (the whole file)
  int column = 0;
  std::string message;
};

// One key of a map, after merge keys (`<<`) are applied.
struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

class Fields {
 public:
  void Add(Field field) { fields_.push_back(std::move(field)); }
  const Field* Find(std::string_view key) const {
    for (const Field& f : fields_) {
      if (f.key == key) return &f;
    }
    return nullptr;
  }
  // Present and not null.
  bool Has(std::string_view key) const {
    const Field* f = Find(key);
    return f != nullptr && !f->value.IsNull();
  }

 private:
  std::vector<Field> fields_;
};

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "nothing";
    default: {
      std::string text = node.Scalar();
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      return "'" + text + "'";
    }
  }
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// "1048576 bytes (1 MiB)", or "100000 bytes" when no unit says it more simply.
std::string Bytes(uint64_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  std::string unit = FormatByteSize(static_cast<int64_t>(bytes));
  if (!unit.ends_with(" B")) text += " (" + unit + ")";
  return text;
}

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string Element(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

bool ValidPromptId(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

bool ValidEnvName(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

const std::vector<std::string> kTopKeys = {"version", "name",   "description", "inputs", "sampling",
                                           "resize",  "vision", "context",     "model",  "prompts",
                                           "storage", "text",   "limits"};
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
                                               "attach"};

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

// Counts the documents of a YAML stream and notes where the second one starts; builds nothing.
class DocumentCounter final : public YAML::EventHandler {
 public:
  int documents() const { return documents_; }
  const YAML::Mark& second_start() const { return second_start_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2) second_start_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  int documents_ = 0;
  YAML::Mark second_start_;
};

// Keys that only matter for some sampling policies.
struct PolicyKey {
  const char* key;
  std::vector<pipeline::SamplingPolicy> policies;
};

class Parser {
 public:
  Parser(std::string source, std::string base_dir, const ParseOptions& options)
      : source_(std::move(source)), base_dir_(std::move(base_dir)), options_(options) {
    if (!options_.lookup_env) {
      options_.lookup_env = [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
      };
    }
  }

  // A job file bigger than the limit: `prefix` holds its first bytes (at least the limit).
  Result<JobSpec> TooBig(std::string_view prefix, const std::string& size) {
    ReportTooBig(prefix, size);
    return Finish();
  }

  Result<JobSpec> Run(std::string_view text) {
    if (text.size() > options_.max_file_bytes) {
      ReportTooBig(text, std::to_string(text.size()) + " bytes");
      return Finish();
    }
    // YAML is Unicode text. A job file saved in a legacy encoding is read like a subtitle file
    // (base/text_encoding.h; UTF-16 with a byte-order mark too) rather than passed on with bytes
    // no YAML scalar can write back (RenderResolvedJob must parse back to the same job).
    std::string decoded;
    if (!IsValidUtf8(text)) {
      Result<DecodedText> read = DecodeText(text);
      if (read.ok()) {
        if (read->info.basis != EncodingBasis::kByteOrderMark) {
          Warn(YAML::Mark::null_mark(),
               "the job file is " + read->info.Describe() +
                   "; save it as UTF-8 (to name a file whose name is not UTF-8, use a glob)");
        }
        decoded = std::move(read->text);
        text = decoded;
      }
    }
    text_ = text;
    YAML::Node root;
    std::optional<YAML::Mark> second_document;
    try {
      const std::string copy(text);
      root = YAML::Load(copy);
      // YAML::LoadAll never returns on some inputs (a lone ',': yaml-cpp issue #1040, fixed
      // upstream after 0.7): the documents are counted here, and only up to the second.
      std::istringstream stream(copy);
      YAML::Parser parser(stream);
      DocumentCounter counter;
      for (int n = 0; n < 2 && parser.HandleNextDocument(counter); ++n) {
      }
      if (counter.documents() > 1) second_document = counter.second_start();
    } catch (const YAML::DeepRecursion& e) {
      Error(e.mark, "nesting is deeper than " + std::to_string(options_.max_depth) + " levels");
      return Finish();
    } catch (const YAML::ParserException& e) {
      ReportSyntaxError(text, e.mark, e.msg);
      return Finish();
    } catch (const YAML::Exception& e) {
      Error(e.mark, std::string("YAML error: ") + e.what());
      return Finish();
    }
    if (!root.IsDefined() || root.IsNull()) {
      // yaml-cpp 0.7 reads some stray tokens (a lone ',') as an empty document: name them.
      if (std::optional<size_t> stray = FirstContent(text)) {
        TextPosition at = PositionOfOffset(text, *stray);
        errors_.push_back({at.line, at.column,
                           "YAML syntax error: unexpected '" + std::string(1, text[*stray]) +
                               "' (the job file holds no settings)"});
        return Finish();
      }
      Error(YAML::Mark(), "the job file is empty; it needs at least 'name' and 'inputs'");
      return Finish();
    }
    if (second_document) {
      Error(*second_document, "more than one YAML document ('---'); a job file holds one job");
    }
    try {
      Shape shape;
      if (!CheckShape(root, 0, &shape)) return Finish();
      text_bytes_ = shape.bytes;
      ReadJob(root);
    } catch (const YAML::Exception& e) {
      Error(e.mark, std::string("YAML error: ") + e.what());
    }
    return Finish();
  }

 private:
  void Error(const YAML::Mark& mark, std::string message) {
    errors_.push_back({mark.line + 1, mark.column + 1, std::move(message)});
  }
  void Warn(const YAML::Mark& mark, std::string message) {
    warnings_.push_back({mark.line + 1, mark.column + 1, std::move(message)});
  }

  std::string Format(const Diagnostic& d) const {
    if (d.line <= 0) return source_ + ": " + d.message;
    return source_ + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
           d.message;
  }

  Result<JobSpec> Finish() {
    auto by_position = [](const Diagnostic& a, const Diagnostic& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    };
    std::stable_sort(errors_.begin(), errors_.end(), by_position);
    std::stable_sort(warnings_.begin(), warnings_.end(), by_position);
    if (!errors_.empty()) {
      std::string message;
      for (const Diagnostic& d : errors_) message += (message.empty() ? "" : "\n") + Format(d);
      return InvalidArgument(message);
    }
    for (const Diagnostic& d : warnings_) job_.warnings.push_back(Format(d));
    return std::move(job_);
  }

  // The offset of the first character that is not blank, a comment, a document marker ('---',
  // '...') or a directive ('%'): nullopt if there is none.
  static std::optional<size_t> FirstContent(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
      size_t end = text.find('\n', i);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(i, end - i);
      size_t first = line.find_first_not_of(" \t\r");
      if (first != std::string_view::npos && line[first] != '#' && line[first] != '%' &&
          !(first == 0 && (line.starts_with("---") || line.starts_with("...")))) {
        return i + first;
      }
      i = end + 1;
    }
    return std::nullopt;
  }

  // The job file is bigger than max_file_bytes: say so where the limit falls, with the size
  // (`size`: "N bytes", or "more than N bytes" when unknown) and the limit.
  void ReportTooBig(std::string_view text, const std::string& size) {
    TextPosition at = PositionOfOffset(text, options_.max_file_bytes);
    errors_.push_back({at.line, at.column,
                       "the job file is " + size + ", over the limit of " +
                           Bytes(options_.max_file_bytes) + "; the limit falls here"});
  }

  // yaml-cpp's syntax errors, with what its messages leave out: where an unclosed bracket
  // opened (yaml-cpp stops at the next token it cannot take, often the end of the file) and
  // whether a tab in the indentation is the cause.
  void ReportSyntaxError(std::string_view text, const YAML::Mark& mark, const std::string& msg) {
    std::string message = "YAML syntax error: " + msg;
    const size_t at = mark.pos >= 0 ? static_cast<size_t>(mark.pos) : text.size();
    if (msg.find("flow not found") != std::string::npos) {
      if (std::optional<OpenBracket> open = FindUnclosedFlow(text, at)) {
        const char close = open->bracket == '[' ? ']' : '}';
        errors_.push_back({open->position.line, open->position.column,
                           "YAML syntax error: this '" + std::string(1, open->bracket) +
                               "' is never closed by a '" + std::string(1, close) +
                               "' (the parser gave up at " + Position(mark) + ": " + msg + ")"});
        return;
      }
    }
    if (msg.find("illegal flow end") != std::string::npos && at < text.size()) {
      const char close = text[at];
      std::optional<OpenBracket> open = FindUnclosedFlow(text, at);
      if (open && (close == ']' || close == '}')) {
        message += " (this '" + std::string(1, close) + "' does not close the '" +
                   std::string(1, open->bracket) + "' at " + std::to_string(open->position.line) +
                   ":" + std::to_string(open->position.column) + ")";
      }
    }
    const int line = mark.is_null() ? PositionOfOffset(text, text.size()).line : mark.line + 1;
    if (std::optional<int> tab = LastTabIndentedLine(text, line)) {
      message += " (line " + std::to_string(*tab) +
                 " is indented with a tab; YAML indentation must use spaces)";
    }
    Error(mark, message);
  }

  // What CheckShape has seen so far: values, and bytes of text, both after expanding aliases.
  struct Shape {
    int nodes = 0;
    uint64_t bytes = 0;
  };

  // Depth and size limits on the whole tree, before anything reads it. Aliases are counted at
  // every use: a small file that aliases a big value many times is as big as its expansion.
  bool CheckShape(const YAML::Node& node, int depth, Shape* shape) {
    if (++shape->nodes > options_.max_nodes) {
      Error(node.Mark(), "the job file has more than " + std::to_string(options_.max_nodes) +
                             " values (after expanding aliases)");
      return false;
    }
    if (node.IsScalar()) {
      if (!CheckQuoteClosed(node)) return false;
      shape->bytes += node.Scalar().size();
      if (shape->bytes > options_.max_expanded_bytes) {
        Error(node.Mark(), "the job file's text is more than " +
                               Bytes(options_.max_expanded_bytes) +
                               " after expanding aliases; this value passes the limit");
        return false;
      }
    }
    if (!node.IsMap() && !node.IsSequence()) return true;
    if (depth >= options_.max_depth) {
      Error(node.Mark(),
            "nesting is deeper than " + std::to_string(options_.max_depth) + " levels");
      return false;
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (node.IsMap()) {
        const YAML::Node key = it->first;
        const YAML::Node value = it->second;
        if (!CheckShape(key, depth + 1, shape) || !CheckShape(value, depth + 1, shape)) {
          return false;
        }
      } else {
        const YAML::Node item = *it;
        if (!CheckShape(item, depth + 1, shape)) return false;
      }
    }
    return true;
  }

  // yaml-cpp 0.7 reads a quoted scalar that is never closed (`question: "hi` at the end of the
  // file) as if it were closed there ("hi "), where YAML (and PyYAML) refuse it: a quoted scalar
  // must find its closing quote in the text after its opening one.
  bool CheckQuoteClosed(const YAML::Node& node) {
    const YAML::Mark mark = node.Mark();
    if (node.Tag() != "!" || mark.is_null() || mark.pos < 0 ||
        static_cast<size_t>(mark.pos) >= text_.size()) {
      return true;
    }
    const char quote = text_[static_cast<size_t>(mark.pos)];
    if (quote != '"' && quote != '\'') return true;
    for (size_t i = static_cast<size_t>(mark.pos) + 1; i < text_.size(); ++i) {
      if (quote == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == quote) {
        if (quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
          ++i;  // '' is a quote inside a single-quoted scalar
        } else {
          return true;
        }
      }
    }
    Error(mark, std::string("YAML syntax error: the ") + (quote == '"' ? "double" : "single") +
                    "-quoted text starting here is never closed (it runs to the end of the file); "
                    "add the closing " +
                    quote);
    return false;
  }

  YAML::Mark MarkOf(const Field& f) const {
    YAML::Mark mark = f.value.Mark();
    return mark.is_null() ? f.key_node.Mark() : mark;
  }

  // The keys of a map with merge keys applied, duplicates and unknown keys reported. A missing or
  // null section gives no fields; anything else that is not a map is an error (nullopt).
  std::optional<Fields> ReadMap(const YAML::Node& node, const YAML::Mark& fallback,
                                const std::string& path, const std::vector<std::string>& known) {
    Fields fields;
    if (!node.IsDefined() || node.IsNull()) return fields;
    if (!node.IsMap()) {
      Error(node.Mark().is_null() ? fallback : node.Mark(),
            Quoted(path) + " must be a map of settings, got " + Describe(node));
      return std::nullopt;
    }
    std::map<std::string, YAML::Mark> seen;
    std::vector<YAML::Node> merged;
    for (auto it = node.begin(); it != node.end(); ++it) {
      // Copies: yaml-cpp's iterator hands out a temporary pair.
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      if (!key.IsScalar()) {
        Error(key.Mark(), "keys must be plain names, got " + Describe(key));
        continue;
      }
      std::string name = key.Scalar();
      if (name == "<<") {
        if (value.IsMap()) {
          merged.push_back(value);
        } else if (value.IsSequence()) {
          for (size_t i = 0; i < value.size(); ++i) {
            const YAML::Node m = value[i];
            if (m.IsMap()) {
              merged.push_back(m);
            } else {
              Error(MarkOr(m, key), "'<<' merges maps only, got " + Describe(m));
            }
          }
        } else {
          Error(MarkOr(value, key), "'<<' merges a map or a list of maps, got " + Describe(value));
        }
        continue;
      }
      if (auto [pos, inserted] = seen.emplace(name, key.Mark()); !inserted) {
        Error(key.Mark(),
              "duplicate key " + Quoted(name) + " (first at " + Position(pos->second) + ")");
        continue;
      }
      if (name.starts_with("x-")) continue;  // extension keys: a place for anchors
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        ReportUnknownKey(key, name, path, known);
        continue;
      }
      fields.Add({name, key, value});
    }
    // Merged maps fill in keys the map does not set itself; earlier maps win.
    for (const YAML::Node& m : merged) {
      for (auto it = m.begin(); it != m.end(); ++it) {
        const YAML::Node key = it->first;
        const YAML::Node value = it->second;
        if (!key.IsScalar()) continue;
        std::string name = key.Scalar();
        if (!seen.emplace(name, key.Mark()).second) continue;
        if (name.starts_with("x-")) continue;
        if (std::find(known.begin(), known.end(), name) == known.end()) {
          ReportUnknownKey(key, name, path, known);
          continue;
        }
        fields.Add({name, key, value});
      }
    }
    return fields;
  }

  static YAML::Mark MarkOr(const YAML::Node& node, const YAML::Node& other) {
    return node.Mark().is_null() ? other.Mark() : node.Mark();
  }

  static std::string Position(const YAML::Mark& mark) {
    return std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }

  void ReportUnknownKey(const YAML::Node& key, const std::string& name, const std::string& path,
                        const std::vector<std::string>& known) {
    std::string where = path.empty() ? "" : " in " + Quoted(path);
    std::string message = "unknown key " + Quoted(name) + where;
    if (name == "api_key" || name == "key" || name == "token") {
      message +=
          " (the key itself never goes in a job file: put the NAME of an environment "
          "variable that holds it in 'model.api_key_env')";
    } else if (std::string guess = ClosestName(name, known); !guess.empty()) {
      message += " (did you mean " + Quoted(guess) + "?)";
    } else {
      message += " (valid keys: " + Join(known, ", ") + ")";
    }
    Error(key.Mark(), message);
  }

  // The text of a scalar value with ${VAR} expanded; nullopt (reported) if not a scalar or the
  // expansion fails. Null values are the caller's business.
  std::optional<std::string> Text(const Field& f, const std::string& path) {
    if (!f.value.IsScalar()) {
      Error(MarkOf(f), Quoted(path) + " must be a single value, got " + Describe(f.value));
      return std::nullopt;
    }
    Result<std::string> expanded = ExpandVariables(f.value.Scalar(), options_.lookup_env);
    if (!expanded.ok()) {
      Error(MarkOf(f), Quoted(path) + ": " + expanded.status().message());
      return std::nullopt;
    }
    // Variables count towards the same limit on the text as aliases.
    if (expanded->size() > f.value.Scalar().size()) {
      text_bytes_ += expanded->size() - f.value.Scalar().size();
      if (text_bytes_ > options_.max_expanded_bytes) {
        Error(MarkOf(f), Quoted(path) + ": the job file's text is more than " +
                             Bytes(options_.max_expanded_bytes) +
                             " after expanding aliases and variables");
        return std::nullopt;
      }
    }
    return std::move(expanded).value();
  }

  // A present, non-null value's field, full path and text (${VAR} expanded).
  struct FieldText {
    const Field* field;
    std::string path;
    std::string text;
  };
  std::optional<FieldText> ReadText(const Fields& fields, const std::string& key,
                                    const std::string& path) {
    const Field* f = fields.Find(key);
    if (f == nullptr || f->value.IsNull()) return std::nullopt;
    std::string full = Child(path, key);
    std::optional<std::string> text = Text(*f, full);
    if (!text) return std::nullopt;
    return FieldText{f, std::move(full), std::move(*text)};
  }

  // The value parsed by `parse`, or nullopt when absent, null or unparsable; an unparsable value
  // is reported as "'path' must be <expected>, got '<text>'".
  template <typename T, typename Parse>
  std::optional<std::pair<FieldText, T>> ReadParsed(const Fields& fields, const std::string& key,
                                                    const std::string& path, Parse parse,
                                                    const std::string& expected) {
    std::optional<FieldText> f = ReadText(fields, key, path);
    if (!f) return std::nullopt;
    std::optional<T> value = parse(f->text);
    if (!value) {
      Error(MarkOf(*f->field),
            Quoted(f->path) + " must be " + expected + ", got " + Quoted(f->text));
      return std::nullopt;
    }
    return std::pair<FieldText, T>{std::move(*f), *value};
  }

  // Each reader: returns true when the key is present, not null, and valid (then `*out` is set).
  bool ReadString(const Fields& fields, const std::string& key, const std::string& path,
                  std::string* out) {
    std::optional<FieldText> f = ReadText(fields, key, path);
    if (!f) return false;
    *out = std::move(f->text);
    return true;
  }

  bool ReadNumber(const Fields& fields, const std::string& key, const std::string& path,
                  double* out, double min, bool min_exclusive, double max) {
    auto v = ReadParsed<double>(fields, key, path, ParseNumber, "a number");
    return v &&
           CheckRange(*v->first.field, v->first.path, v->second, min, min_exclusive, max,
                      v->first.text) &&
           (*out = v->second, true);
  }

  bool ReadSeconds(const Fields& fields, const std::string& key, const std::string& path,
                   double* out, double min, bool min_exclusive, double max) {
    auto v = ReadParsed<double>(fields, key, path, ParseSeconds,
                                "a time in seconds (e.g. 90, 1.5, \"500ms\", \"5m\", \"1:30\")");
    return v &&
           CheckRange(*v->first.field, v->first.path, v->second, min, min_exclusive, max,
                      v->first.text) &&
           (*out = v->second, true);
  }

  bool ReadInteger(const Fields& fields, const std::string& key, const std::string& path,
                   int64_t* out, int64_t min, int64_t max) {
    auto v = ReadParsed<int64_t>(fields, key, path, ParseInteger, "a whole number");
    return v && CheckIntRange(*v->first.field, v->first.path, v->second, min, max) &&
           (*out = v->second, true);
  }

  bool ReadInt(const Fields& fields, const std::string& key, const std::string& path, int* out,
               int64_t min, int64_t max) {
    int64_t value = 0;
    if (!ReadInteger(fields, key, path, &value, min, max)) return false;
    *out = static_cast<int>(value);
    return true;
  }

  bool ReadBytes(const Fields& fields, const std::string& key, const std::string& path,
                 int64_t* out, int64_t min) {
    auto v = ReadParsed<int64_t>(fields, key, path, ParseByteSize,
                                 "a size in bytes (e.g. 1048576, \"500MB\", \"2GiB\")");
    return v && CheckIntRange(*v->first.field, v->first.path, v->second, min, INT64_MAX) &&
           (*out = v->second, true);
  }

  bool ReadBool(const Fields& fields, const std::string& key, const std::string& path, bool* out) {
    auto v = ReadParsed<bool>(fields, key, path, ParseBool, "true or false");
    return v && (*out = v->second, true);
  }

  template <typename E>
  bool ReadEnum(const Fields& fields, const std::string& key, const std::string& path,
                const EnumNames<E>& names, E* out) {
    std::optional<FieldText> f = ReadText(fields, key, path);
    if (!f) return false;
    std::optional<E> value = names.Parse(f->text);
    if (!value) {
      std::string message = Quoted(f->path) + " must be one of " + Join(names.Names(), ", ") +
                            "; got " + Quoted(f->text);
      if (std::string guess = ClosestName(f->text, names.Names()); !guess.empty()) {
        message += " (did you mean " + Quoted(guess) + "?)";
      }
      Error(MarkOf(*f->field), message);
      return false;
    }
    *out = *value;
    return true;
  }

  bool CheckRange(const Field& f, const std::string& path, double value, double min,
                  bool min_exclusive, double max, const std::string& text) {
    if (min_exclusive ? value <= min : value < min) {
      Error(MarkOf(f), Quoted(path) + " must be " +
                           (min_exclusive ? "greater than " : "at least ") + FormatNumber(min) +
                           ", got " + text);
      return false;
    }
    if (value > max) {
      Error(MarkOf(f), Quoted(path) + " must be at most " + FormatNumber(max) + ", got " + text);
      return false;
    }
    return true;
  }

  bool CheckIntRange(const Field& f, const std::string& path, int64_t value, int64_t min,
                     int64_t max) {
    if (value < min) {
      Error(MarkOf(f), Quoted(path) + " must be at least " + std::to_string(min) + ", got " +
                           std::to_string(value));
      return false;
    }
    if (value > max) {
      Error(MarkOf(f), Quoted(path) + " must be at most " + std::to_string(max) + ", got " +
                           std::to_string(value));
      return false;
    }
    return true;
  }

  // A required list; nullopt (reported) if missing, not a list, or too long.
  std::optional<YAML::Node> ReadList(const Fields& fields, const std::string& key,
                                     size_t max_items) {
    const Field* f = fields.Find(key);
    if (f == nullptr || f->value.IsNull()) return std::nullopt;
    if (!f->value.IsSequence()) {
      Error(MarkOf(*f), Quoted(key) + " must be a list, got " + Describe(f->value));
      return std::nullopt;
    }
    if (f->value.size() > max_items) {
      Error(MarkOf(*f), Quoted(key) + " has " + std::to_string(f->value.size()) +
                            " entries; the limit is " + std::to_string(max_items));
      return std::nullopt;
    }
    return f->value;
  }

  void ReadJob(const YAML::Node& root) {
    std::optional<Fields> top = ReadMap(root, root.Mark(), "", kTopKeys);
    if (!top) return;
    const Fields& fields = *top;
    job_.source = source_;
    job_.base_dir = base_dir_;

    int64_t version = kJobFormatVersion;
    if (ReadInteger(fields, "version", "", &version, 1, INT32_MAX) &&
        version != kJobFormatVersion) {
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
    ReadContext(fields, root);
    ReadPrompts(fields);
    ReadStorage(fields, root);
    ReadTextSettings(fields);
    ReadLimits(fields, root);
  }

  void CheckName(const Field& f) {
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

  void ReadInputs(const Fields& fields) {
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

  static bool ValidGlob(const std::string& pattern) {
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

  void ReadSampling(const Fields& top, const YAML::Node& root) {
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
        Error(MarkOf(*f),
              "'sampling.timestamps' must be a list of times, got " + Describe(f->value));
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
        Warn(f->key_node.Mark(), "'sampling." + std::string(pk.key) +
                                     "' has no effect with policy " +
                                     Quoted(SamplingPolicyKey(s.policy)));
      }
    }
  }

  void ReadResize(const Fields& top, const YAML::Node& root) {
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

  void ReadVision(const Fields& top, const YAML::Node& root) {
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

  void ReadModel(const Fields& top, const YAML::Node& root) {
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
        ReadNumber(*p, "output_per_million", price_path, &m.price_output_per_million, 0, false,
                   1e9);
        ReadNumber(*p, "gpu_hour", price_path, &m.price_gpu_hour, 0, false, 1e9);
        ReadInt(*p, "gpus", price_path, &m.gpus, 1, 1 << 20);
      }
    }
  }

  // prompts[i].json_schema: a map (the schema inline), JSON text ("{...}"), or a file name.
  void ReadJsonSchema(const Fields& fields, const std::string& path, PromptSpec* prompt) {
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

  // A YAML node as JSON: plain scalars that read as numbers, booleans or null become those;
  // quoted scalars stay strings.
  static nlohmann::ordered_json YamlToJson(const YAML::Node& node) {
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

  void ReadContext(const Fields& top, const YAML::Node& root) {
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
      reserve_set = ReadInteger(*fields, "reserve_output_tokens", path, &c.reserve_output_tokens, 0,
                                INT32_MAX);
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
                "'context.template' must be one of 'minimax-m3', 'chatml'; got '" +
                    c.chat_template + "'");
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

  void ReadPrompts(const Fields& top) {
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
        Error(mark,
              Quoted(path) + " must be a map with 'id' and 'question', got " + Describe(entry));
        continue;
      }
      std::optional<Fields> fields = ReadMap(entry, mark, path, kPromptKeys);
      if (!fields) continue;
      PromptSpec prompt;
      bool ok = true;
      // A kind that is not one (`kind: chapter`) gets its did-you-mean alone: which keys are
      // required depends on the kind, so their absence is not reported beside it.
      bool unknown_kind = false;
      if (fields->Has("kind") &&
          !ReadEnum(*fields, "kind", path, PromptKindNames(), &prompt.kind)) {
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

  void ReadStorage(const Fields& top, const YAML::Node& root) {
    job_.storage.database = job_.name + ".db";
    const Field* section = top.Find("storage");
    if (section == nullptr) return;
    std::optional<Fields> fields =
        ReadMap(section->value, MarkOf(*section), "storage", kStorageKeys);
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

  void ReadTextSettings(const Fields& top) {
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

  void ReadLimits(const Fields& top, const YAML::Node& root) {
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

  std::string source_;
  std::string base_dir_;
  ParseOptions options_;
  JobSpec job_;
  std::vector<Diagnostic> errors_;
  std::vector<Diagnostic> warnings_;
  std::string_view text_;    // the job file's text (decoded), while Run() reads it
  uint64_t text_bytes_ = 0;  // text after expanding aliases and variables, so far
};

}  // namespace

Result<JobSpec> ParseJobText(std::string_view text, const std::string& source,
                             const std::string& base_dir, const ParseOptions& options) {
  return Parser(source, base_dir, options).Run(text);
}

Result<JobSpec> LoadJobFile(const std::string& path, const ParseOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound(path + ": no such job file");
  if (fs::is_directory(path, ec)) return InvalidArgument(path + ": is a directory, not a job file");
  // Read at most one byte past the limit: the path may be a pipe or a device (/dev/zero), whose
  // size nobody knows in advance.
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open the job file: " + std::strerror(errno));
  std::string text;
  const uint64_t want = options.max_file_bytes + 1;
  char buffer[1 << 16];
  while (text.size() < want && in) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(buffer), want - text.size()));
    in.read(buffer, static_cast<std::streamsize>(n));
    text.append(buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return IoError(path + ": cannot read the job file");
  fs::path dir = fs::path(path).parent_path();
  fs::path absolute = fs::absolute(dir.empty() ? fs::path(".") : dir, ec);
  std::string base_dir = ec ? dir.string() : absolute.lexically_normal().string();
  if (base_dir.size() > 1 && base_dir.back() == '/') base_dir.pop_back();
  if (text.size() > options.max_file_bytes) {
    const uint64_t size = fs::is_regular_file(path, ec) ? fs::file_size(path, ec) : 0;
    const std::string said = !ec && size > options.max_file_bytes
                                 ? std::to_string(size) + " bytes"
                                 : "more than " + std::to_string(options.max_file_bytes) + " bytes";
    return Parser(path, base_dir, options).TooBig(text, said);
  }
  return ParseJobText(text, path, base_dir, options);
}

std::vector<llm::FitStep> FitStepsOf(const ContextSpec& context) {
  using llm::FitStep;
  if (!context.fit_steps.empty()) return context.fit_steps;
  switch (context.fit_strategy) {
    case FitStrategy::kThinFrames:
      return {FitStep::kDedupe, FitStep::kThinFrames, FitStep::kShortenText, FitStep::kSplit};
    case FitStrategy::kLowerResolution:
      return {FitStep::kDedupe, FitStep::kLowerResolution, FitStep::kThinFrames,
              FitStep::kShortenText, FitStep::kSplit};
    case FitStrategy::kSplit:
      return {FitStep::kDedupe, FitStep::kSplit};
    case FitStrategy::kFail:
      return {};
  }
  return {};
}

std::string ResolveJobPath(const std::string& base_dir, const std::string& path) {
  fs::path p(path);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (fs::path(base_dir) / p).lexically_normal().string();
}

}  // namespace reel::jobs
