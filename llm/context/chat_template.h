// Chat templates as data: how a server lays out a conversation and expands images and videos into
// tokens. Built in: minimax-m3 (the default; inexact, so counts carry a margin) and chatml
// (Qwen-style; exact for text). Nothing here tokenizes (PromptCounter counts).
// The layouts: llm/context/README.md, "Chat templates".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace reel::llm {

enum class ThinkingMode { kEnabled, kDisabled, kAdaptive };

struct ChatTemplate {
  std::string name;
  bool exact = false;     // the layout is known exactly (else counts carry margin_tokens)
  int margin_tokens = 0;  // tokens added for what is not known exactly

  std::string prompt_begin;  // once, before everything (M3: the bos "]~!b[")
  std::string turn_begin;    // before a role name ("]~b]", "<|im_start|>")
  std::string after_role;    // after the role name ("\n")
  std::string turn_end;      // after a turn's content ("[e~[\n", "<|im_end|>\n")
  std::string system_role;   // the role of the system prompt ("developer" for M3)
  std::string user_role;
  std::string assistant_role;

  // M3 only: a fixed first block (role "system") with the identity text and the thinking line.
  bool fixed_system_block = false;
  std::string identity_text;
  std::string thinking_line[3];  // by ThinkingMode (enabled, disabled, adaptive)
  std::string default_system_prompt;

  std::string generation_suffix[3];  // after the assistant role line, by ThinkingMode

  // Media expansion (M3 processor): start + placeholder x tokens + end, per image and per frame
  // pair of a video; a video pair is preceded by a timestamp text when the server knows times.
  std::string image_start;
  std::string image_end;
  std::string image_placeholder;
  std::string video_placeholder;
  std::string timestamp_prefix;  // "]<]" then the time with one decimal, then the suffix
  std::string timestamp_suffix;  // " seconds[>["

  // Strings that are single special tokens of the model's tokenizer (used when counting
  // without one, and to check a tokenizer file against the template).
  std::vector<std::string> special_tokens;

  // The text of a timestamp for `seconds` (Python's f"{t:.1f}").
  std::string Timestamp(double seconds) const;
};

// The built-in templates by name ("minimax-m3", "chatml"); kInvalidArgument for another name.
Result<ChatTemplate> BuiltInChatTemplate(const std::string& name);

const char* ThinkingModeName(ThinkingMode mode);

}  // namespace reel::llm
