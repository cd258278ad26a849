// Small helpers for the static report pages: escaping, number and time formats, file names.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reel::jobs::report {

// Text for HTML element content and attribute values: & < > " ' escaped. Invalid UTF-8 bytes
// become U+FFFD, so a page is always valid UTF-8.
std::string Html(std::string_view text);

// 1234567 -> "1,234,567".
std::string Count(int64_t n);

// A decimal with `digits` digits after the point ("12.50"), or "-" for nullopt.
std::string Fixed(std::optional<double> value, int digits);

// Seconds as a media time with tenths: "01:15.4", "1:02:03.0".
std::string MediaTime(double seconds);

// A duration for people: "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min".
std::string Duration(double seconds);

// Where a thumbnail blob is written, relative to the report's folder:
// "thumbs/ab/abcdef....jpg" (two-character fan-out keeps folders small). The hash must be hex.
std::string ThumbnailPath(const std::string& hash);

// The page of an item, relative to the report's folder: "items/42.html".
std::string ItemPagePath(int64_t item_id);

// The index page `page` (1-based): "index.html", "index-2.html", ...
std::string IndexPagePath(int64_t page);

}  // namespace reel::jobs::report
