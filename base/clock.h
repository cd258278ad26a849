// Times as text: the wall clock in ISO 8601 (UTC) for records and lock files, and a media time
// (seconds into a video) for people to read. Thread-safe (gmtime_r).
#pragma once

#include <string>

namespace reel {

// The current UTC time to the second: "2026-11-26T23:05:01Z".
std::string NowIso();

// The current UTC time to the millisecond: "2026-11-26T23:05:01.123Z".
std::string NowIsoMillis();

// Seconds into a media file as H:MM:SS.mmm ("0:01:15.000"), rounded to the millisecond.
std::string MediaClock(double seconds);

}  // namespace reel
