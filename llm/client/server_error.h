// Error documents from model servers, and the too-long-prompt error in every wording we know.
//
// Servers send errors in two shapes: `{"error": {"message", "type", "code"}}` (OpenAI, current
// vLLM) and a flat `{"object": "error", "message", "type", "code"}` (SGLang, older vLLM). Both are
// read; a body that is neither (an HTML page from a proxy, say) becomes the message itself, cut
// to a readable length.
//
// A prompt that does not fit is never retried as it is: the caller re-fits the context. The
// recognised wordings (numbers N = prompt tokens, M = requested output, L = context window):
//   vLLM:   "You passed N input tokens and requested M output tokens. However, the model's
//            context length is only L tokens, ..."
//           "This model's maximum context length is L tokens. However, you requested T tokens
//            (N in the messages, M in the completion). ..."
//           "This model's maximum context length is L tokens. However, your request has N input
//            tokens. ..."
//           "'max_tokens' or 'max_completion_tokens' is too large: M. This model's maximum
//            context length is L tokens and your request has N input tokens ..."
//           "The decoder prompt (length N) is longer than the maximum model length of L. ..."
//           "Input length (N) exceeds model's maximum context length (L)."
//           "The prompt is N tokens, which exceeds the model's maximum context length of L ..."
//   SGLang: "The input (N tokens) is longer than the model's context length (L tokens)."
//           "Requested token count exceeds the model's maximum context length of L tokens. You
//            requested a total of T tokens: N tokens from the input messages and M tokens for the
//            completion. ..."
//   OpenAI: code "context_length_exceeded".
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
