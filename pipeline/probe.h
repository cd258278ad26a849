// Probing: what is in a media file, without decoding pictures.
#pragma once

#include <string>

#include "base/status.h"
#include "pipeline/limits.h"
#include "pipeline/media_info.h"

namespace reel::pipeline {

// Opens `path` and describes the container and every stream. Durations come from the stream,
// else the container, else the packet index; frame counts come from the packet index when the
// container does not state them (or states something the index contradicts).
//
// Errors: kNotFound (missing path), kInvalidArgument (a directory), kCorruptData (not a media
// file, truncated, unreadable), kLimitExceeded (time limit or absurd dimensions). Every message
// starts with the path.
Result<MediaInfo> Probe(const std::string& path, const MediaLimits& limits = {});

}  // namespace reel::pipeline
