#include "base/page_references.h"

#include <array>
#include <cctype>
#include <string>

namespace reel {
namespace {

bool IsPageAlnum(unsigned char c) { return std::isalnum(c) != 0; }

// The words before a page number, longest first so "pages" wins over "page" and "pp." over "p.".
struct PageWord {
  std::string_view text;
  bool plural;
};
constexpr std::array<PageWord, 12> kPageWords = {{{"seiten", true},
                                                  {"pages", true},
                                                  {"seite", false},
                                                  {"page", false},
                                                  {"pgs.", true},
                                                  {"pgs", true},
                                                  {"pp.", true},
                                                  {"pg.", false},
                                                  {"pp", true},
                                                  {"pg", false},
                                                  {"p.", false},
                                                  {"p", false}}};

bool StartsWithPageWord(std::string_view text, size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != word[i]) return false;
  }
  return true;
}

// A number of 1-6 digits at `at` not followed by a letter or digit; its value and end.
std::optional<std::pair<int, size_t>> PageNumber(std::string_view text, size_t at) {
  size_t end = at;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) != 0) ++end;
  if (end == at || end - at > 6) return std::nullopt;
  if (end < text.size() && IsPageAlnum(static_cast<unsigned char>(text[end]))) {
    return std::nullopt;
  }
  int value = std::stoi(std::string(text.substr(at, end - at)));
  if (value <= 0) return std::nullopt;
  return std::make_pair(value, end);
}

size_t SkipPageSpaces(std::string_view text, size_t at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
  if (text.substr(at, 2) == "\xC2\xA0") return SkipPageSpaces(text, at + 2);  // no-break space
  return at;
}

// A range joiner at `at` (after spaces); the offset after it, or nullopt.
std::optional<size_t> PageJoiner(std::string_view text, size_t at) {
  at = SkipPageSpaces(text, at);
  for (std::string_view dash : {"-", "\xE2\x80\x93", "\xE2\x80\x94"}) {  // - – —
    if (text.substr(at, dash.size()) == dash) return SkipPageSpaces(text, at + dash.size());
  }
  for (std::string_view word : {"to", "through", "bis"}) {
    if (StartsWithPageWord(text, at, word) && at + word.size() < text.size() &&
        !IsPageAlnum(static_cast<unsigned char>(text[at + word.size()]))) {
      return SkipPageSpaces(text, at + word.size());
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<PageReference> FindPageReferences(std::string_view text) {
  std::vector<PageReference> out;
  size_t at = 0;
  while (at < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    // 第N页 / 第N頁
    if (text.substr(at, 3) == "\xE7\xAC\xAC") {  // 第
      size_t end = at + 3;
      size_t digits = end;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) != 0) ++end;
      if (end > digits && end - digits <= 6 &&
          (text.substr(end, 3) == "\xE9\xA1\xB5" || text.substr(end, 3) == "\xE9\xA0\x81")) {
        int page = std::stoi(std::string(text.substr(digits, end - digits)));
        if (page > 0) {
          out.push_back({at, end + 3, page, std::nullopt});
          at = end + 3;
          continue;
        }
      }
      at += 3;
      continue;
    }
    const bool word_start = at == 0 || !IsPageAlnum(static_cast<unsigned char>(text[at - 1]));
    if (!word_start || std::isalpha(c) == 0) {
      ++at;
      continue;
    }
    bool matched = false;
    for (const PageWord& w : kPageWords) {
      if (!StartsWithPageWord(text, at, w.text)) continue;
      size_t after = at + w.text.size();
      // A word without a dot must end there ("pages", not "pagesize").
      if (w.text.back() != '.' && after < text.size() &&
          std::isalpha(static_cast<unsigned char>(text[after])) != 0) {
        continue;
      }
      // "p" without a dot only with the number next or after one space ("p12", "p 12").
      size_t number_at = SkipPageSpaces(text, after);
      if (w.text.size() == 1 && number_at > after + 1) continue;
      auto first = PageNumber(text, number_at);
      if (!first) continue;
      PageReference ref{at, first->second, first->first, std::nullopt};
      if (w.plural) {
        if (auto joined = PageJoiner(text, first->second)) {
          if (auto last = PageNumber(text, *joined); last && last->first >= first->first) {
            ref.end = last->second;
            ref.end_page = last->first;
          }
        }
      }
      out.push_back(ref);
      at = ref.end;
      matched = true;
      break;
    }
    if (!matched) {
      while (at < text.size() && IsPageAlnum(static_cast<unsigned char>(text[at]))) ++at;
    }
  }
  return out;
}

}  // namespace reel
