// SGLang's OpenAI-compatible server (`python -m sglang.launch_server`).
#include "llm/client/dialect.h"

namespace reel::llm {

const Dialect& SglangDialect() {
  static const Dialect* const kDialect = [] {
    auto* d = new Dialect;
    d->name = "sglang";
    d->description = "SGLang (sglang.launch_server)";
    d->sends_chat_template_kwargs = true;
    d->sends_top_k = true;
    d->max_tokens_field = "max_completion_tokens";
    d->sends_stream_usage = true;
    d->supports_json_schema = true;
    d->reasoning_fields = {"reasoning_content", "reasoning"};
    d->reasoning_end_markers = {"</mm:think>", "</think>"};
    d->reasoning_start_markers = {"<mm:think>", "<think>"};
    d->request_id_header = "x-request-id";
    d->owned_by = "sglang";
    d->context_length_fields = {"max_model_len"};
    // SGLang's /tokenize takes `messages` too and answers {"tokens", "count", "max_model_len"}.
    d->tokenize_path = "/tokenize";
    return d;
  }();
  return *kDialect;
}

}  // namespace reel::llm
