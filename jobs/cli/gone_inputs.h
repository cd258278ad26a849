// The mark people see on an item whose input file is gone (storage/prune.h; `reel prune` drops
// such items). Tables for machines (csv, json, jsonl) keep the stored path unmarked.
#pragma once

#include "storage/query.h"

namespace reel::cli {

inline constexpr const char* kGoneInputMark = "[deleted] ";

// Prefixes kGoneInputMark to the `path` cell of each row whose input file is gone (before the
// path, so a cut cell still shows it). Tables without a `path` column are left as they are.
void MarkGoneInputs(storage::Table& table);

}  // namespace reel::cli
