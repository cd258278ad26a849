#include "base/clock.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace reel {
namespace {

// "YYYY-MM-DDTHH:MM:SS" of `seconds` since the epoch, UTC.
std::string IsoSeconds(std::time_t seconds) {
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[40];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &tm);
  return buffer;
}

}  // namespace

std::string NowIso() { return IsoSeconds(std::time(nullptr)) + "Z"; }

std::string NowIsoMillis() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  char millis[8];
  std::snprintf(millis, sizeof(millis), ".%03dZ", static_cast<int>(ms % 1000));
  return IsoSeconds(static_cast<std::time_t>(ms / 1000)) + millis;
}

std::string MediaClock(double seconds) {
  const int ms = static_cast<int>(seconds * 1000 + 0.5);
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%d:%02d:%02d.%03d", ms / 3600000, ms / 60000 % 60,
                ms / 1000 % 60, ms % 1000);
  return buffer;
}

}  // namespace reel
