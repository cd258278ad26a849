#include "llm/client/batch_lines.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace reel::llm {
namespace {

using nlohmann::json;

TEST(BatchLinesTest, InputLineStreamsTheBody) {
  auto body = std::make_shared<ComposedBody>();
  body->AddText(R"({"model":"MiniMax-M3","messages":[{"role":"user","content":[)"
                R"({"type":"image_url","image_url":{"url":"data:image/jpeg;base64,)");
  body->AddBase64(std::make_shared<const std::string>("\xff\xd8\xff\xe0 jpeg bytes"));
  body->AddText(R"("}}]}],"max_completion_tokens":100})");
  std::ostringstream out;
  ASSERT_TRUE(WriteBatchInputLine("item-1/summary \"q\"", body, out).ok());
  const std::string line = out.str();
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  const json doc = json::parse(line);
  EXPECT_EQ(doc["custom_id"], "item-1/summary \"q\"");
  EXPECT_EQ(doc["method"], "POST");
  EXPECT_EQ(doc["url"], "/v1/chat/completions");
  EXPECT_EQ(doc["body"]["max_completion_tokens"], 100);

  Result<BatchInput> in = ParseBatchInputLine(line);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EXPECT_EQ(in->custom_id, "item-1/summary \"q\"");
  EXPECT_EQ(json::parse(in->body), doc["body"]);
  // The BodySource form has the exact size of the line.
  auto source = BatchInputLine("x", body);
  EXPECT_EQ(source->Size(), static_cast<int64_t>(ReadAll(*source)->size()));
}

std::string Completion(const std::string& content) {
  return json{{"id", "chatcmpl-9"},
              {"object", "chat.completion"},
              {"model", "MiniMax-M3"},
              {"choices",
               {{{"index", 0},
                 {"message", {{"role", "assistant"}, {"content", content}, {"reasoning", "r"}}},
                 {"finish_reason", "stop"}}}},
              {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 3}}}}
      .dump();
}

TEST(BatchLinesTest, OutputLineToTheSameResultAsOnline) {
  const std::string line = json{
      {"id", "vllm-1"},
      {"custom_id", "c1"},
      {"response",
       {{"status_code", 200},
        {"request_id", "vllm-batch-1"},
        {"body", json::parse(Completion(R"({"n": 2})"))}}},
      {"error", nullptr}}.dump();
  Result<BatchOutput> out = ParseBatchOutputLine(line);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->custom_id, "c1");
  EXPECT_EQ(out->status_code, 200);
  EXPECT_FALSE(out->has_error);
  ChatResult r =
      ChatResultFromBatchOutput(*out, VllmDialect(), R"({"type":"object","required":["n"]})");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.answer.content, R"({"n": 2})");
  EXPECT_EQ(r.answer.reasoning, "r");
  EXPECT_EQ(r.json_answer, R"({"n":2})");
  EXPECT_EQ(r.answer.prompt_tokens, 10);
  EXPECT_EQ(r.server_request_id, "vllm-batch-1");

  // The same answer against a schema it does not match.
  r = ChatResultFromBatchOutput(*out, VllmDialect(), R"({"type":"array"})");
  EXPECT_EQ(r.outcome, ChatOutcome::kSchemaMismatch);
  EXPECT_EQ(r.answer.content, R"({"n": 2})");  // kept
}

TEST(BatchLinesTest, ErrorsInEveryShape) {
  struct Case {
    std::string line;
    ChatOutcome outcome;
    std::string message;
  };
  const std::string too_long =
      "You passed 2000 input tokens and requested 100 output tokens. However, the model's "
      "context length is only 1024 tokens, resulting in a maximum input length of 924 tokens.";
  const Case cases[] = {
      // vLLM run-batch: a string error, no body.
      {json{{"id", "a"},
            {"custom_id", "c"},
            {"response", {{"status_code", 400}, {"request_id", "r"}, {"body", nullptr}}},
            {"error", "Request must not be sent in stream mode"}}
           .dump(),
       ChatOutcome::kRejected, "stream mode"},
      // vLLM run-batch: an ErrorResponse object.
      {json{{"id", "a"},
            {"custom_id", "c"},
            {"response", {{"status_code", 400}, {"request_id", "r"}}},
            {"error", {{"error", {{"message", too_long}, {"code", 400}}}}}}
           .dump(),
       ChatOutcome::kTooLong, "You passed 2000"},
      // OpenAI Batch API: {code, message}, no response.
      {json{{"id", "a"},
            {"custom_id", "c"},
            {"response", nullptr},
            {"error",
             {{"code", "batch_expired"},
              {"message",
               "This request could not be executed before the completion window expired."}}}}
           .dump(),
       ChatOutcome::kServerError, "completion window"},
      // OpenAI Batch API: the error document as the response body.
      {json{{"id", "a"},
            {"custom_id", "c"},
            {"response",
             {{"status_code", 500},
              {"request_id", "r"},
              {"body", {{"error", {{"message", "The server had an error"}}}}}}},
            {"error", nullptr}}
           .dump(),
       ChatOutcome::kServerError, "HTTP 500: The server had an error"},
      // A 200 with an empty choice list.
      {json{{"id", "a"},
            {"custom_id", "c"},
            {"response",
             {{"status_code", 200}, {"body", {{"id", "x"}, {"choices", json::array()}}}}},
            {"error", nullptr}}
           .dump(),
       ChatOutcome::kEmptyChoices, "empty"},
  };
  for (const Case& c : cases) {
    Result<BatchOutput> out = ParseBatchOutputLine(c.line);
    ASSERT_TRUE(out.ok()) << c.line;
    ChatResult r = ChatResultFromBatchOutput(*out, VllmDialect(), "");
    EXPECT_EQ(r.outcome, c.outcome) << c.line << " -> " << r.error;
    EXPECT_NE(r.error.find(c.message), std::string::npos) << r.error;
  }
  Result<BatchOutput> t = ParseBatchOutputLine(cases[1].line);
  ChatResult r = ChatResultFromBatchOutput(*t, VllmDialect(), "");
  ASSERT_TRUE(r.too_long.has_value());
  EXPECT_EQ(r.too_long->prompt_tokens, 2000);
  EXPECT_EQ(r.too_long->context_length, 1024);
}

TEST(BatchLinesTest, BadLinesAreErrorsNotCrashes) {
  for (const std::string& line :
       {std::string(""), std::string("not json"), std::string("[1]"), std::string(R"({"id":"x"})"),
        std::string(R"({"custom_id":"c"})"), std::string(R"({"custom_id":"c","response":7})"),
        std::string(R"({"custom_id":5,"response":{}})"),
        std::string(50000, '[') + std::string(50000, ']')}) {
    EXPECT_FALSE(ParseBatchOutputLine(line).ok()) << line.substr(0, 40);
    EXPECT_FALSE(ParseBatchInputLine(line).ok()) << line.substr(0, 40);
  }
}

}  // namespace
}  // namespace reel::llm
