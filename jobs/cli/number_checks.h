// Range checks for numeric options with messages a person can read ("--fps: must be greater than
// 0, got 0"). CLI11's own PositiveNumber and NonNegativeNumber print the largest double in full
// (309 digits) as the upper bound.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "jobs/cli/commands.h"

namespace reel::cli {

namespace number_checks_detail {

inline std::string Text(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.15g", v);
  return buffer;
}

// A validator for the numbers `accept` takes; text that is not a number passes through, for
// CLI11's conversion to reject with its own message.
template <typename Accept>
CLI::Validator Check(const std::string& description, Accept accept) {
  return CLI::Validator(
      [description, accept](std::string& input) -> std::string {
        char* end = nullptr;
        double v = std::strtod(input.c_str(), &end);
        if (end == input.c_str() || *end != '\0') return "";
        if (std::isfinite(v) && accept(v)) return "";
        return "must be " + description + ", got " + input;
      },
      "", "");
}

}  // namespace number_checks_detail

// v > low.
inline CLI::Validator GreaterThan(double low) {
  return number_checks_detail::Check("greater than " + number_checks_detail::Text(low),
                                     [low](double v) { return v > low; });
}

// v >= low.
inline CLI::Validator AtLeast(double low) {
  return number_checks_detail::Check("at least " + number_checks_detail::Text(low),
                                     [low](double v) { return v >= low; });
}

// low <= v <= high.
inline CLI::Validator Between(double low, double high) {
  return number_checks_detail::Check(
      "between " + number_checks_detail::Text(low) + " and " + number_checks_detail::Text(high),
      [low, high](double v) { return v >= low && v <= high; });
}

}  // namespace reel::cli
