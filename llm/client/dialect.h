// Server dialects as data: what differs between vLLM, SGLang and other OpenAI-compatible
// services, in one table each (dialect_vllm.cc, dialect_sglang.cc, dialect_openai.cc).
//
// The request builder and the response parser read these fields; no code path elsewhere asks
// which server it talks to. `auto` is resolved from GET /v1/models (DetectDialect).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel::llm {

struct Dialect {
  std::string name;  // "vllm", "sglang", "openai"
  std::string description;

  // --- the request ---
  // Sends `chat_template_kwargs: {"thinking_mode": ...}` (M3's template reads it).
  bool sends_chat_template_kwargs = true;
  // Sends `top_k` (a vLLM/SGLang extension; hosted APIs reject or ignore it).
  bool sends_top_k = true;
  // The field that caps the answer: `max_completion_tokens` (current OpenAI name, vLLM, SGLang).
  std::string max_tokens_field = "max_completion_tokens";
  // Asks for a final usage chunk when streaming (`stream_options.include_usage`).
  bool sends_stream_usage = true;
  // Structured answers: `response_format: {"type": "json_schema", ...}` is understood.
  bool supports_json_schema = true;

  // --- the response ---
  // Where the reasoning text is, in order of preference (message or delta fields).
  std::vector<std::string> reasoning_fields;
  // Markers that end an unparsed reasoning block inside the content, e.g. "</mm:think>";
  // the text before the first one is reasoning (with its opening marker dropped).
  std::vector<std::string> reasoning_end_markers;
  std::vector<std::string> reasoning_start_markers;
  // Header carrying the server's request id, when it sends one (else the body's `id`).
  std::string request_id_header = "x-request-id";

  // --- GET /v1/models and POST /tokenize ---
  // `owned_by` value of the server's model cards (used by DetectDialect); "" = any other.
  std::string owned_by;
  // Fields of a model card that give the context window, in order of preference.
  std::vector<std::string> context_length_fields;
  // The token-count endpoint, relative to the server root (the endpoint without "/v1");
  // "" = none. It takes `messages` and answers `{"count": N, ...}`.
  std::string tokenize_path;
};

// The built-in dialects.
const Dialect& VllmDialect();
const Dialect& SglangDialect();
const Dialect& OpenAiDialect();  // MiniMax's API, OpenRouter and other hosted services

// "vllm", "sglang" or "openai" (also "openai-compatible", "generic"); anything else, including
// "auto", is kInvalidArgument naming the choices.
Result<const Dialect*> DialectByName(std::string_view name);

// Recognises the server from a GET /v1/models body: `owned_by` "vllm" or "sglang"; any other
// server (or an unreadable list) is the generic OpenAI dialect.
const Dialect& DetectDialect(std::string_view models_body);

}  // namespace reel::llm
