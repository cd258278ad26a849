#include "llm/context/request_body.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace reel::llm {
namespace {

std::string Quote(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::vector<size_t> FramesNeeded(const Context& context, size_t segment) {
  std::vector<size_t> needed;
  for (const ContextPart& p : context.segments.at(segment).parts) {
    if (p.kind == ContextPart::Kind::kImage || p.kind == ContextPart::Kind::kVideo) {
      needed.insert(needed.end(), p.frames.begin(), p.frames.end());
    }
  }
  return needed;
}

Result<std::shared_ptr<const BodySource>> BuildMessages(const Context& context, size_t segment,
                                                        const std::vector<std::string>& frame_files,
                                                        const std::string& video_file_url) {
  if (segment >= context.segments.size()) {
    return InvalidArgument("segment " + std::to_string(segment) + " of a context with " +
                           std::to_string(context.segments.size()));
  }
  const ContextSegment& seg = context.segments[segment];
  auto body = std::make_shared<ComposedBody>();
  auto frame = [&](size_t f) -> Status {
    if (f >= frame_files.size() || frame_files[f].empty()) {
      return InvalidArgument("frame " + std::to_string(f) + " of the context has no JPEG file");
    }
    return body->AddBase64OfFile(frame_files[f]);
  };
  std::string text = "[";
  if (!seg.system_prompt.empty()) {
    text += "{\"role\":\"system\",\"content\":" + Quote(seg.system_prompt) + "},";
  }
  text += "{\"role\":\"user\",\"content\":[";
  bool first = true;
  for (const ContextPart& p : seg.parts) {
    if (!first) text += ",";
    first = false;
    switch (p.kind) {
      case ContextPart::Kind::kText:
        text += "{\"type\":\"text\",\"text\":" + Quote(p.text) + "}";
        break;
      case ContextPart::Kind::kVideoFile:
        if (video_file_url.empty()) {
          return InvalidArgument("the file transport needs the item's file:// URL");
        }
        text += "{\"type\":\"video_url\",\"video_url\":{\"url\":" + Quote(video_file_url) + "}}";
        break;
      case ContextPart::Kind::kImage:
        text += "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/jpeg;base64,";
        body->AddText(std::move(text));
        text.clear();
        REEL_RETURN_IF_ERROR(frame(p.frames.at(0)));
        text = "\"}}";
        break;
      case ContextPart::Kind::kVideo:
        text += "{\"type\":\"video_url\",\"video_url\":{\"url\":\"data:video/jpeg;base64,";
        for (size_t i = 0; i < p.frames.size(); ++i) {
          if (i > 0) text += ",";
          body->AddText(std::move(text));
          text.clear();
          REEL_RETURN_IF_ERROR(frame(p.frames[i]));
        }
        text = "\"}}";
        break;
    }
  }
  text += "]}]";
  body->AddText(std::move(text));
  return std::shared_ptr<const BodySource>(std::move(body));
}

Result<std::shared_ptr<const BodySource>> BuildReduceMessages(
    const Context& context, const std::vector<std::string>& answers) {
  if (context.segments.size() < 2) return InvalidArgument("the context is not split");
  if (answers.size() != context.segments.size()) {
    return InvalidArgument("a split context of " + std::to_string(context.segments.size()) +
                           " segments needs as many answers, got " +
                           std::to_string(answers.size()));
  }
  std::string text = context.reduce_question;
  for (size_t s = 0; s < answers.size(); ++s) {
    char head[128];
    if (context.paged) {
      std::snprintf(head, sizeof head, "\n\nPart %zu of %zu (pages %.0f-%.0f):\n", s + 1,
                    answers.size(), context.segments[s].start_s, context.segments[s].end_s);
      text += head;
    } else if (!context.segments[s].first_label.empty()) {  // several files: the files it covers
      std::snprintf(head, sizeof head, "\n\nPart %zu of %zu (", s + 1, answers.size());
      text +=
          head + context.segments[s].first_label + " to " + context.segments[s].last_label + "):\n";
    } else {
      std::snprintf(head, sizeof head, "\n\nPart %zu of %zu (%.1f-%.1f s):\n", s + 1,
                    answers.size(), context.segments[s].start_s, context.segments[s].end_s);
      text += head;
    }
    text += answers[s];
  }
  std::string out = "[";
  const std::string& system = context.segments[0].system_prompt;
  if (!system.empty()) out += "{\"role\":\"system\",\"content\":" + Quote(system) + "},";
  out += "{\"role\":\"user\",\"content\":" + Quote(text) + "}]";
  return std::shared_ptr<const BodySource>(std::make_shared<StringBody>(std::move(out)));
}

}  // namespace reel::llm
