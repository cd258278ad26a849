// How deeply JSON text nests, found without parsing it. nlohmann::json parses iteratively but
// dumps recursively, so text from outside Reel that is nested deeper than kMaxJsonDepth is
// refused before it is built (a guard against stack exhaustion, found by fuzzing).
#pragma once

#include <string_view>

namespace reel::llm {

inline constexpr int kMaxJsonDepth = 256;

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count).
int JsonNestingDepth(std::string_view text);

}  // namespace reel::llm
