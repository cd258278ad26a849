// Export, answer in batch mode (the fake server as `vllm run-batch`), import: the same results as
// asking online.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "llm/client/batch_lines.h"
#include "tests/support/fake_model_server.h"

namespace reel::llm {
namespace {

using nlohmann::json;
using reel::testing::FakeModelServer;
using reel::testing::FakeServerOptions;

ChatRequest BatchRequest(const std::string& text, const std::string& schema = "") {
  ChatRequest r;
  r.messages = std::make_shared<StringBody>(
      json::array(
          {{{"role", "user"}, {"content", json::array({{{"type", "text"}, {"text", text}}})}}})
          .dump());
  r.max_completion_tokens = 64;
  r.thinking_mode = "enabled";
  r.json_schema = schema;
  return r;
}

TEST(BatchRoundTripTest, ImportedResultsMatchTheOnlineOnes) {
  const FakeServerOptions options{"vllm", "MiniMax-M3", 500, "", {}};
  FakeModelServer server(options);
  ASSERT_TRUE(server.started());
  std::string long_text;
  for (int i = 0; i < 600; ++i) long_text += "w ";
  const std::string schema = R"({"type":"object","properties":{"n":{"type":"integer"}},
                                "required":["n"]})";
  const std::vector<std::pair<std::string, ChatRequest>> requests = {
      {"item1/summary", BatchRequest("Summarise the clip.")},
      {"item1/count", BatchRequest("How many people?", schema)},
      {"item2/summary", BatchRequest(long_text)},  // too long for the 500-token window
  };

  ModelClientOptions o;
  o.endpoint = server.endpoint();
  o.dialect = "vllm";
  auto client = std::move(ModelClient::Create(o)).value();
  std::map<std::string, ChatResult> online;
  for (const auto& [id, req] : requests) online[id] = client->Chat(req);

  const std::string in_path = std::filesystem::temp_directory_path() /
                              ("reel_batch_in_" + std::to_string(::getpid()) + ".jsonl");
  const std::string out_path = in_path + ".out";
  {
    std::ofstream in(in_path, std::ios::binary);
    for (const auto& [id, req] : requests) {
      auto body = BuildChatBody(VllmDialect(), "MiniMax-M3", req);
      ASSERT_TRUE(body.ok());
      ASSERT_TRUE(WriteBatchInputLine(id, std::shared_ptr<BodySource>(std::move(*body)), in).ok());
    }
  }
  ASSERT_EQ(FakeModelServer::RunBatch(options, in_path, out_path), 0);

  std::ifstream out(out_path);
  std::string line;
  std::map<std::string, ChatResult> imported;
  while (std::getline(out, line)) {
    Result<BatchOutput> parsed = ParseBatchOutputLine(line);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    std::string schema_of;
    for (const auto& [id, req] : requests) {
      if (id == parsed->custom_id) schema_of = req.json_schema;
    }
    imported[parsed->custom_id] = ChatResultFromBatchOutput(*parsed, VllmDialect(), schema_of);
  }
  ASSERT_EQ(imported.size(), requests.size());
  for (const auto& [id, req] : requests) {
    const ChatResult& a = online[id];
    const ChatResult& b = imported[id];
    EXPECT_EQ(a.outcome, b.outcome) << id << ": " << a.error << " / " << b.error;
    EXPECT_EQ(a.answer.content, b.answer.content) << id;
    EXPECT_EQ(a.answer.reasoning, b.answer.reasoning) << id;
    EXPECT_EQ(a.answer.finish_reason, b.answer.finish_reason) << id;
    EXPECT_EQ(a.answer.prompt_tokens, b.answer.prompt_tokens) << id;
    EXPECT_EQ(a.answer.completion_tokens, b.answer.completion_tokens) << id;
    EXPECT_EQ(a.json_answer, b.json_answer) << id;
    EXPECT_EQ(a.too_long.has_value(), b.too_long.has_value()) << id;
    if (a.too_long && b.too_long) {
      EXPECT_EQ(a.too_long->prompt_tokens, b.too_long->prompt_tokens) << id;
      EXPECT_EQ(a.too_long->context_length, b.too_long->context_length) << id;
    }
  }
  EXPECT_EQ(imported["item2/summary"].outcome, ChatOutcome::kTooLong);
  EXPECT_EQ(imported["item1/count"].json_answer, R"({"n":1})");
  std::filesystem::remove(in_path);
  std::filesystem::remove(out_path);
}

}  // namespace
}  // namespace reel::llm
