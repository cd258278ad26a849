// The `messages` of a built context, as the model client sends them: a BodySource whose bytes are
// exactly the JSON array RequestBodyWriter (request_body.h) writes after "messages": for the same
// segment, with each frame read from its JPEG file and base64-encoded while the request is sent
// (frames are never all held in memory; a 1M-token request is hundreds of megabytes).
//
//   [{"role":"system","content":"..."},
//    {"role":"user","content":[{"type":"text",...},{"type":"image_url",...},...]}]
//
// The system message is left out when the segment's system prompt is empty, as RequestBodyWriter
// does. Frames: one image_url part per frame (images transport), one video_url part with the
// frames as data:video/jpeg;base64,f1,f2,... (video), or the file's own URL (file).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "llm/client/body_source.h"
#include "llm/context_builder.h"

namespace reel::llm {

// The JPEG file of input frame `frame` (an index into ContextInput::frames), at the context's
// frame size.
using FrameFileFn = std::function<std::string(size_t frame)>;

// The messages of `context.segments[segment]`. `video_file_url` is used by the file transport
// (file:///absolute/path). Errors: kNotFound naming a frame file that does not exist;
// kInvalidArgument for a segment out of range.
Result<std::shared_ptr<const BodySource>> ContextMessages(const Context& context, size_t segment,
                                                          const FrameFileFn& frame_file,
                                                          const std::string& video_file_url = "");

// The frames a segment's messages read, as indices into ContextInput::frames, in order.
std::vector<size_t> FramesOfSegment(const Context& context, size_t segment);

}  // namespace reel::llm
