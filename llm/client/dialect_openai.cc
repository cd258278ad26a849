// A generic OpenAI-compatible service: MiniMax's own API, OpenRouter and the like. Only the
// standard fields are sent (no chat_template_kwargs, no top_k); the reasoning is taken from
// whichever field the service uses.
#include "llm/client/dialect.h"

namespace reel::llm {

const Dialect& OpenAiDialect() {
  static const Dialect* const kDialect = [] {
    auto* d = new Dialect;
    d->name = "openai";
    d->description = "OpenAI-compatible service (MiniMax API, OpenRouter, ...)";
    d->sends_chat_template_kwargs = false;
    d->sends_top_k = false;
    d->max_tokens_field = "max_completion_tokens";
    d->sends_stream_usage = true;
    d->supports_json_schema = true;
    // OpenRouter: `reasoning`; DeepSeek-style services: `reasoning_content`; MiniMax's API with
    // reasoning_split: `reasoning_details[].text` (read by the parser when the others are absent).
    d->reasoning_fields = {"reasoning", "reasoning_content", "reasoning_details"};
    d->reasoning_end_markers = {"</mm:think>", "</think>"};
    d->reasoning_start_markers = {"<mm:think>", "<think>"};
    d->request_id_header = "x-request-id";
    d->owned_by = "";
    // OpenRouter's model list says `context_length`; some proxies pass vLLM's field through.
    d->context_length_fields = {"max_model_len", "context_length", "context_window"};
    d->tokenize_path = "";
    return d;
  }();
  return *kDialect;
}

}  // namespace reel::llm
