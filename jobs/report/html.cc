#include "jobs/report/html.h"

#include <cmath>
#include <cstdio>

namespace reel::jobs::report {

std::string Html(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = text[i];
    if (c < 0x80) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&#39;";
          break;
        case '\0':
          out += "\xEF\xBF\xBD";
          break;
        default:
          out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence is copied; anything else becomes U+FFFD.
    int length = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = length > 0 && i + length <= text.size();
    uint32_t cp = ok ? (c & (0x7F >> length)) : 0;
    for (int k = 1; ok && k < length; ++k) {
      unsigned char cc = text[i + k];
      if ((cc & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (ok && (cp < kMin[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (ok) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::string Count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Fixed(std::optional<double> value, int digits) {
  if (!value || !std::isfinite(*value)) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, *value);
  return buffer;
}

std::string MediaTime(double seconds) {
  if (!(seconds > 0)) seconds = 0;
  int64_t tenths = static_cast<int64_t>(std::llround(seconds * 10));
  int64_t s = tenths / 10;
  char buffer[64];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof(buffer), "%lld:%02lld:%02lld.%lld",
                  static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60),
                  static_cast<long long>(s % 60), static_cast<long long>(tenths % 10));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%02lld:%02lld.%lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60), static_cast<long long>(tenths % 10));
  }
  return buffer;
}

std::string Duration(double seconds) {
  char buffer[64];
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  if (seconds < 1) {
    std::snprintf(buffer, sizeof(buffer), "%.0f ms", seconds * 1000);
  } else if (seconds < 60) {
    std::snprintf(buffer, sizeof(buffer), "%.1f s", seconds);
  } else if (seconds < 3600) {
    int64_t s = std::llround(seconds);
    std::snprintf(buffer, sizeof(buffer), "%lld min %02lld s", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    int64_t m = std::llround(seconds / 60);
    std::snprintf(buffer, sizeof(buffer), "%lld h %02lld min", static_cast<long long>(m / 60),
                  static_cast<long long>(m % 60));
  }
  return buffer;
}

std::string ThumbnailPath(const std::string& hash) {
  return "thumbs/" + hash.substr(0, 2) + "/" + hash + ".jpg";
}

std::string ItemPagePath(int64_t item_id) { return "items/" + std::to_string(item_id) + ".html"; }

std::string IndexPagePath(int64_t page) {
  return page <= 1 ? "index.html" : "index-" + std::to_string(page) + ".html";
}

}  // namespace reel::jobs::report
