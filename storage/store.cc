// Store: the enum names of records.h, Open, and what the Store's files share (store_shared.h).
// The operations live by table group: store_runs.cc (jobs, runs, events, the status summary),
// store_items.cc (items, frames, segments), store_features.cc (blobs, features),
// store_contexts.cc, store_requests.cc (requests, responses, answer times), store_search.cc.
#include "storage/store.h"

#include "storage/internal/sqlite.h"
#include "storage/internal/store_shared.h"

namespace reel::storage {

const EnumNames<RunStatus>& RunStatusNames() {
  using S = RunStatus;
  static const EnumNames<S> names{{{"running", S::kRunning},
                                   {"succeeded", S::kSucceeded},
                                   {"failed", S::kFailed},
                                   {"interrupted", S::kInterrupted}}};
  return names;
}

const EnumNames<ItemKind>& ItemKindNames() {
  using K = ItemKind;
  static const EnumNames<K> names{{{"video", K::kVideo},
                                   {"image", K::kImage},
                                   {"document", K::kDocument},
                                   {"subtitle", K::kSubtitle},
                                   {"audio", K::kAudio}}};
  return names;
}

const EnumNames<ItemStatus>& ItemStatusNames() {
  using S = ItemStatus;
  static const EnumNames<S> names{{{"pending", S::kPending},
                                   {"running", S::kRunning},
                                   {"done", S::kDone},
                                   {"failed", S::kFailed}}};
  return names;
}

const EnumNames<EventLevel>& EventLevelNames() {
  using L = EventLevel;
  static const EnumNames<L> names{
      {{"debug", L::kDebug}, {"info", L::kInfo}, {"warning", L::kWarning}, {"error", L::kError}}};
  return names;
}

const EnumNames<TranscriptStatus>& TranscriptStatusNames() {
  using T = TranscriptStatus;
  static const EnumNames<T> names{{{"running", T::kRunning},
                                   {"done", T::kDone},
                                   {"partial", T::kPartial},
                                   {"failed", T::kFailed}}};
  return names;
}

const char* RunStatusName(RunStatus status) { return RunStatusNames().Name(status).c_str(); }
const char* ItemKindName(ItemKind kind) { return ItemKindNames().Name(kind).c_str(); }
const char* ItemStatusName(ItemStatus status) { return ItemStatusNames().Name(status).c_str(); }
const char* EventLevelName(EventLevel level) { return EventLevelNames().Name(level).c_str(); }
const char* TranscriptStatusName(TranscriptStatus status) {
  return TranscriptStatusNames().Name(status).c_str();
}

Result<Store> Store::Open(const std::string& path, const DatabaseOptions& options) {
  REEL_ASSIGN_OR_RETURN(Database db, Database::Open(path, options));
  return Store(std::move(db));
}

namespace internal {

// Fails with kNotFound unless the last UPDATE changed a row.
Status ExpectChanged(sqlite3* db, const char* what, int64_t id) {
  if (sqlite3_changes(db) == 0) return NotFound(std::string(what) + " " + std::to_string(id));
  return Status::Ok();
}

}  // namespace internal

}  // namespace reel::storage
