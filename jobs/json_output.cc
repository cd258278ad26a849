#include "jobs/json_output.h"

#include <nlohmann/json.hpp>

#include "base/utf8.h"

namespace reel::jobs {
namespace {

// A copy of `value` with every string and key made valid UTF-8.
nlohmann::json Repaired(const nlohmann::json& value) {
  if (value.is_string()) return SafeUtf8(value.get_ref<const std::string&>());
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const nlohmann::json& element : value) out.push_back(Repaired(element));
    return out;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      out[SafeUtf8(it.key())] = Repaired(it.value());
    }
    return out;
  }
  return value;
}

}  // namespace

std::string DumpJson(const nlohmann::json& value, int indent) {
  try {
    return value.dump(indent);
  } catch (const nlohmann::json::type_error&) {
    // Only invalid UTF-8 makes dump() throw. The handler is a guard against a key collision
    // the repair could make (two keys that escape alike): it never throws.
    return Repaired(value).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace reel::jobs
