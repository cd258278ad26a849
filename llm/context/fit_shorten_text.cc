// The shorten_text fit step (fit_steps.h).
#include <algorithm>

#include "llm/context/fit_steps.h"

namespace reel::llm::fit {

std::optional<std::string> ShortenText(const Fits& fits, Plan& plan) {
  if (plan.documents.empty()) return std::nullopt;
  // Shorten the longest document first, from its end, as little as needed.
  size_t shortened = 0;
  while (!fits(plan)) {
    size_t longest = 0;
    for (size_t d = 1; d < plan.documents.size(); ++d) {
      if (plan.documents[d].size() > plan.documents[longest].size()) longest = d;
    }
    std::string original = plan.documents[longest];
    if (original.empty()) break;
    auto make = [&](size_t n) {
      while (n > 0 && n < original.size() &&
             (static_cast<unsigned char>(original[n]) & 0xC0) == 0x80) {
        --n;
      }
      return n < original.size() ? original.substr(0, n) + " [...]" : original;
    };
    size_t lo = 0, hi = original.size();
    while (lo < hi) {
      size_t mid = lo + (hi - lo + 1) / 2;
      plan.documents[longest] = make(mid);
      if (fits(plan)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    plan.documents[longest] = lo == 0 ? std::string() : make(lo);
    shortened += original.size() - std::min(original.size(), plan.documents[longest].size());
  }
  if (shortened == 0) return std::nullopt;
  return "documents shortened by " + std::to_string(shortened) + " bytes";
}

}  // namespace reel::llm::fit
