#include "llm/client/server_error.h"

#include "llm/client/utf8_text.h"

#include <gtest/gtest.h>

namespace reel::llm {
namespace {

TEST(ServerErrorTest, BothShapes) {
  ServerError nested = ParseServerError(
      400,
      R"j({"error":{"message":"bad thing","type":"BadRequestError","param":null,"code":400}})j");
  EXPECT_EQ(nested.message, "bad thing");
  EXPECT_EQ(nested.type, "BadRequestError");
  EXPECT_EQ(nested.code, "400");
  ServerError flat = ParseServerError(
      400, R"j({"object":"error","message":"flat thing","type":"BadRequestError","code":400})j");
  EXPECT_EQ(flat.message, "flat thing");
  EXPECT_EQ(flat.code, "400");
  ServerError openai =
      ParseServerError(400, R"j({"error":{"message":"too long","type":"invalid_request_error",
               "code":"context_length_exceeded"}})j");
  EXPECT_EQ(openai.code, "context_length_exceeded");
}

TEST(ServerErrorTest, NonJsonBodiesBecomeTheMessage) {
  EXPECT_EQ(ParseServerError(502, "<html>Bad Gateway</html>\n").message,
            "<html>Bad Gateway</html>");
  EXPECT_EQ(ParseServerError(503, "").message, "HTTP 503");
  EXPECT_EQ(ParseServerError(422, R"j({"detail":"Not Found"})j").message, "Not Found");
  // Long bodies are cut on a UTF-8 boundary.
  std::string long_body;
  for (int i = 0; i < 2000; ++i) long_body += "\xC3\xA9";  // é
  const std::string m = ParseServerError(500, long_body, 101).message;
  EXPECT_LE(m.size(), 104u);
  EXPECT_EQ(m.substr(m.size() - 3), "...");
  EXPECT_EQ((m.size() - 3) % 2, 0u);
}

struct TooLongCase {
  const char* body;
  std::optional<int64_t> prompt, output, limit;
};

TEST(ServerErrorTest, TooLongPromptInEveryKnownWording) {
  const TooLongCase cases[] = {
      // vLLM, current, nested shape.
      {R"j({"error":{"message":"You passed 1048600 input tokens and requested 16384 output tokens. However, the model's context length is only 1048576 tokens, resulting in a maximum input length of 1032192 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=1048600)","type":"BadRequestError","param":"input_tokens","code":400}})j",
       1048600, 16384, 1048576},
      // SGLang, flat shape, prompt alone.
      {R"j({"object":"error","message":"The input (1050000 tokens) is longer than the model's context length (1048576 tokens).","type":"BadRequestError","param":null,"code":400})j",
       1050000, std::nullopt, 1048576},
      // SGLang, prompt plus output.
      {R"j({"object":"error","message":"Requested token count exceeds the model's maximum context length of 1048576 tokens. You requested a total of 1048600 tokens: 1032216 tokens from the input messages and 16384 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.","type":"BadRequestError","code":400})j",
       1032216, 16384, 1048576},
      // vLLM, older.
      {R"j({"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (38000 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","code":400})j",
       38000, 2000, 32768},
      {R"j({"error":{"message":"This model's maximum context length is 32,768 tokens. However, your request has 40,001 input tokens. Please reduce the length of the input messages.","code":400}})j",
       40001, std::nullopt, 32768},
      {R"j({"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None","type":"BadRequestError","code":400}})j",
       2778, 8000, 4096},
      {R"j({"error":{"message":"The decoder prompt (length 12324) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens.","code":400}})j",
       12324, std::nullopt, 8192},
      {R"j({"error":{"message":"Input length (37184) exceeds model's maximum context length (32768).","code":400}})j",
       37184, std::nullopt, 32768},
      // OpenAI's code, no numbers we can rely on.
      {R"j({"error":{"message":"Too long.","type":"invalid_request_error","code":"context_length_exceeded"}})j",
       std::nullopt, std::nullopt, std::nullopt},
      // MiniMax's own API.
      {R"j({"type":"error","error":{"type":"bad_request_error","message":"invalid params, context window exceeds limit (2013)","http_code":"400"}})j",
       std::nullopt, std::nullopt, std::nullopt},
  };
  for (const TooLongCase& c : cases) {
    const ServerError e = ParseServerError(400, c.body);
    std::optional<TooLongPrompt> t = RecognizeTooLongPrompt(400, e);
    ASSERT_TRUE(t.has_value()) << c.body;
    EXPECT_EQ(t->prompt_tokens, c.prompt) << c.body;
    EXPECT_EQ(t->requested_output, c.output) << c.body;
    EXPECT_EQ(t->context_length, c.limit) << c.body;
  }
}

TEST(ServerErrorTest, OtherErrorsAreNotTooLong) {
  for (const char* body : {
           R"j({"error":{"message":"The model `x` does not exist.","code":404}})j",
           R"j({"error":{"message":"Incorrect API key provided.","code":401}})j",
           R"j({"object":"error","message":"temperature must be in [0, 2]","code":400})j",
           "<html>Bad Gateway</html>",
       }) {
    EXPECT_FALSE(RecognizeTooLongPrompt(400, ParseServerError(400, body))) << body;
  }
  // A success is never an error.
  EXPECT_FALSE(RecognizeTooLongPrompt(
      200, ServerError{"The input (5 tokens) is longer than the model's context length (4 tokens).",
                       "", ""}));
}

// Whatever bytes a proxy sends, what is recorded is valid UTF-8.
TEST(ServerErrorTest, MessagesAreValidUtf8) {
  EXPECT_EQ(SanitizedUtf8("caf\xC3\xA9 \xE7\x8C\xAB \xF0\x9F\x8E\xA5"),
            "caf\xC3\xA9 \xE7\x8C\xAB \xF0\x9F\x8E\xA5");
  EXPECT_EQ(SanitizedUtf8("a\xFF"
                          "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizedUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
  EXPECT_EQ(SanitizedUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(SanitizedUtf8("\xE7\x8C"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // cut short
  EXPECT_EQ(SanitizedUtf8(std::string("a\0b\x1b\tc\n", 7)), "a b \tc\n");
  EXPECT_EQ(ParseServerError(502, "<h1>Bad \xFE gateway</h1>").message,
            "<h1>Bad \xEF\xBF\xBD gateway</h1>");
}

}  // namespace
}  // namespace reel::llm
