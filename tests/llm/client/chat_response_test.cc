#include "llm/client/chat_response.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace reel::llm {
namespace {

using nlohmann::json;

std::string Completion(const json& message, const std::string& finish = "stop") {
  return json{{"id", "chatcmpl-1"},
              {"object", "chat.completion"},
              {"model", "MiniMax-M3"},
              {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", finish}}}},
              {"usage",
               {{"prompt_tokens", 1200},
                {"completion_tokens", 34},
                {"prompt_tokens_details", {{"cached_tokens", 1024}}}}}}
      .dump();
}

TEST(ParseChatCompletionTest, VllmReasoningField) {
  ParsedAnswer p = ParseChatCompletion(
      Completion({{"role", "assistant"}, {"content", "A cat."}, {"reasoning", "Looking."}}),
      VllmDialect());
  ASSERT_TRUE(p.ok()) << p.problem_message;
  EXPECT_EQ(p.answer.content, "A cat.");
  EXPECT_EQ(p.answer.reasoning, "Looking.");
  EXPECT_EQ(p.answer.finish_reason, "stop");
  EXPECT_EQ(p.answer.prompt_tokens, 1200);
  EXPECT_EQ(p.answer.completion_tokens, 34);
  EXPECT_EQ(p.answer.cached_tokens, 1024);
  EXPECT_EQ(p.answer.response_id, "chatcmpl-1");
  EXPECT_EQ(p.answer.model, "MiniMax-M3");
}

TEST(ParseChatCompletionTest, SglangReasoningContentField) {
  ParsedAnswer p = ParseChatCompletion(
      Completion({{"content", "A dog."}, {"reasoning_content", "Hmm."}}), SglangDialect());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.answer.reasoning, "Hmm.");
  EXPECT_EQ(p.answer.content, "A dog.");
}

TEST(ParseChatCompletionTest, InlineThinkMarkerWithoutReasoningParser) {
  ParsedAnswer p = ParseChatCompletion(
      Completion({{"content", "<mm:think>\nFirst frames.\n</mm:think>\n\nTwo people talk."}}),
      VllmDialect());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.answer.reasoning, "First frames.");
  EXPECT_EQ(p.answer.content, "Two people talk.");
  // Adaptive thinking: the opening marker is in the prompt, only the closing one is generated.
  p = ParseChatCompletion(Completion({{"content", "Some thought</mm:think>The answer"}}),
                          VllmDialect());
  EXPECT_EQ(p.answer.reasoning, "Some thought");
  EXPECT_EQ(p.answer.content, "The answer");
}

TEST(ParseChatCompletionTest, GenericReasoningDetailsAndContentParts) {
  ParsedAnswer p = ParseChatCompletion(
      Completion({{"content", json::array({{{"type", "text"}, {"text", "Part one, "}},
                                           {{"type", "text"}, {"text", "part two."}}})},
                  {"reasoning_details",
                   json::array({{{"type", "reasoning.text"}, {"text", "step 1. "}},
                                {{"type", "reasoning.text"}, {"text", "step 2."}}})}}),
      OpenAiDialect());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.answer.content, "Part one, part two.");
  EXPECT_EQ(p.answer.reasoning, "step 1. step 2.");
}

TEST(ParseChatCompletionTest, LengthFinishAndNullContent) {
  ParsedAnswer p = ParseChatCompletion(Completion({{"content", nullptr}}, "length"), VllmDialect());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.answer.content, "");
  EXPECT_EQ(p.answer.finish_reason, "length");
}

TEST(ParseChatCompletionTest, BadBodiesAreProblemsNotCrashes) {
  struct Case {
    std::string body;
    AnswerProblem problem;
  };
  const Case cases[] = {
      {"", AnswerProblem::kMalformed},
      {"{\"choices\": [{\"message\": {\"content\": \"unterminated", AnswerProblem::kMalformed},
      {"<html>502 Bad Gateway</html>", AnswerProblem::kMalformed},
      {"[1,2,3]", AnswerProblem::kMalformed},
      {"{\"id\":\"x\",\"choices\":[]}", AnswerProblem::kEmptyChoices},
      {"{\"id\":\"x\"}", AnswerProblem::kEmptyChoices},
      {"{\"choices\":[42]}", AnswerProblem::kMalformed},
      {"{\"choices\":[{\"index\":0}]}", AnswerProblem::kMalformed},
      {"{\"error\":{\"message\":\"engine died\",\"code\":500}}", AnswerProblem::kServerError},
      {"{\"object\":\"error\",\"message\":\"boom\",\"code\":500}", AnswerProblem::kServerError},
      {"{\"base_resp\":{\"status_code\":1002,\"status_msg\":\"rate limit\"}}",
       AnswerProblem::kServerError},
      // Fields of the wrong type (found by the fuzzer: "object" as an array threw).
      {"{\"object\":[\"error\"]}", AnswerProblem::kEmptyChoices},
      {"{\"object\":{},\"base_resp\":[1],\"usage\":\"x\",\"choices\":[]}",
       AnswerProblem::kEmptyChoices},
  };
  for (const Case& c : cases) {
    ParsedAnswer p = ParseChatCompletion(c.body, VllmDialect());
    EXPECT_EQ(p.problem, c.problem) << c.body;
    EXPECT_FALSE(p.problem_message.empty()) << c.body;
  }
}

