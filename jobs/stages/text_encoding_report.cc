#include "jobs/stages/stages.h"

namespace reel::jobs {

void ReportTextEncoding(ItemWork& work, const std::string& what, const std::string& source,
                        const TextEncodingInfo& info) {
  if (!info.Noteworthy()) return;
  work.text_encodings.emplace_back(source, info.encoding);
  std::string message = what + ": " + info.Describe();
  const bool guessed = info.basis == EncodingBasis::kFallback ||
                       info.basis == EncodingBasis::kMostlyUtf8 || info.replaced > 0;
  if (!guessed) {
    work.notes.push_back(std::move(message));
    return;
  }
  if (info.basis == EncodingBasis::kFallback && info.encoding != "utf-8") {
    message +=
        "; if the text looks wrong, set text.fallback_encoding in the job file (or pass "
        "--fallback-encoding)";
  }
  work.warnings.push_back(std::move(message));
}

}  // namespace reel::jobs
