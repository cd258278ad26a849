#include "storage/busy_retry.h"

#include <chrono>
#include <thread>

namespace reel::storage {

bool IsBusy(const Status& status) { return status.code() == ErrorCode::kUnavailable; }

void PauseBeforeBusyRetry(int attempt) {
  std::this_thread::sleep_for(std::chrono::milliseconds(100 * (attempt + 1)));
}

}  // namespace reel::storage
