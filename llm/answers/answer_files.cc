#include "llm/answers/answer_files.h"

#include <algorithm>
#include <cctype>

namespace reel::llm {

std::string AnswerFileHeading(const std::vector<AnswerFile>& files, size_t index) {
  if (index >= files.size()) return "";
  int ordinal = 0;
  for (size_t k = 0; k <= index; ++k) ordinal += files[k].video == files[index].video ? 1 : 0;
  return (files[index].video ? "Video " : "Image ") + std::to_string(ordinal);
}

std::string AnswerFileName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::optional<size_t> FileNamedBefore(std::string_view content, size_t offset,
                                      const std::vector<AnswerFile>& files) {
  const std::string_view before = content.substr(0, std::min(offset, content.size()));
  std::optional<size_t> best;
  size_t best_at = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    for (const std::string& name : {AnswerFileName(files[f].path), AnswerFileHeading(files, f)}) {
      if (name.empty()) continue;
      size_t at = before.rfind(name);
      // "Video 1" must not match the start of "Video 12".
      while (at != std::string_view::npos && at + name.size() < before.size() &&
             std::isdigit(static_cast<unsigned char>(before[at + name.size()])) &&
             std::isdigit(static_cast<unsigned char>(name.back()))) {
        at = at == 0 ? std::string_view::npos : before.rfind(name, at - 1);
      }
      if (at == std::string_view::npos) continue;
      if (!best || at + name.size() > best_at) {
        best = f;
        best_at = at + name.size();
      }
    }
  }
  return best;
}

}  // namespace reel::llm
