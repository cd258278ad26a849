// OpenAI Batch files (the Batch API, `vllm run-batch`): requests written as input lines, and
// output lines read back into the same results an online request gives. One JSON document per
// line; a body is streamed from its BodySource, never held in memory.
// The line formats: llm/README.md, "Batch lines".
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
