// Parser: the job-file reader behind ParseJobText and LoadJobFile (job_spec.h), private to
// jobs/spec/. One Parser reads one file and is then dropped; not thread-safe. Every problem
// becomes a Diagnostic, so one pass reports all of them. With its .cc files, the only code that
// includes yaml-cpp. Details: jobs/spec/README.md, "Job parser".
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "base/text_encoding.h"
#include "base/utf8.h"
#include "jobs/spec/job_spec.h"
#include "jobs/spec/job_values.h"

namespace reel::jobs::parser {

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

// How a node reads in a message: "a map", "a list", "nothing", or the scalar quoted (cut at 40).
std::string Describe(const YAML::Node& node);
std::string Quoted(const std::string& s);
// "1048576 bytes (1 MiB)", or "100000 bytes" when no unit says it more simply.
std::string Bytes(uint64_t bytes);
// The path of a map's key, and of a list's element, as messages name them ("model.price").
std::string Child(const std::string& path, const std::string& key);
std::string Element(const std::string& path, size_t index);
bool ValidPromptId(const std::string& id);
bool ValidEnvName(const std::string& name);

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
  Result<JobSpec> TooBig(std::string_view prefix, const std::string& size);

  Result<JobSpec> Run(std::string_view text);

 private:
  void Error(const YAML::Mark& mark, std::string message);
  void Warn(const YAML::Mark& mark, std::string message);

  std::string Format(const Diagnostic& d) const;

  Result<JobSpec> Finish();

  // The offset of the first character that is not blank, a comment, a document marker ('---',
  // '...') or a directive ('%'): nullopt if there is none.
  static std::optional<size_t> FirstContent(std::string_view text);

  // The job file is bigger than max_file_bytes: say so where the limit falls, with the size
  // (`size`: "N bytes", or "more than N bytes" when unknown) and the limit.
  void ReportTooBig(std::string_view text, const std::string& size);

  // yaml-cpp's syntax errors, with what its messages leave out: where an unclosed bracket
  // opened (yaml-cpp stops at the next token it cannot take, often the end of the file) and
  // whether a tab in the indentation is the cause.
  void ReportSyntaxError(std::string_view text, const YAML::Mark& mark, const std::string& msg);

  // What CheckShape has seen so far: values, and bytes of text, both after expanding aliases.
  struct Shape {
    int nodes = 0;
    uint64_t bytes = 0;
  };

  // Depth and size limits on the whole tree, before anything reads it. Aliases are counted at
  // every use: a small file that aliases a big value many times is as big as its expansion.
  bool CheckShape(const YAML::Node& node, int depth, Shape* shape);

  // yaml-cpp 0.7 reads a quoted scalar that is never closed (`question: "hi` at the end of the
  // file) as if it were closed there ("hi "), where YAML (and PyYAML) refuse it: a quoted scalar
  // must find its closing quote in the text after its opening one.
  bool CheckQuoteClosed(const YAML::Node& node);

  YAML::Mark MarkOf(const Field& f) const;

  // The keys of a map with merge keys applied, duplicates and unknown keys reported. A missing or
  // null section gives no fields; anything else that is not a map is an error (nullopt).
  std::optional<Fields> ReadMap(const YAML::Node& node, const YAML::Mark& fallback,
                                const std::string& path, const std::vector<std::string>& known);

  static YAML::Mark MarkOr(const YAML::Node& node, const YAML::Node& other);

  static std::string Position(const YAML::Mark& mark);

  void ReportUnknownKey(const YAML::Node& key, const std::string& name, const std::string& path,
                        const std::vector<std::string>& known);

  // The text of a scalar value with ${VAR} expanded; nullopt (reported) if not a scalar or the
  // expansion fails. Null values are the caller's business.
  std::optional<std::string> Text(const Field& f, const std::string& path);

  // A present, non-null value's field, full path and text (${VAR} expanded).
  struct FieldText {
    const Field* field;
    std::string path;
    std::string text;
  };
  std::optional<FieldText> ReadText(const Fields& fields, const std::string& key,
                                    const std::string& path);

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
                  std::string* out);

  bool ReadNumber(const Fields& fields, const std::string& key, const std::string& path,
                  double* out, double min, bool min_exclusive, double max);

  bool ReadSeconds(const Fields& fields, const std::string& key, const std::string& path,
                   double* out, double min, bool min_exclusive, double max);

  bool ReadInteger(const Fields& fields, const std::string& key, const std::string& path,
                   int64_t* out, int64_t min, int64_t max);

  bool ReadInt(const Fields& fields, const std::string& key, const std::string& path, int* out,
               int64_t min, int64_t max);

  bool ReadBytes(const Fields& fields, const std::string& key, const std::string& path,
                 int64_t* out, int64_t min);

  bool ReadBool(const Fields& fields, const std::string& key, const std::string& path, bool* out);

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
                  bool min_exclusive, double max, const std::string& text);

  bool CheckIntRange(const Field& f, const std::string& path, int64_t value, int64_t min,
                     int64_t max);

  // A required list; nullopt (reported) if missing, not a list, or too long.
  std::optional<YAML::Node> ReadList(const Fields& fields, const std::string& key,
                                     size_t max_items);

  void ReadJob(const YAML::Node& root);

  void CheckName(const Field& f);

  void ReadInputs(const Fields& fields);

  static bool ValidGlob(const std::string& pattern);

  void ReadSampling(const Fields& top, const YAML::Node& root);

  void ReadResize(const Fields& top, const YAML::Node& root);

  void ReadVision(const Fields& top, const YAML::Node& root);

  void ReadModel(const Fields& top, const YAML::Node& root);
  // speech: (job_speech.cc)
  void ReadSpeech(const Fields& top);

  // prompts[i].json_schema: a map (the schema inline), JSON text ("{...}"), or a file name.
  void ReadJsonSchema(const Fields& fields, const std::string& path, PromptSpec* prompt);

  // A YAML node as JSON: plain scalars that read as numbers, booleans or null become those;
  // quoted scalars stay strings.
  static nlohmann::ordered_json YamlToJson(const YAML::Node& node);

  void ReadContext(const Fields& top, const YAML::Node& root);

  void ReadPrompts(const Fields& top);

  void ReadStorage(const Fields& top, const YAML::Node& root);

  void ReadTextSettings(const Fields& top);

  void ReadLimits(const Fields& top, const YAML::Node& root);

  void ReadDocuments(const Fields& top);  // job_documents.cc

  std::string source_;
  std::string base_dir_;
  ParseOptions options_;
  JobSpec job_;
  std::vector<Diagnostic> errors_;
  std::vector<Diagnostic> warnings_;
  std::string_view text_;    // the job file's text (decoded), while Run() reads it
  uint64_t text_bytes_ = 0;  // text after expanding aliases and variables, so far
};

}  // namespace reel::jobs::parser
