// JSON text out of Reel (command output, report files, log lines, items.media_json).
//
// nlohmann::json stores whatever bytes a string holds and throws when dump() meets one that is
// not UTF-8; an uncaught throw aborts the process. DumpJson never throws: a value whose strings
// (or keys) are not all valid UTF-8 is written with those strings passed through SafeUtf8
// (base/utf8.h: the bad bytes as `\xHH`), the same rule the database applies. Paths should
// still go in as DisplayPath(path), which is reversible; this is the safety net.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace reel::jobs {

// `value` as JSON text; `indent` < 0: one line, else pretty-printed with that many spaces.
std::string DumpJson(const nlohmann::json& value, int indent = -1);

}  // namespace reel::jobs
