// One chat completion request, and its body in a server's dialect: the parameters in JSON text
// around the messages' BodySource, streamed, never copied. Bodies are deterministic (fields in a
// fixed order). Details: llm/README.md, "Chat request".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "llm/client/body_source.h"
#include "llm/client/dialect.h"

namespace reel::llm {

struct ChatRequest {
  // The `messages` array as JSON text: [{"role": "user", "content": [...]}, ...]. Shared so the
  // same messages can be sent more than once (a retry, a token count, a Batch line).
  std::shared_ptr<const BodySource> messages;
  int64_t max_completion_tokens = 16384;  // always sent: omitted, vLLM fills the context
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int> top_k;  // sent only where the dialect allows it
  std::optional<int64_t> seed;
  // M3's `chat_template_kwargs.thinking_mode`: "enabled", "disabled", "adaptive"; "" = not sent.
  // Sent only where the dialect allows it.
  std::string thinking_mode;
  // A JSON schema (JSON text) the answer must follow: sent as response_format json_schema and
  // checked on our side. "" = a free-text answer.
  std::string json_schema;
  std::string json_schema_name = "answer";
  bool stream = false;
  // The local count of the prompt's tokens (for the tokens-per-minute limit and the report).
  int64_t prompt_tokens_estimate = 0;
  // Sent as X-Request-Id (vLLM and SGLang adopt it as their request id when allowed); "" = none.
  std::string client_request_id;
};

// The /v1/chat/completions body. kInvalidArgument for a schema that is not JSON or a request
// without messages.
Result<std::unique_ptr<BodySource>> BuildChatBody(const Dialect& dialect, const std::string& model,
                                                  const ChatRequest& request);

// The body of POST /tokenize with the same messages and chat template options (vLLM, SGLang).
Result<std::unique_ptr<BodySource>> BuildTokenizeBody(const Dialect& dialect,
                                                      const std::string& model,
                                                      const ChatRequest& request);

}  // namespace reel::llm