// The SSE stream of the answer in Completion(...) above, as vLLM sends it.
std::string VllmStream(bool with_done = true) {
  std::string s;
  auto chunk = [&](const json& delta, const json& finish) {
    s += "data: " +
         json{{"id", "chatcmpl-1"},
              {"object", "chat.completion.chunk"},
              {"model", "MiniMax-M3"},
              {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}}}
             .dump() +
         "\n\n";
  };
  chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
  chunk({{"reasoning", "Look"}}, nullptr);
  chunk({{"reasoning", "ing."}}, nullptr);
  chunk({{"content", "A "}}, nullptr);
  chunk({{"content", "cat. \xE7\x8C\xAB"}}, nullptr);
  chunk(json::object(), "stop");
  s += ": keep-alive comment\n\n";
  s += "data: " +
       json{{"id", "chatcmpl-1"},
            {"choices", json::array()},
            {"usage",
             {{"prompt_tokens", 1200},
              {"completion_tokens", 34},
              {"prompt_tokens_details", {{"cached_tokens", 1024}}}}}}
           .dump() +
       "\n\n";
  if (with_done) s += "data: [DONE]\n\n";
  return s;
}

struct Recorder : ChatStreamParser::Observer {
  std::string content, reasoning;
  void OnReasoning(std::string_view t) override { reasoning += t; }
  void OnContent(std::string_view t) override { content += t; }
};

// Fed whole, byte by byte, or with CRLF line ends: the same answer as the non-streamed body.
TEST(ChatStreamParserTest, SameAnswerAsNonStreamedWhateverTheSplits) {
  const ParsedAnswer whole = ParseChatCompletion(
      Completion({{"content", "A cat. \xE7\x8C\xAB"}, {"reasoning", "Looking."}}), VllmDialect());
  ASSERT_TRUE(whole.ok());
  std::string crlf;
  for (char c : VllmStream()) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  for (const std::string& stream : {VllmStream(), crlf}) {
    for (size_t step : {stream.size(), size_t{1}, size_t{5}, size_t{64}}) {
      Recorder rec;
      ChatStreamParser parser(VllmDialect(), &rec);
      for (size_t i = 0; i < stream.size(); i += step) {
        ASSERT_TRUE(parser.Feed(std::string_view(stream).substr(i, step)));
      }
      ParsedAnswer p = parser.Finish();
      ASSERT_TRUE(p.ok()) << p.problem_message;
      EXPECT_EQ(p.answer.content, whole.answer.content);
      EXPECT_EQ(p.answer.reasoning, whole.answer.reasoning);
      EXPECT_EQ(p.answer.finish_reason, whole.answer.finish_reason);
      EXPECT_EQ(p.answer.prompt_tokens, whole.answer.prompt_tokens);
      EXPECT_EQ(p.answer.completion_tokens, whole.answer.completion_tokens);
      EXPECT_EQ(p.answer.cached_tokens, whole.answer.cached_tokens);
      EXPECT_EQ(p.answer.response_id, "chatcmpl-1");
      EXPECT_EQ(rec.content, "A cat. \xE7\x8C\xAB");
      EXPECT_EQ(rec.reasoning, "Looking.");
      EXPECT_TRUE(parser.got_first_token());
    }
  }
}

TEST(ChatStreamParserTest, StreamCutBeforeTheEndIsIncomplete) {
  const std::string stream = VllmStream();
  ChatStreamParser parser(VllmDialect());
  parser.Feed(stream.substr(0, stream.find("\"stop\"") - 200));
  ParsedAnswer p = parser.Finish();
  EXPECT_EQ(p.problem, AnswerProblem::kIncomplete);
}

