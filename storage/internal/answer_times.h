// Storing and reading the time references of answers (tables answer_times, answer_time_scans and
// the view answer_time_frames; schema version 3). Private to storage/: Store calls these.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/records.h"

namespace reel::storage::internal {

// Finds the references in `content` and replaces those stored for `response_id`, recording the
// grammar version it was scanned with. Runs in the caller's transaction.
Status IndexResponseTimes(sqlite3* db, int64_t response_id, std::string_view content);

// Scans the responses that have no scan at the current grammar version, `batch_size` per
// transaction; returns how many. An answer that failed its check (responses.check_error) is kept
// to be read but is not an answer: its times are never indexed, so they link to no frame.
Result<int64_t> IndexStaleResponseTimes(sqlite3* db, int batch_size);

// A response's references with their nearest frames, in text order; empty on a file older than
// schema version 3.
Result<std::vector<AnswerTimeRecord>> ListResponseTimes(sqlite3* db, int64_t response_id);

}  // namespace reel::storage::internal
