// The `messages` of one context segment as an OpenAI-compatible chat request holds them: a
// BodySource (llm/client/body_source.h) that the model client sends inside its request body
// (BuildChatBody), a Batch line holds, or `reel context --request` writes. Frames are JPEG files
// (at the context's frame size; jobs/context/context_frames.h makes them) read and base64-encoded
// while the body is read, 48 KiB at a time: a one-hour request is never held in memory, and the
// same source can be read again (a retry) without decoding anything. The same context, settings and
// frame files give the same bytes.
//
// Messages: a system message with the segment's system prompt (M3's template puts it in its
// `developer` block), then one user message whose content parts are the segment's parts, in
// order: text parts; one image_url per frame (images transport, and images);
// one video_url with the frames as data:video/jpeg;base64,f1,f2,... (video); the file's file://
// URL (file).
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
