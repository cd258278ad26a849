// Which file a time in an answer refers to, for an answer asked over several files (`reel ask
// a.mp4 b.mp4 diagram.png "question"`: one context whose manifest's "sources" name every file,
// llm/context/context_builder.h; the answer is stored under the first file's item).
//
// The context heads each file "Video k: NAME" (videos, numbered in order) or "Image k: NAME"
// (images, after the videos), and gives each video's frames times from that video's start. So a
// time the answer names ("b.mp4 at 01:20", "Video 2 ... 0:05") refers to the file named last
// before it, by its file name or by its heading; with none named, to the item's own file.
//
// Both `reel show` (jobs/cli) and the report's item page (jobs/report) read answers this way.
// Pure functions, thread-safe, no I/O.
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
