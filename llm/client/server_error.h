// Error documents from model servers (OpenAI's nested and SGLang's flat shape; anything else
// becomes the message), and the too-long-prompt error in every wording we know, with its numbers:
// such a prompt is never retried as it is; the caller re-fits the context.
// The wordings: llm/README.md, "Server errors".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reel::llm {

struct ServerError {
  std::string message;  // never empty
  std::string type;     // "" when absent
  std::string code;     // as text ("400", "context_length_exceeded"); "" when absent
};

// Reads an error body. Never fails: a body that is not an error document gives its text (at most
// `max_message_chars`, on a UTF-8 boundary) or "HTTP <status>" when empty.
ServerError ParseServerError(int http_status, std::string_view body,
                             size_t max_message_chars = 2000);

struct TooLongPrompt {
  std::optional<int64_t> prompt_tokens;     // N: the server's count of the prompt
  std::optional<int64_t> requested_output;  // M: the output tokens asked for
  std::optional<int64_t> context_length;    // L: the server's window
};

// Recognises a too-long-prompt error (status 400 or 413, or a streamed error) and reads the
// numbers it states. nullopt when the error is something else.
std::optional<TooLongPrompt> RecognizeTooLongPrompt(int http_status, const ServerError& error);

}  // namespace reel::llm
