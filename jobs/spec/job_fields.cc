// Parser's field readers (job_parser.h): one field of a map as text, number, size, duration,
// list or name, with its range checks and the messages that name the field.
#include <yaml-cpp/yaml.h>

#include "jobs/spec/job_parser.h"

namespace reel::jobs::parser {

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

YAML::Mark Parser::MarkOf(const Field& f) const {
  YAML::Mark mark = f.value.Mark();
  return mark.is_null() ? f.key_node.Mark() : mark;
}

std::optional<Fields> Parser::ReadMap(const YAML::Node& node, const YAML::Mark& fallback,
                                      const std::string& path,
                                      const std::vector<std::string>& known) {
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

YAML::Mark Parser::MarkOr(const YAML::Node& node, const YAML::Node& other) {
  return node.Mark().is_null() ? other.Mark() : node.Mark();
}

std::string Parser::Position(const YAML::Mark& mark) {
  return std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

void Parser::ReportUnknownKey(const YAML::Node& key, const std::string& name,
                              const std::string& path, const std::vector<std::string>& known) {
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

std::optional<std::string> Parser::Text(const Field& f, const std::string& path) {
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

std::optional<Parser::FieldText> Parser::ReadText(const Fields& fields, const std::string& key,
                                                  const std::string& path) {
  const Field* f = fields.Find(key);
  if (f == nullptr || f->value.IsNull()) return std::nullopt;
  std::string full = Child(path, key);
  std::optional<std::string> text = Text(*f, full);
  if (!text) return std::nullopt;
  return FieldText{f, std::move(full), std::move(*text)};
}

bool Parser::ReadString(const Fields& fields, const std::string& key, const std::string& path,
                        std::string* out) {
  std::optional<FieldText> f = ReadText(fields, key, path);
  if (!f) return false;
  *out = std::move(f->text);
  return true;
}

bool Parser::ReadNumber(const Fields& fields, const std::string& key, const std::string& path,
                        double* out, double min, bool min_exclusive, double max) {
  auto v = ReadParsed<double>(fields, key, path, ParseNumber, "a number");
  return v &&
         CheckRange(*v->first.field, v->first.path, v->second, min, min_exclusive, max,
                    v->first.text) &&
         (*out = v->second, true);
}

bool Parser::ReadSeconds(const Fields& fields, const std::string& key, const std::string& path,
                         double* out, double min, bool min_exclusive, double max) {
  auto v = ReadParsed<double>(fields, key, path, ParseSeconds,
                              "a time in seconds (e.g. 90, 1.5, \"500ms\", \"5m\", \"1:30\")");
  return v &&
         CheckRange(*v->first.field, v->first.path, v->second, min, min_exclusive, max,
                    v->first.text) &&
         (*out = v->second, true);
}

bool Parser::ReadInteger(const Fields& fields, const std::string& key, const std::string& path,
                         int64_t* out, int64_t min, int64_t max) {
  auto v = ReadParsed<int64_t>(fields, key, path, ParseInteger, "a whole number");
  return v && CheckIntRange(*v->first.field, v->first.path, v->second, min, max) &&
         (*out = v->second, true);
}

bool Parser::ReadInt(const Fields& fields, const std::string& key, const std::string& path,
                     int* out, int64_t min, int64_t max) {
  int64_t value = 0;
  if (!ReadInteger(fields, key, path, &value, min, max)) return false;
  *out = static_cast<int>(value);
  return true;
}

bool Parser::ReadBytes(const Fields& fields, const std::string& key, const std::string& path,
                       int64_t* out, int64_t min) {
  auto v = ReadParsed<int64_t>(fields, key, path, ParseByteSize,
                               "a size in bytes (e.g. 1048576, \"500MB\", \"2GiB\")");
  return v && CheckIntRange(*v->first.field, v->first.path, v->second, min, INT64_MAX) &&
         (*out = v->second, true);
}

bool Parser::ReadBool(const Fields& fields, const std::string& key, const std::string& path,
                      bool* out) {
  auto v = ReadParsed<bool>(fields, key, path, ParseBool, "true or false");
  return v && (*out = v->second, true);
}

bool Parser::CheckRange(const Field& f, const std::string& path, double value, double min,
                        bool min_exclusive, double max, const std::string& text) {
  if (min_exclusive ? value <= min : value < min) {
    Error(MarkOf(f), Quoted(path) + " must be " + (min_exclusive ? "greater than " : "at least ") +
                         FormatNumber(min) + ", got " + text);
    return false;
  }
  if (value > max) {
    Error(MarkOf(f), Quoted(path) + " must be at most " + FormatNumber(max) + ", got " + text);
    return false;
  }
  return true;
}

bool Parser::CheckIntRange(const Field& f, const std::string& path, int64_t value, int64_t min,
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

std::optional<YAML::Node> Parser::ReadList(const Fields& fields, const std::string& key,
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

}  // namespace reel::jobs::parser
