// vLLM's OpenAI-compatible server (`vllm serve`), as of the M3 builds.
#include "llm/client/dialect.h"

namespace reel::llm {

const Dialect& VllmDialect() {
  static const Dialect* const kDialect = [] {
    auto* d = new Dialect;
    d->name = "vllm";
    d->description = "vLLM (vllm serve)";
    d->sends_chat_template_kwargs = true;
    d->sends_top_k = true;
    d->max_tokens_field = "max_completion_tokens";
    d->sends_stream_usage = true;
    d->supports_json_schema = true;
    // `reasoning` since vLLM 0.10 (with --reasoning-parser); older builds said reasoning_content.
    d->reasoning_fields = {"reasoning", "reasoning_content"};
    d->reasoning_end_markers = {"</mm:think>", "</think>"};
    d->reasoning_start_markers = {"<mm:think>", "<think>"};
    d->request_id_header = "x-request-id";  // with --enable-request-id-headers
    d->owned_by = "vllm";
    d->context_length_fields = {"max_model_len"};
    d->tokenize_path = "/tokenize";
    return d;
  }();
  return *kDialect;
}

}  // namespace reel::llm
