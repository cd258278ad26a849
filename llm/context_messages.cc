#include "llm/context_messages.h"

#include <nlohmann/json.hpp>

namespace reel::llm {
namespace {

// JSON string literal, as RequestBodyWriter quotes (UTF-8 kept, bad bytes replaced).
std::string Quote(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::vector<size_t> FramesOfSegment(const Context& context, size_t segment) {
  std::vector<size_t> frames;
  if (segment >= context.segments.size()) return frames;
  for (const ContextPart& p : context.segments[segment].parts) {
    if (p.kind == ContextPart::Kind::kImage || p.kind == ContextPart::Kind::kVideo) {
      frames.insert(frames.end(), p.frames.begin(), p.frames.end());
    }
  }
  return frames;
}

Result<std::shared_ptr<const BodySource>> ContextMessages(const Context& context, size_t segment,
                                                          const FrameFileFn& frame_file,
                                                          const std::string& video_file_url) {
  if (segment >= context.segments.size()) {
    return InvalidArgument("context segment " + std::to_string(segment) + " of " +
                           std::to_string(context.segments.size()));
  }
  const ContextSegment& seg = context.segments[segment];
  auto body = std::make_shared<ComposedBody>();
  std::string head = "[";
  if (!seg.system_prompt.empty()) {
    head += "{\"role\":\"system\",\"content\":" + Quote(seg.system_prompt) + "},";
  }
  head += "{\"role\":\"user\",\"content\":[";
  body->AddText(std::move(head));
  bool first = true;
  auto separator = [&] {
    if (!first) body->AddText(",");
    first = false;
  };
  for (const ContextPart& p : seg.parts) {
    switch (p.kind) {
      case ContextPart::Kind::kText:
        separator();
        body->AddText("{\"type\":\"text\",\"text\":" + Quote(p.text) + "}");
        break;
      case ContextPart::Kind::kVideoFile:
        separator();
        body->AddText("{\"type\":\"video_url\",\"video_url\":{\"url\":" + Quote(video_file_url) +
                      "}}");
        break;
      case ContextPart::Kind::kImage:
        for (size_t f : p.frames) {
          separator();
          body->AddText("{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/jpeg;base64,");
          REEL_RETURN_IF_ERROR(body->AddBase64OfFile(frame_file(f)));
          body->AddText("\"}}");
        }
        break;
      case ContextPart::Kind::kVideo:
        if (p.frames.empty()) break;
        separator();
        body->AddText("{\"type\":\"video_url\",\"video_url\":{\"url\":\"data:video/jpeg;base64,");
        for (size_t i = 0; i < p.frames.size(); ++i) {
          if (i) body->AddText(",");
          REEL_RETURN_IF_ERROR(body->AddBase64OfFile(frame_file(p.frames[i])));
        }
        body->AddText("\"}}");
        break;
    }
  }
  body->AddText("]}]");
  return std::shared_ptr<const BodySource>(std::move(body));
}

}  // namespace reel::llm
