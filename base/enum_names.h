// EnumNames<E>: the one table between an enum's values and the names it has in job files, the
// database and output. Parse reads a name, Name writes one, Names lists them (for error messages).
// Tables are built once (function-local statics) and only read after: thread-safe to read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reel {

template <typename E>
struct EnumNames {
  std::vector<std::pair<std::string, E>> entries;

  // The value named `name` (exactly), or nullopt.
  std::optional<E> Parse(std::string_view name) const {
    for (const auto& [n, e] : entries) {
      if (n == name) return e;
    }
    return std::nullopt;
  }
  // The name of `value`: its first entry's; the first entry's name if it has none.
  const std::string& Name(E value) const {
    for (const auto& [n, e] : entries) {
      if (e == value) return n;
    }
    return entries.front().first;
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : entries) names.push_back(entry.first);
    return names;
  }
};

}  // namespace reel
