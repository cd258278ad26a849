// OpenAI Batch files (the Batch API, `vllm run-batch`): requests written as input lines for a
// server to answer later, and its output lines read back into the same results an online
// request gives.
//
// Input line:  {"custom_id": ..., "method": "POST", "url": "/v1/chat/completions", "body": {...}}
// Output line: {"id": ..., "custom_id": ..., "response": {"status_code", "request_id", "body"},
//               "error": ...}
// where `error` is null, a string (vLLM), {"code", "message"} (OpenAI) or an error document, and
// a failed request may carry its error document as `response.body` instead.
//
// Lines are one JSON document each, without line breaks inside (bodies are compact JSON), so a
// 1M-token request is one long line; it is written from the body's BodySource without being
// held in memory.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "base/status.h"
#include "llm/client/body_source.h"
#include "llm/client/dialect.h"
#include "llm/client/model_client.h"

namespace reel::llm {

inline constexpr char kChatCompletionsPath[] = "/v1/chat/completions";

// One input line (ending in "\n") as a BodySource around `body` (compact JSON, no line breaks).
std::unique_ptr<BodySource> BatchInputLine(std::string_view custom_id,
                                           std::shared_ptr<const BodySource> body,
                                           std::string_view url = kChatCompletionsPath);

// Writes one input line to `out`, streaming the body. kIoError when the stream fails.
Status WriteBatchInputLine(std::string_view custom_id, std::shared_ptr<const BodySource> body,
                           std::ostream& out, std::string_view url = kChatCompletionsPath);

struct BatchInput {
  std::string custom_id;
  std::string method;
  std::string url;
  std::string body;  // compact JSON text
};

// Reads an input line back. kCorruptData names what is missing.
Result<BatchInput> ParseBatchInputLine(std::string_view line);

struct BatchOutput {
  std::string id;
  std::string custom_id;
  bool has_response = false;
  int status_code = 0;
  std::string request_id;
  std::string body;  // response.body as compact JSON; "" when null or absent
  bool has_error = false;
  std::string error_code;     // "" when none
  std::string error_message;  // "" when none
};

// Reads one output line. kCorruptData (the reason, e.g. "no custom_id") for a line that is not
// a Batch output line; never crashes on any input.
Result<BatchOutput> ParseBatchOutputLine(std::string_view line);

// The ChatResult an online request would have given: the same answer parsing, too-long
// recognition and schema check. `json_schema` is the prompt's schema ("" = none).
ChatResult ChatResultFromBatchOutput(const BatchOutput& output, const Dialect& dialect,
                                     const std::string& json_schema);

}  // namespace reel::llm
