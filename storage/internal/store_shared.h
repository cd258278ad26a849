// What the Store's files (store*.cc, one per table group) and ReportReader share: reading a
// stored enum name, an item's segments, and the writes that run inside a caller's transaction.
//
// Private to storage/. The writes expect an open write transaction on `db` (Transaction::Begin).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"
#include "base/status.h"
#include "storage/records.h"

namespace reel::storage::internal {

// A name the database holds; an unknown one reads as the first (the default).
template <typename E>
E ParseStored(const EnumNames<E>& names, const std::string& s) {
  return names.Parse(s).value_or(names.entries.front().second);
}

// The segments of item `item_id` in time order (Store::ListSegments, the report's item page).
// `speech_columns`: read confidence and words_json (schema 11; false for an older file).
Result<std::vector<SegmentRecord>> ReadSegments(sqlite3* db, int64_t item_id,
                                                bool speech_columns = true);

// The transcript of item `item_id`, if any (schema 11).
Result<std::optional<TranscriptRecord>> ReadTranscript(sqlite3* db, int64_t item_id);

// Fails with kNotFound ("<what> <id>") unless the last UPDATE changed a row.
Status ExpectChanged(sqlite3* db, const char* what, int64_t id);

// Stores `bytes` as a blob (once per content) and returns its SHA-256 hex.
Result<std::string> PutBlobInTransaction(sqlite3* db, std::string_view bytes);

// Inserts (or replaces) one feature of frame `frame_id`; its bytes go to blobs. Returns its id.
Result<int64_t> WriteFeature(sqlite3* db, int64_t frame_id, const FeatureRecord& feature);

}  // namespace reel::storage::internal
