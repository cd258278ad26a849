// The request body of one context segment: an OpenAI-compatible POST /v1/chat/completions JSON,
// written to a sink piece by piece as the frames arrive (base64 JPEGs are never all held at
// once). The same context and settings give the same bytes.
//
// Messages: a system message (the prompt's system text) and one user message whose content
// parts are the segment's parts: text parts, one image_url per frame (images transport), one
// video_url with the frames as data:video/jpeg;base64,f1,f2,... (video) or the file's file://
// URL (file). Fields: model, messages, max_completion_tokens, temperature, top_p, top_k and
// chat_template_kwargs.thinking_mode (unless `generic`), seed when set.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "llm/context_builder.h"

namespace reel::llm {

struct RequestSettings {
  std::string model = "MiniMax-M3";
  int64_t max_completion_tokens = 16384;
  double temperature = 1.0;
  double top_p = 0.95;
  int top_k = 40;  // -1: not sent
  std::optional<int64_t> seed;
  ThinkingMode thinking_mode = ThinkingMode::kAdaptive;
  bool generic = false;        // a generic OpenAI service: no top_k, no chat_template_kwargs
  std::string video_file_url;  // file transport: file:///absolute/path
};

class RequestBodyWriter {
 public:
  using Sink = std::function<Status(std::string_view)>;
  RequestBodyWriter(const Context& context, size_t segment, const ContextInput& input,
                    const RequestSettings& settings, Sink sink);

  // Indices into input.frames of the JPEGs the body needs, in the order AddFrame wants them
  // (none for the file transport). Each at context.frame_width x context.frame_height.
  const std::vector<size_t>& FramesNeeded() const { return needed_; }
  // Writes everything up to the first frame.
  Status Begin();
  // Writes the next needed frame (JPEG bytes) and the text that follows it.
  Status AddFrame(std::string_view jpeg);
  // Writes the rest. Fails if frames are missing.
  Status Finish();
  int64_t bytes_written() const { return written_; }

 private:
  Status Write(std::string_view s);
  Status WriteBase64(std::string_view bytes);
  Status WritePartsFrom();  // text parts up to the next frame
  const Context& ctx_;
  const ContextSegment& seg_;
  const ContextInput& input_;
  RequestSettings settings_;
  Sink sink_;
  std::vector<size_t> needed_;
  size_t next_frame_ = 0;     // position in needed_
  size_t part_ = 0;           // next part to write
  size_t frame_in_part_ = 0;  // frames written of the current video part
  bool first_part_ = true;
  int64_t written_ = 0;
};

// Base64 (RFC 4648, with padding) of `bytes`.
std::string Base64(std::string_view bytes);

}  // namespace reel::llm
