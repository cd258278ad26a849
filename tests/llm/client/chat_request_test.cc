#include "llm/client/chat_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace reel::llm {
namespace {

using nlohmann::json;

ChatRequest FullRequest() {
  ChatRequest r;
  r.messages = std::make_shared<StringBody>(
      R"([{"role":"system","content":"You are a helpful assistant."},)"
      R"({"role":"user","content":[{"type":"text","text":"What happens?"}]}])");
  r.max_completion_tokens = 4096;
  r.temperature = 1.0;
  r.top_p = 0.95;
  r.top_k = 40;
  r.seed = 7;
  r.thinking_mode = "disabled";
  r.json_schema =
      R"({"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}})";
  r.stream = true;
  return r;
}

json BodyOf(const Dialect& d, const ChatRequest& r) {
  Result<std::unique_ptr<BodySource>> body = BuildChatBody(d, "MiniMax-M3", r);
  EXPECT_TRUE(body.ok()) << body.status().ToString();
  Result<std::string> text = ReadAll(**body);
  EXPECT_TRUE(text.ok());
  EXPECT_EQ(static_cast<int64_t>(text->size()), (*body)->Size());
  return json::parse(*text);
}

TEST(ChatRequestTest, VllmAndSglangSendTheM3Fields) {
  for (const Dialect* d : {&VllmDialect(), &SglangDialect()}) {
    const json b = BodyOf(*d, FullRequest());
    EXPECT_EQ(b["model"], "MiniMax-M3");
    EXPECT_EQ(b["messages"].size(), 2u);
    EXPECT_EQ(b["max_completion_tokens"], 4096);
    EXPECT_EQ(b["temperature"], 1.0);
    EXPECT_EQ(b["top_p"], 0.95);
    EXPECT_EQ(b["top_k"], 40);
    EXPECT_EQ(b["seed"], 7);
    EXPECT_EQ(b["chat_template_kwargs"]["thinking_mode"], "disabled");
    EXPECT_EQ(b["response_format"]["type"], "json_schema");
    EXPECT_EQ(b["response_format"]["json_schema"]["name"], "answer");
    EXPECT_EQ(b["response_format"]["json_schema"]["strict"], true);
    EXPECT_EQ(b["stream"], true);
    EXPECT_EQ(b["stream_options"]["include_usage"], true);
  }
}

TEST(ChatRequestTest, GenericServiceGetsNoTemplateKwargsNorTopK) {
  const json b = BodyOf(OpenAiDialect(), FullRequest());
  EXPECT_FALSE(b.contains("chat_template_kwargs"));
  EXPECT_FALSE(b.contains("top_k"));
  EXPECT_EQ(b["max_completion_tokens"], 4096);
  EXPECT_EQ(b["seed"], 7);
}

// The schema keeps its key order (guided decoding writes properties in that order), and the
// same request gives the same bytes.
TEST(ChatRequestTest, DeterministicAndSchemaOrderKept) {
  ChatRequest r = FullRequest();
  Result<std::unique_ptr<BodySource>> a = BuildChatBody(VllmDialect(), "MiniMax-M3", r);
  Result<std::unique_ptr<BodySource>> b = BuildChatBody(VllmDialect(), "MiniMax-M3", r);
  const std::string ta = *ReadAll(**a), tb = *ReadAll(**b);
  EXPECT_EQ(ta, tb);
  EXPECT_LT(ta.find("\"b\":"), ta.find("\"a\":"));
  // The messages come through untouched, as their bytes.
  EXPECT_NE(ta.find(R"("messages":[{"role":"system","content":"You are a helpful assistant."},)"),
            std::string::npos);
}

TEST(ChatRequestTest, MinimalRequestAndErrors) {
  ChatRequest r;
  r.messages = std::make_shared<StringBody>(R"([{"role":"user","content":"hi"}])");
  const json b = BodyOf(VllmDialect(), r);
  EXPECT_EQ(b["max_completion_tokens"], 16384);  // always sent
  EXPECT_FALSE(b.contains("stream"));
  EXPECT_FALSE(b.contains("chat_template_kwargs"));
  EXPECT_FALSE(b.contains("response_format"));
  r.json_schema = "{not json";
  EXPECT_FALSE(BuildChatBody(VllmDialect(), "m", r).ok());
  ChatRequest empty;
  EXPECT_FALSE(BuildChatBody(VllmDialect(), "m", empty).ok());
}

TEST(ChatRequestTest, TokenizeBody) {
  Result<std::unique_ptr<BodySource>> body =
      BuildTokenizeBody(VllmDialect(), "MiniMax-M3", FullRequest());
  ASSERT_TRUE(body.ok());
  const json b = json::parse(*ReadAll(**body));
  EXPECT_EQ(b["model"], "MiniMax-M3");
  EXPECT_EQ(b["messages"].size(), 2u);
  EXPECT_EQ(b["add_generation_prompt"], true);
  EXPECT_EQ(b["chat_template_kwargs"]["thinking_mode"], "disabled");
  EXPECT_FALSE(BuildTokenizeBody(OpenAiDialect(), "m", FullRequest()).ok());
}

TEST(DialectTest, ByNameAndDetection) {
  EXPECT_EQ((*DialectByName("vllm"))->name, "vllm");
  EXPECT_EQ((*DialectByName("sglang"))->name, "sglang");
  EXPECT_EQ((*DialectByName("openai"))->name, "openai");
  Result<const Dialect*> bad = DialectByName("tgi");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("vllm, sglang, openai"), std::string::npos);
  EXPECT_EQ(DetectDialect(R"({"data":[{"id":"m","owned_by":"vllm","max_model_len":8}]})").name,
            "vllm");
  EXPECT_EQ(DetectDialect(R"({"data":[{"id":"m","owned_by":"sglang"}]})").name, "sglang");
  EXPECT_EQ(DetectDialect(R"({"data":[{"id":"m","context_length":8}]})").name, "openai");
  EXPECT_EQ(DetectDialect("garbage").name, "openai");
}

}  // namespace
}  // namespace reel::llm
