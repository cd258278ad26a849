#include "llm/client/json_schema.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "llm/client/json_depth.h"

namespace reel::llm {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = kMaxJsonDepth;

int NestingDepth(std::string_view text) { return JsonNestingDepth(text); }

const char* TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    default:
      return "unknown";
  }
}

bool HasType(const json& v, const std::string& type) {
  if (type == "null") return v.is_null();
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer") {
    if (v.is_number_integer()) return true;
    if (v.is_number_float()) {
      const double d = v.get<double>();
      return std::isfinite(d) && d == std::floor(d);
    }
    return false;
  }
  return false;
}

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Child(const std::string& path, const std::string& key) {
  bool plain = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0]));
  for (unsigned char c : key) plain = plain && (std::isalnum(c) || c == '_');
  if (plain) return path + "." + key;
  return path + "[" + json(key).dump() + "]";
}

std::string Child(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string Short(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

const std::set<std::string>& UncheckedKeywords() {
  static const auto* const kSet = new std::set<std::string>{"pattern",
                                                            "patternProperties",
                                                            "dependentRequired",
                                                            "dependentSchemas",
                                                            "dependencies",
                                                            "if",
                                                            "then",
                                                            "else",
                                                            "contains",
                                                            "propertyNames",
                                                            "unevaluatedItems",
                                                            "unevaluatedProperties",
                                                            "$dynamicRef",
                                                            "additionalItems",
                                                            "minContains",
                                                            "maxContains"};
  return *kSet;
}

}  // namespace

struct JsonSchema::Impl {
  json root;
  std::string compact;
  std::vector<std::string> unchecked;
  std::map<std::string, const json*> refs;  // "$ref" text -> the schema it names

  // Walks the schema: resolves every $ref, lists unchecked keywords.
  Status Scan(const json& s, int depth) {
    if (depth > kMaxDepth) return InvalidArgument("schema nested too deeply");
    if (s.is_array()) {
      for (const auto& e : s) REEL_RETURN_IF_ERROR(Scan(e, depth + 1));
      return Status::Ok();
    }
    if (!s.is_object()) return Status::Ok();
    for (auto it = s.begin(); it != s.end(); ++it) {
      const std::string& key = it.key();
      if (key == "$ref") {
        if (!it->is_string()) return InvalidArgument("$ref must be a string");
        const std::string ref = it->get<std::string>();
        if (refs.count(ref)) continue;
        if (ref.empty() || ref[0] != '#') {
          return InvalidArgument("$ref '" + ref + "' is not a local reference (only '#...')");
        }
        const json* target = nullptr;
        try {
          const json::json_pointer ptr(ref.substr(1));
          if (root.contains(ptr)) target = &root.at(ptr);
        } catch (const json::exception&) {
          target = nullptr;
        }
        if (target == nullptr) return InvalidArgument("$ref '" + ref + "' does not resolve");
        refs[ref] = target;
        continue;
      }
      if (key == "enum" || key == "const" || key == "default" || key == "examples") continue;
      if (UncheckedKeywords().count(key)) {
        if (std::find(unchecked.begin(), unchecked.end(), key) == unchecked.end()) {
          unchecked.push_back(key);
        }
      }
      if (key == "properties" || key == "$defs" || key == "definitions" ||
          key == "patternProperties" || key == "dependentSchemas") {
        if (it->is_object()) {
          for (const auto& sub : *it) REEL_RETURN_IF_ERROR(Scan(sub, depth + 1));
        }
        continue;
      }
      REEL_RETURN_IF_ERROR(Scan(*it, depth + 1));
    }
    return Status::Ok();
  }

  Status Check(const json& s, const json& v, const std::string& path, int depth) const {
    if (depth > kMaxDepth) return InvalidArgument(path + ": schema recursion too deep");
    if (s.is_boolean()) {
      if (s.get<bool>()) return Status::Ok();
      return InvalidArgument(path + ": no value is allowed here");
    }
    if (!s.is_object()) return Status::Ok();

    if (auto it = s.find("$ref"); it != s.end() && it->is_string()) {
      auto r = refs.find(it->get<std::string>());
      if (r != refs.end()) REEL_RETURN_IF_ERROR(Check(*r->second, v, path, depth + 1));
    }
    if (auto it = s.find("type"); it != s.end()) {
      bool match = false;
      std::string wanted;
      if (it->is_string()) {
        wanted = it->get<std::string>();
        match = HasType(v, wanted);
      } else if (it->is_array()) {
        for (const auto& t : *it) {
          if (!t.is_string()) continue;
          wanted += (wanted.empty() ? "" : " or ") + t.get<std::string>();
          match = match || HasType(v, t.get<std::string>());
        }
      } else {
        match = true;
      }
      if (!match) {
        return InvalidArgument(path + ": expected " + wanted + ", got " + TypeName(v));
      }
    }
    if (auto it = s.find("enum"); it != s.end() && it->is_array()) {
      bool found = false;
      for (const auto& e : *it) found = found || e == v;
      if (!found) return InvalidArgument(path + ": " + Short(v) + " is not one of " + Short(*it));
    }
    if (auto it = s.find("const"); it != s.end() && *it != v) {
      return InvalidArgument(path + ": expected " + Short(*it) + ", got " + Short(v));
    }

    if (v.is_object()) REEL_RETURN_IF_ERROR(CheckObject(s, v, path, depth));
    if (v.is_array()) REEL_RETURN_IF_ERROR(CheckArray(s, v, path, depth));
    if (v.is_string()) {
      const size_t n = CodePoints(v.get_ref<const std::string&>());
      if (auto m = s.find("minLength"); m != s.end() && m->is_number() && n < m->get<double>()) {
        return InvalidArgument(path + ": shorter than " + m->dump() + " characters");
      }
      if (auto m = s.find("maxLength"); m != s.end() && m->is_number() && n > m->get<double>()) {
        return InvalidArgument(path + ": longer than " + m->dump() + " characters");
      }
    }
    if (v.is_number()) REEL_RETURN_IF_ERROR(CheckNumber(s, v, path));

    if (auto it = s.find("allOf"); it != s.end() && it->is_array()) {
      for (const auto& sub : *it) REEL_RETURN_IF_ERROR(Check(sub, v, path, depth + 1));
    }
    if (auto it = s.find("anyOf"); it != s.end() && it->is_array()) {
      Status first;
      bool any = false;
      for (const auto& sub : *it) {
        Status st = Check(sub, v, path, depth + 1);
        if (st.ok()) {
          any = true;
          break;
        }
        if (first.ok()) first = st;
      }
      if (!any && !it->empty()) {
        return InvalidArgument(path + ": matches none of anyOf (first: " + first.message() + ")");
      }
    }
    if (auto it = s.find("oneOf"); it != s.end() && it->is_array()) {
      int matches = 0;
      for (const auto& sub : *it) matches += Check(sub, v, path, depth + 1).ok();
      if (matches != 1) {
        return InvalidArgument(path + ": matches " + std::to_string(matches) +
                               " of the oneOf schemas (exactly one required)");
      }
    }
    if (auto it = s.find("not"); it != s.end()) {
      if (Check(*it, v, path, depth + 1).ok()) {
        return InvalidArgument(path + ": matches a schema it must not match");
      }
    }
    return Status::Ok();
  }

  Status CheckObject(const json& s, const json& v, const std::string& path, int depth) const {
    const json* props = nullptr;
    if (auto it = s.find("properties"); it != s.end() && it->is_object()) props = &*it;
    if (auto it = s.find("required"); it != s.end() && it->is_array()) {
      for (const auto& name : *it) {
        if (name.is_string() && !v.contains(name.get<std::string>())) {
          return InvalidArgument(path + ": missing required property '" + name.get<std::string>() +
                                 "'");
        }
      }
    }
    const bool has_pattern_props = s.contains("patternProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string child = Child(path, it.key());
      if (props != nullptr && props->contains(it.key())) {
        REEL_RETURN_IF_ERROR(Check((*props)[it.key()], *it, child, depth + 1));
        continue;
      }
      if (has_pattern_props) continue;  // not checked: it might match a pattern
      if (auto ap = s.find("additionalProperties"); ap != s.end()) {
        if (ap->is_boolean() && !ap->get<bool>()) {
          return InvalidArgument(path + ": property '" + it.key() + "' is not allowed");
        }
        REEL_RETURN_IF_ERROR(Check(*ap, *it, child, depth + 1));
      }
    }
    const double n = static_cast<double>(v.size());
    if (auto m = s.find("minProperties"); m != s.end() && m->is_number() && n < m->get<double>()) {
      return InvalidArgument(path + ": fewer than " + m->dump() + " properties");
    }
    if (auto m = s.find("maxProperties"); m != s.end() && m->is_number() && n > m->get<double>()) {
      return InvalidArgument(path + ": more than " + m->dump() + " properties");
    }
    return Status::Ok();
  }

  Status CheckArray(const json& s, const json& v, const std::string& path, int depth) const {
    size_t first_free = 0;  // elements before this were checked by a tuple form
    if (auto it = s.find("prefixItems"); it != s.end() && it->is_array()) {
      for (size_t i = 0; i < it->size() && i < v.size(); ++i) {
        REEL_RETURN_IF_ERROR(Check((*it)[i], v[i], Child(path, i), depth + 1));
      }
      first_free = it->size();
    }
    if (auto it = s.find("items"); it != s.end()) {
      if (it->is_array()) {  // draft 7 tuple form
        for (size_t i = 0; i < it->size() && i < v.size(); ++i) {
          REEL_RETURN_IF_ERROR(Check((*it)[i], v[i], Child(path, i), depth + 1));
        }
      } else {
        for (size_t i = first_free; i < v.size(); ++i) {
          REEL_RETURN_IF_ERROR(Check(*it, v[i], Child(path, i), depth + 1));
        }
      }
    }
    const double n = static_cast<double>(v.size());
    if (auto m = s.find("minItems"); m != s.end() && m->is_number() && n < m->get<double>()) {
      return InvalidArgument(path + ": fewer than " + m->dump() + " items");
    }
    if (auto m = s.find("maxItems"); m != s.end() && m->is_number() && n > m->get<double>()) {
      return InvalidArgument(path + ": more than " + m->dump() + " items");
    }
    if (auto u = s.find("uniqueItems"); u != s.end() && u->is_boolean() && u->get<bool>()) {
      for (size_t i = 0; i < v.size(); ++i) {
        for (size_t j = i + 1; j < v.size(); ++j) {
          if (v[i] == v[j]) {
            return InvalidArgument(path + ": items " + std::to_string(i) + " and " +
                                   std::to_string(j) + " are equal");
          }
        }
      }
    }
    return Status::Ok();
  }

  Status CheckNumber(const json& s, const json& v, const std::string& path) const {
    const double x = v.get<double>();
    auto num = [&](const char* key) -> const json* {
      auto it = s.find(key);
      return it != s.end() && it->is_number() ? &*it : nullptr;
    };
    bool exclusive_min_flag = false, exclusive_max_flag = false;  // draft 4 booleans
    if (auto it = s.find("exclusiveMinimum"); it != s.end() && it->is_boolean()) {
      exclusive_min_flag = it->get<bool>();
    }
    if (auto it = s.find("exclusiveMaximum"); it != s.end() && it->is_boolean()) {
      exclusive_max_flag = it->get<bool>();
    }
    if (const json* m = num("minimum")) {
      const double lo = m->get<double>();
      if (x < lo || (exclusive_min_flag && x == lo)) {
        return InvalidArgument(path + ": " + v.dump() + " is below the minimum " + m->dump());
      }
    }
    if (const json* m = num("maximum")) {
      const double hi = m->get<double>();
      if (x > hi || (exclusive_max_flag && x == hi)) {
        return InvalidArgument(path + ": " + v.dump() + " is above the maximum " + m->dump());
      }
    }
    if (const json* m = num("exclusiveMinimum"); m != nullptr && x <= m->get<double>()) {
      return InvalidArgument(path + ": " + v.dump() + " is not above " + m->dump());
    }
    if (const json* m = num("exclusiveMaximum"); m != nullptr && x >= m->get<double>()) {
      return InvalidArgument(path + ": " + v.dump() + " is not below " + m->dump());
    }
    if (const json* m = num("multipleOf"); m != nullptr && m->get<double>() > 0) {
      const double q = x / m->get<double>();
      if (std::fabs(q - std::round(q)) > 1e-9 * std::max(1.0, std::fabs(q))) {
        return InvalidArgument(path + ": " + v.dump() + " is not a multiple of " + m->dump());
      }
    }
    return Status::Ok();
  }
};

JsonSchema::JsonSchema(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JsonSchema::JsonSchema(JsonSchema&&) noexcept = default;
JsonSchema& JsonSchema::operator=(JsonSchema&&) noexcept = default;
JsonSchema::~JsonSchema() = default;

Result<JsonSchema> JsonSchema::Parse(std::string_view schema_text) {
  if (NestingDepth(schema_text) > kMaxDepth) {
    return InvalidArgument("JSON schema nested deeper than " + std::to_string(kMaxDepth) +
                           " levels");
  }
  auto impl = std::make_unique<Impl>();
  impl->root = json::parse(schema_text, nullptr, /*allow_exceptions=*/false);
  if (impl->root.is_discarded()) return InvalidArgument("the JSON schema is not valid JSON");
  if (!impl->root.is_object() && !impl->root.is_boolean()) {
    return InvalidArgument("a JSON schema must be an object");
  }
  REEL_RETURN_IF_ERROR(impl->Scan(impl->root, 0).WithPrefix("JSON schema"));
  std::sort(impl->unchecked.begin(), impl->unchecked.end());
  impl->compact = impl->root.dump();
  return JsonSchema(std::move(impl));
}

Status JsonSchema::Validate(std::string_view instance_text) const {
  if (NestingDepth(instance_text) > kMaxDepth) {
    return InvalidArgument("the answer is nested deeper than " + std::to_string(kMaxDepth) +
                           " levels");
  }
  const json v = json::parse(instance_text, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return InvalidArgument("the answer is not valid JSON");
  return impl_->Check(impl_->root, v, "$", 0);
}

const std::string& JsonSchema::compact_text() const { return impl_->compact; }

const std::vector<std::string>& JsonSchema::unchecked_keywords() const { return impl_->unchecked; }

Result<std::string> ExtractJsonAnswer(std::string_view content) {
  auto parse = [](std::string_view text) -> std::optional<std::string> {
    if (NestingDepth(text) > kMaxDepth) return std::nullopt;
    const json v = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (v.is_discarded()) return std::nullopt;
    return v.dump();
  };
  if (auto whole = parse(content)) return *whole;
  // ```json ... ``` (or a bare ``` fence) around the document.
  const size_t open = content.find("```");
  if (open != std::string_view::npos) {
    size_t start = content.find('\n', open);
    const size_t close = content.find("```", open + 3);
    if (start != std::string_view::npos && close != std::string_view::npos && start < close) {
      if (auto inner = parse(content.substr(start + 1, close - start - 1))) return *inner;
    }
  }
  return InvalidArgument("the answer is not valid JSON");
}

}  // namespace reel::llm
