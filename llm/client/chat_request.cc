#include "llm/client/chat_request.h"

#include <nlohmann/json.hpp>

#include "llm/client/json_schema.h"

namespace reel::llm {
namespace {

using nlohmann::ordered_json;

// `text` as a JSON member list without its braces: {"a":1,"b":2} -> "a":1,"b":2.
std::string Members(const ordered_json& object) {
  const std::string text = object.dump();
  return text.size() <= 2 ? "" : text.substr(1, text.size() - 2);
}

Result<ordered_json> ParseSchema(const std::string& text) {
  // Checks JSON, depth and references first; the schema keeps its own key order (guided
  // decoding writes properties in that order).
  REEL_RETURN_IF_ERROR(JsonSchema::Parse(text).status());
  ordered_json schema = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded() || !(schema.is_object() || schema.is_boolean())) {
    return InvalidArgument("the JSON schema is not a JSON object");
  }
  return schema;
}

}  // namespace

Result<std::unique_ptr<BodySource>> BuildChatBody(const Dialect& dialect, const std::string& model,
                                                  const ChatRequest& request) {
  if (!request.messages) return InvalidArgument("a chat request needs messages");
  ordered_json head = ordered_json::object();
  head["model"] = model;
  ordered_json tail = ordered_json::object();
  tail[dialect.max_tokens_field] = request.max_completion_tokens;
  if (request.temperature) tail["temperature"] = *request.temperature;
  if (request.top_p) tail["top_p"] = *request.top_p;
  if (request.top_k && dialect.sends_top_k) tail["top_k"] = *request.top_k;
  if (request.seed) tail["seed"] = *request.seed;
  if (!request.thinking_mode.empty() && dialect.sends_chat_template_kwargs) {
    tail["chat_template_kwargs"] = {{"thinking_mode", request.thinking_mode}};
  }
  if (!request.json_schema.empty()) {
    if (!dialect.supports_json_schema) {
      return Unsupported("the " + dialect.name + " dialect has no structured answers");
    }
    REEL_ASSIGN_OR_RETURN(ordered_json schema, ParseSchema(request.json_schema));
    tail["response_format"] = {
        {"type", "json_schema"},
        {"json_schema",
         {{"name", request.json_schema_name.empty() ? "answer" : request.json_schema_name},
          {"schema", std::move(schema)},
          {"strict", true}}}};
  }
  if (request.stream) {
    tail["stream"] = true;
    if (dialect.sends_stream_usage) tail["stream_options"] = {{"include_usage", true}};
  }
  auto body = std::make_unique<ComposedBody>();
  body->AddText("{" + Members(head) + ",\"messages\":");
  body->AddSource(request.messages);
  body->AddText("," + Members(tail) + "}");
  return std::unique_ptr<BodySource>(std::move(body));
}

Result<std::unique_ptr<BodySource>> BuildTokenizeBody(const Dialect& dialect,
                                                      const std::string& model,
                                                      const ChatRequest& request) {
  if (!request.messages) return InvalidArgument("a token count needs messages");
  if (dialect.tokenize_path.empty()) {
    return Unsupported("the " + dialect.name + " dialect has no token-count endpoint");
  }
  ordered_json head = ordered_json::object();
  head["model"] = model;
  ordered_json tail = ordered_json::object();
  tail["add_generation_prompt"] = true;
  if (!request.thinking_mode.empty() && dialect.sends_chat_template_kwargs) {
    tail["chat_template_kwargs"] = {{"thinking_mode", request.thinking_mode}};
  }
  auto body = std::make_unique<ComposedBody>();
  body->AddText("{" + Members(head) + ",\"messages\":");
  body->AddSource(request.messages);
  body->AddText("," + Members(tail) + "}");
  return std::unique_ptr<BodySource>(std::move(body));
}

}  // namespace reel::llm
