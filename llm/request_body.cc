#include "llm/request_body.h"

#include <nlohmann/json.hpp>

namespace reel::llm {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void AppendBase64(std::string_view in, std::string& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  size_t n = in.size(), i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  if (i < n) {
    uint32_t v = uint32_t{p[i]} << 16;
    if (i + 1 < n) v |= uint32_t{p[i + 1]} << 8;
    out.push_back(kAlphabet[v >> 18]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
}

std::string Quote(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string Base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  AppendBase64(bytes, out);
  return out;
}

RequestBodyWriter::RequestBodyWriter(const Context& context, size_t segment,
                                     const ContextInput& input, const RequestSettings& settings,
                                     Sink sink)
    : ctx_(context),
      seg_(context.segments.at(segment)),
      input_(input),
      settings_(settings),
      sink_(std::move(sink)) {
  for (const ContextPart& p : seg_.parts) {
    if (p.kind == ContextPart::Kind::kImage || p.kind == ContextPart::Kind::kVideo) {
      needed_.insert(needed_.end(), p.frames.begin(), p.frames.end());
    }
  }
}

Status RequestBodyWriter::Write(std::string_view s) {
  written_ += static_cast<int64_t>(s.size());
  return sink_(s);
}

Status RequestBodyWriter::WriteBase64(std::string_view bytes) {
  // In chunks of 48 KiB of input (a multiple of 3), so no copy of a whole frame is kept twice.
  std::string out;
  constexpr size_t kChunk = 3 * 16384;
  for (size_t i = 0; i < bytes.size(); i += kChunk) {
    out.clear();
    AppendBase64(bytes.substr(i, kChunk), out);
    REEL_RETURN_IF_ERROR(Write(out));
  }
  return Status::Ok();
}

Status RequestBodyWriter::Begin() {
  std::string head = "{\"model\":" + Quote(settings_.model) + ",\"messages\":[";
  if (!seg_.system_prompt.empty()) {
    head += "{\"role\":\"system\",\"content\":" + Quote(seg_.system_prompt) + "},";
  }
  head += "{\"role\":\"user\",\"content\":[";
  REEL_RETURN_IF_ERROR(Write(head));
  return WritePartsFrom();
}

// Writes parts until one needs a frame that has not arrived.
Status RequestBodyWriter::WritePartsFrom() {
  while (part_ < seg_.parts.size()) {
    const ContextPart& p = seg_.parts[part_];
    if (p.kind == ContextPart::Kind::kText || p.kind == ContextPart::Kind::kVideoFile) {
      std::string s = first_part_ ? "" : ",";
      if (p.kind == ContextPart::Kind::kText) {
        s += "{\"type\":\"text\",\"text\":" + Quote(p.text) + "}";
      } else {
        s += "{\"type\":\"video_url\",\"video_url\":{\"url\":" + Quote(settings_.video_file_url) +
             "}}";
      }
      first_part_ = false;
      ++part_;
      REEL_RETURN_IF_ERROR(Write(s));
      continue;
    }
    return Status::Ok();  // waits for frames
  }
  return Status::Ok();
}

Status RequestBodyWriter::AddFrame(std::string_view jpeg) {
  if (next_frame_ >= needed_.size() || part_ >= seg_.parts.size()) {
    return Internal("request body: more frames than the context needs");
  }
  const ContextPart& p = seg_.parts[part_];
  if (p.kind == ContextPart::Kind::kImage) {
    REEL_RETURN_IF_ERROR(Write(std::string(first_part_ ? "" : ",") +
                               "{\"type\":\"image_url\",\"image_url\":{\"url\":\""
                               "data:image/jpeg;base64,"));
    REEL_RETURN_IF_ERROR(WriteBase64(jpeg));
    REEL_RETURN_IF_ERROR(Write("\"}}"));
    first_part_ = false;
    ++part_;
  } else {
    if (frame_in_part_ == 0) {
      REEL_RETURN_IF_ERROR(Write(std::string(first_part_ ? "" : ",") +
                                 "{\"type\":\"video_url\",\"video_url\":{\"url\":\""
                                 "data:video/jpeg;base64,"));
    } else {
      REEL_RETURN_IF_ERROR(Write(","));
    }
    REEL_RETURN_IF_ERROR(WriteBase64(jpeg));
    first_part_ = false;
    if (++frame_in_part_ == p.frames.size()) {
      REEL_RETURN_IF_ERROR(Write("\"}}"));
      frame_in_part_ = 0;
      ++part_;
    }
  }
  ++next_frame_;
  return WritePartsFrom();
}

Status RequestBodyWriter::Finish() {
  if (next_frame_ != needed_.size() || part_ != seg_.parts.size()) {
    return Internal("request body: " + std::to_string(needed_.size() - next_frame_) +
                    " frames were not given");
  }
  nlohmann::json tail;
  std::string s =
      "]}],\"max_completion_tokens\":" + std::to_string(settings_.max_completion_tokens) +
      ",\"temperature\":" + nlohmann::json(settings_.temperature).dump() +
      ",\"top_p\":" + nlohmann::json(settings_.top_p).dump();
  if (!settings_.generic && settings_.top_k != -1) {
    s += ",\"top_k\":" + std::to_string(settings_.top_k);
  }
  if (settings_.seed) s += ",\"seed\":" + std::to_string(*settings_.seed);
  if (!settings_.generic) {
    s += ",\"chat_template_kwargs\":{\"thinking_mode\":\"" +
         std::string(ThinkingModeName(settings_.thinking_mode)) + "\"}";
  }
  s += "}";
  return Write(s);
}

}  // namespace reel::llm