TEST(ChatStreamParserTest, FinishReasonWithoutDoneIsAccepted) {
  // Some servers close the stream after the finish reason and usage without "data: [DONE]": the
  // answer is whole, with everything the stream carried.
  Recorder rec;
  ChatStreamParser parser(VllmDialect(), &rec);
  ASSERT_TRUE(parser.Feed(VllmStream(/*with_done=*/false)));
  ParsedAnswer p = parser.Finish();
  ASSERT_TRUE(p.ok()) << p.problem_message;
  EXPECT_EQ(p.answer.content, "A cat. \xE7\x8C\xAB");
  EXPECT_EQ(p.answer.reasoning, "Looking.");
  EXPECT_EQ(p.answer.finish_reason, "stop");
  EXPECT_EQ(p.answer.prompt_tokens, 1200);
  EXPECT_EQ(p.answer.completion_tokens, 34);
  EXPECT_EQ(p.answer.cached_tokens, 1024);
  EXPECT_EQ(p.answer.response_id, "chatcmpl-1");
  EXPECT_EQ(rec.content, "A cat. \xE7\x8C\xAB");
  EXPECT_EQ(rec.reasoning, "Looking.");
}

TEST(ChatStreamParserTest, ErrorEventAndMalformedChunk) {
  {
    ChatStreamParser parser(VllmDialect());
    EXPECT_FALSE(parser.Feed(
        "data: {\"error\": {\"message\": \"engine failure\", \"code\": 500}}\n\ndata: [DONE]\n\n"));
    ParsedAnswer p = parser.Finish();
    EXPECT_EQ(p.problem, AnswerProblem::kServerError);
    EXPECT_NE(p.problem_message.find("engine failure"), std::string::npos);
  }
  {
    ChatStreamParser parser(VllmDialect());
    EXPECT_FALSE(parser.Feed("data: {\"choices\": [\n\n"));
    EXPECT_EQ(parser.Finish().problem, AnswerProblem::kMalformed);
  }
  {
    ChatStreamParser parser(VllmDialect());
    parser.Feed("data: [DONE]\n\n");
    EXPECT_EQ(parser.Finish().problem, AnswerProblem::kEmptyChoices);
  }
  {  // An event whose "object" is an array (found by the fuzzer; it threw).
    ChatStreamParser parser(VllmDialect());
    parser.Feed("data: {\"object\": [\"error\"]}\n\ndata: [DONE]\n\n");
    EXPECT_EQ(parser.Finish().problem, AnswerProblem::kEmptyChoices);
  }
}

TEST(ChatStreamParserTest, InlineReasoningIsSplitAtTheEnd) {
  ChatStreamParser parser(SglangDialect());
  parser.Feed(
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"<mm:think>Hm\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"m</mm:thi\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"nk>\\n\\nYes.\"},"
      "\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n");
  ParsedAnswer p = parser.Finish();
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.answer.reasoning, "Hmm");
  EXPECT_EQ(p.answer.content, "Yes.");
}

// A server that ignores `stream` sends one JSON completion: read whole at the end (whatever the
// splits, white space before it too), shown to the observer then; events that begin with white
// space are still events.
TEST(ChatStreamParserTest, AWholeJsonCompletionIsTheAnswer) {
  const std::string body =
      "\r\n " + Completion({{"content", "A cat. \xE7\x8C\xAB"}, {"reasoning", "Looking."}});
  for (size_t step : {body.size(), size_t{1}, size_t{2}, size_t{7}}) {
    Recorder rec;
    ChatStreamParser parser(VllmDialect(), &rec);
    for (size_t i = 0; i < body.size(); i += step) {
      ASSERT_TRUE(parser.Feed(std::string_view(body).substr(i, step)));
    }
    EXPECT_TRUE(rec.content.empty());  // nothing before the end: it may not be a whole answer
    ParsedAnswer p = parser.Finish();
    ASSERT_TRUE(p.ok()) << p.problem_message;
    EXPECT_EQ(p.answer.content, "A cat. \xE7\x8C\xAB");
    EXPECT_EQ(p.answer.reasoning, "Looking.");
    EXPECT_EQ(p.answer.cached_tokens, 1024);
    EXPECT_EQ(rec.content, p.answer.content);
    EXPECT_EQ(rec.reasoning, "Looking.");
    EXPECT_TRUE(parser.got_first_token());
  }
  // A JSON body cut short is malformed (not asked again as a cut stream would be).
  ChatStreamParser cut(VllmDialect());
  cut.Feed(body.substr(0, body.size() / 2));
  EXPECT_EQ(cut.Finish().problem, AnswerProblem::kMalformed);
  // Blank lines before events.
  ChatStreamParser events(VllmDialect());
  events.Feed("\n\n");
  events.Feed(VllmStream());
  ParsedAnswer p = events.Finish();
  ASSERT_TRUE(p.ok()) << p.problem_message;
  EXPECT_EQ(p.answer.content, "A cat. \xE7\x8C\xAB");
}

}  // namespace
}  // namespace reel::llm
