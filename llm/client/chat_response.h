// Reading a chat completion (a whole JSON body or server-sent events) to the same ChatAnswer.
// Bad input never crashes or throws: it becomes a ParsedAnswer with a problem and a message.
// Details: llm/README.md, "Chat response".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "llm/client/dialect.h"

namespace reel::llm {

struct ChatAnswer {
  std::string content;
  std::string reasoning;
  std::string finish_reason;  // "stop", "length", ...; "" when the server gave none
  std::optional<int64_t> prompt_tokens;
  std::optional<int64_t> completion_tokens;
  std::optional<int64_t> cached_tokens;     // usage.prompt_tokens_details.cached_tokens
  std::optional<int64_t> reasoning_tokens;  // when the server counts them apart
  std::string response_id;                  // the body's `id`
  std::string model;                        // the body's `model`
};

enum class AnswerProblem {
  kNone = 0,
  kMalformed,     // not JSON, or not a chat completion
  kEmptyChoices,  // `choices` missing or empty
  kServerError,   // an error object instead of an answer (inside a 200, or in the stream)
  kIncomplete,    // the stream ended before its last chunk
};

const char* AnswerProblemName(AnswerProblem problem);

struct ParsedAnswer {
  AnswerProblem problem = AnswerProblem::kNone;
  std::string problem_message;  // why, for the request's record
  ChatAnswer answer;            // what could be read (also when there is a problem)
  bool ok() const { return problem == AnswerProblem::kNone; }
};

// Parses a non-streaming /v1/chat/completions response body.
ParsedAnswer ParseChatCompletion(std::string_view body, const Dialect& dialect);

// Moves reasoning that is inline in `answer->content` (ended by one of the dialect's markers) to
// `answer->reasoning`, when the server did not separate it. Both parsers call it.
void SplitInlineReasoning(const Dialect& dialect, ChatAnswer* answer);

// Server-sent events in, chat completion chunks accumulated. Feed bytes as they arrive (any
// split, even inside a line or a UTF-8 sequence); Finish when the transfer ends.
//
// A server that ignores `stream` (some OpenAI-compatible services do) answers with one JSON
// completion instead: a body whose first byte that is not white space is '{' (no event line
// starts so) is kept whole and read by ParseChatCompletion in Finish, which then shows the
// observer the reasoning and the content at once. Its size is the caller's to bound (the HTTP
// client's response cap).
class ChatStreamParser {
 public:
  // Called with each piece of text as it is decoded (for a person watching the answer arrive).
  struct Observer {
    virtual ~Observer() = default;
    virtual void OnReasoning(std::string_view text) { (void)text; }
    virtual void OnContent(std::string_view text) { (void)text; }
  };

  explicit ChatStreamParser(const Dialect& dialect, Observer* observer = nullptr);
  ~ChatStreamParser();
  ChatStreamParser(const ChatStreamParser&) = delete;
  ChatStreamParser& operator=(const ChatStreamParser&) = delete;

  // Returns false once the stream is known to be bad (an error event, a malformed chunk, more
  // than `max_event_bytes` in one event); later bytes are ignored.
  bool Feed(std::string_view bytes);
  ParsedAnswer Finish();

  // True once the first reasoning or content text arrived (the time to first token).
  bool got_first_token() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace reel::llm
