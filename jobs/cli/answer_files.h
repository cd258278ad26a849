// The files a stored answer was asked over, for `reel show`: an answer of `reel ask a.mp4 b.mp4
// diagram.png "question"` (one context over several files, jobs/context/group_context.h) is
// stored under the first file's item; its context's manifest names every file ("sources").
//
// A time the answer names ("b.mp4 at 01:20", "Video 2 ... 0:05", "01:20") refers to the file named
// last before it in the answer (by its file name, or by the heading the model saw: "Video k",
// "Image k"); with none named, to the item's own file. Times are from the start of that file,
// as the frames' times in the context were.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace reel::cli {

struct AnswerFile {
  std::string path;     // as stored
  std::string heading;  // "Video 2", "Image 1": as the context labelled it
};

// response id -> the files of each answer of item `item_id` that was asked over several files
// (answers about the item alone are not listed). Empty on a database error.
std::map<int64_t, std::vector<AnswerFile>> AnswerFilesOf(const std::string& db_path,
                                                         int64_t item_id);

// The index in `files` of the file a time starting at byte `offset` of `content` refers to, or
// nullopt when no file is named before it.
std::optional<size_t> FileNamedBefore(const std::string& content, size_t offset,
                                      const std::vector<AnswerFile>& files);

struct NearestFrame {
  int64_t sample_index = 0;
  double seconds = 0;
};
// The frame of the file at `path` (an item of the same job as `item_id`) nearest to `seconds`;
// nullopt when it has none, or `seconds` is more than a second past its last frame.
std::optional<NearestFrame> NearestFrameOf(const std::string& db_path, int64_t item_id,
                                           const std::string& path, double seconds);

}  // namespace reel::cli
