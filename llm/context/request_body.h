// The `messages` of one context segment as a BodySource, for a chat request, a Batch line or
// `reel context --request`: frame files read and base64-encoded while the body is read, never held
// whole; the same context, settings and frames give the same bytes.
// The messages' shape: llm/context/README.md, "Request body".
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "llm/client/body_source.h"
#include "llm/context/context_builder.h"

namespace reel::llm {

// Indices into input.frames of the frames segment `segment` sends as pictures, in body order
// (none for the file transport).
std::vector<size_t> FramesNeeded(const Context& context, size_t segment);

// The messages array. `frame_files[i]` is the JPEG of input frame i (only the needed ones are
// read; the others may be ""); `video_file_url` is the file:// URL of the item for the file
// transport. Errors: kInvalidArgument for a needed frame without a file; a file that cannot be
// read (stat'ed now) fails with its name.
Result<std::shared_ptr<const BodySource>> BuildMessages(const Context& context, size_t segment,
                                                        const std::vector<std::string>& frame_files,
                                                        const std::string& video_file_url = "");

// The messages of the last step of a split context (map-reduce): the system prompt, then one user
// message with context.reduce_question and each segment's answer under its time range, in order
// ("Part 2 of 3 (120.0-240.0 s):\n<answer>"). `answers` holds one answer per segment.
// Errors: kInvalidArgument when the context is not split or the answers do not match.
Result<std::shared_ptr<const BodySource>> BuildReduceMessages(
    const Context& context, const std::vector<std::string>& answers);

}  // namespace reel::llm
