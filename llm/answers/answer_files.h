// Which file a time in an answer asked over several files refers to: the file named last before
// it, by its name or its context heading ("Video k", "Image k"); none named: the item's own file.
// Used by `reel show` and the report's item page. Pure functions, thread-safe, no I/O.
// The rule and why: llm/answers/README.md, "Answer files".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reel::llm {

// One file of a context over several files, in the context's order (a manifest's "sources").
struct AnswerFile {
  std::string path;   // as stored (the item's path)
  bool video = true;  // else an image
};

// How the context headed files[index]: "Video 2", "Image 1" (counted among files of its kind).
std::string AnswerFileHeading(const std::vector<AnswerFile>& files, size_t index);

// The last component of `path` ("b.mp4"), as the context named the file.
std::string AnswerFileName(std::string_view path);

// The index in `files` of the file named last before byte `offset` of `content` (by its file
// name or its heading; "Video 1" does not match the start of "Video 12"), or nullopt when none
// is named before it.
std::optional<size_t> FileNamedBefore(std::string_view content, size_t offset,
                                      const std::vector<AnswerFile>& files);

}  // namespace reel::llm
