#include "llm/context/chat_template.h"

#include <cstdio>

namespace reel::llm {
namespace {

ChatTemplate MiniMaxM3() {
  ChatTemplate t;
  t.name = "minimax-m3";
  // The Jinja file is not public: the identity text and the full thinking instructions are
  // unknown. 256 tokens cover them with room; measure drift against usage.prompt_tokens.
  t.exact = false;
  t.margin_tokens = 256;
  t.prompt_begin = "]~!b[";
  t.turn_begin = "]~b]";
  t.after_role = "\n";
  t.turn_end = "[e~[\n";
  t.system_role = "developer";
  t.user_role = "user";
  t.assistant_role = "ai";
  t.fixed_system_block = true;
  t.identity_text = "";
  t.thinking_line[0] = "Current thinking mode: enabled.";
  t.thinking_line[1] = "Current thinking mode: disabled. Do not output any thinking process.";
  t.thinking_line[2] = "Current thinking mode: adaptive.";
  t.default_system_prompt = "You are a helpful assistant.";
  t.generation_suffix[0] = "<mm:think>";
  t.generation_suffix[1] = "</mm:think>";
  t.generation_suffix[2] = "";
  t.image_start = "]<]start of image[>[";
  t.image_end = "]<]end of image[>[";
  t.image_placeholder = "]<]image[>[";
  t.video_placeholder = "]<]video[>[";
  t.timestamp_prefix = "]<]";
  t.timestamp_suffix = " seconds[>[";
  t.special_tokens = {
      "]~!b[",       "]~b]",        "[e~[",       "]<]start of image[>[", "]<]end of image[>[",
      "]<]image[>[", "]<]video[>[", "<mm:think>", "</mm:think>"};
  return t;
}

ChatTemplate ChatMl() {
  ChatTemplate t;
  t.name = "chatml";
  t.exact = true;
  t.margin_tokens = 0;
  t.turn_begin = "<|im_start|>";
  t.after_role = "\n";
  t.turn_end = "<|im_end|>\n";
  t.system_role = "system";
  t.user_role = "user";
  t.assistant_role = "assistant";
  t.default_system_prompt = "";
  // Qwen3 templates: enabled leaves the model to think; disabled adds an empty think block.
  t.generation_suffix[0] = "";
  t.generation_suffix[1] = "<think>\n\n</think>\n\n";
  t.generation_suffix[2] = "";
  t.image_start = "<|vision_start|>";
  t.image_end = "<|vision_end|>";
  t.image_placeholder = "<|image_pad|>";
  t.video_placeholder = "<|video_pad|>";
  t.timestamp_prefix = "<";
  t.timestamp_suffix = " seconds>";
  t.special_tokens = {"<|im_start|>",   "<|im_end|>",    "<|vision_start|>",
                      "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"};
  return t;
}

}  // namespace

std::string ChatTemplate::Timestamp(double seconds) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", seconds);
  return timestamp_prefix + buf + timestamp_suffix;
}

Result<ChatTemplate> BuiltInChatTemplate(const std::string& name) {
  if (name == "minimax-m3") return MiniMaxM3();
  if (name == "chatml") return ChatMl();
  return InvalidArgument("unknown chat template \"" + name + "\" (known: minimax-m3, chatml)");
}

const char* ThinkingModeName(ThinkingMode mode) {
  switch (mode) {
    case ThinkingMode::kEnabled:
      return "enabled";
    case ThinkingMode::kDisabled:
      return "disabled";
    case ThinkingMode::kAdaptive:
      return "adaptive";
  }
  return "adaptive";
}

}  // namespace reel::llm
