// The model client against the fake OpenAI-compatible server (tests/support/fake_openai_server.py)
// in its vLLM, SGLang and generic modes: checks, answers, every injected failure, retries, the
// circuit, the rate limit, streaming, structured answers and the API key.
#include "llm/client/model_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "llm/client/endpoint_url.h"
#include "tests/llm/client/fake_clock.h"
#include "tests/support/fake_model_server.h"

namespace reel::llm {
namespace {

using nlohmann::json;
using reel::testing::FakeModelServer;
using reel::testing::FakeServerOptions;

std::shared_ptr<BodySource> UserMessages(const std::string& text) {
  return std::make_shared<StringBody>(
      json::array(
          {{{"role", "system"}, {"content", "You are a helpful assistant."}},
           {{"role", "user"}, {"content", json::array({{{"type", "text"}, {"text", text}}})}}})
          .dump());
}

ChatRequest Request(const std::string& text = "What happens in the video?") {
  ChatRequest r;
  r.messages = UserMessages(text);
  r.max_completion_tokens = 256;
  r.temperature = 1.0;
  r.top_p = 0.95;
  r.top_k = 40;
  r.thinking_mode = "adaptive";
  return r;
}

ModelClientOptions Options(const FakeModelServer& server) {
  ModelClientOptions o;
  o.endpoint = server.endpoint();
  o.model = "MiniMax-M3";
  o.connect_timeout_s = 5;
  o.read_timeout_s = 10;
  o.retry.initial_delay_s = 0.01;  // keep the tests fast; the policy itself is unit-tested
  o.retry.max_delay_s = 0.05;
  return o;
}

std::unique_ptr<ModelClient> Client(ModelClientOptions o) {
  Result<std::unique_ptr<ModelClient>> c = ModelClient::Create(std::move(o));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

// Every request the fake saw had the right shape and no key problem.
void ExpectCleanRequests(FakeModelServer& server) {
  for (const auto& e : json::parse(server.Log())) {
    EXPECT_TRUE(e.value("shape_errors", json::array()).empty()) << e.dump();
    EXPECT_TRUE(e.value("auth_problems", json::array()).empty()) << e.dump();
  }
}

class ModelClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.started()) << "python3 fake server did not start"; }
  FakeModelServer server_;
};

TEST_F(ModelClientTest, CheckModelDetectsVllmAndReadsMaxModelLen) {
  auto client = Client(Options(server_));
  Result<ServerInfo> info = client->CheckModel();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->dialect->name, "vllm");
  EXPECT_EQ(client->dialect().name, "vllm");
  EXPECT_EQ(info->max_model_len, 1048576);
  EXPECT_EQ(info->models, std::vector<std::string>{"MiniMax-M3"});
  EXPECT_TRUE(client->CheckBudget(1048576).ok());
}

TEST(ModelClientModesTest, AutoRecognisesSglangAndGenericServices) {
  for (const std::string mode : {"sglang", "openai"}) {
    FakeModelServer server(FakeServerOptions{mode, "MiniMax-M3", 200000, "", {}});
    ASSERT_TRUE(server.started());
    auto client = Client(Options(server));
    Result<ServerInfo> info = client->CheckModel();
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->dialect->name, mode);
    EXPECT_EQ(info->max_model_len, 200000) << mode;  // max_model_len / context_length
    ChatResult r = client->Chat(Request());
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.answer.content, "Answer to: What happens in the video?");
    EXPECT_EQ(r.answer.reasoning, "Let me look at the frames first.") << mode;
    ExpectCleanRequests(server);  // the generic mode refuses chat_template_kwargs and top_k
    const json body = server.ChatLog()[0]["body"];
    EXPECT_EQ(body.contains("chat_template_kwargs"), mode == "sglang");
    EXPECT_EQ(body.contains("top_k"), mode == "sglang");
  }
}

TEST_F(ModelClientTest, UnknownModelAndTooSmallServerFailAtOnce) {
  ModelClientOptions o = Options(server_);
  o.model = "gpt-nonexistent";
  Result<ServerInfo> info = Client(o)->CheckModel();
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(info.status().message().find("gpt-nonexistent"), std::string::npos);
  EXPECT_NE(info.status().message().find("it serves: MiniMax-M3"), std::string::npos);

  FakeModelServer small(FakeServerOptions{"vllm", "MiniMax-M3", 262144, "", {}});
  auto client = Client(Options(small));
  Status budget = client->CheckBudget(1048576);
  ASSERT_FALSE(budget.ok());
  EXPECT_EQ(budget.code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(budget.message().find("1048576"), std::string::npos) << budget.message();
  EXPECT_NE(budget.message().find("262144"), std::string::npos) << budget.message();
  EXPECT_TRUE(client->CheckBudget(262144).ok());
}

TEST_F(ModelClientTest, AnswerWithUsageReasoningAndRequestId) {
  auto client = Client(Options(server_));
  ChatRequest req = Request();
  req.client_request_id = "reel-req-42";
  ChatResult r = client->Chat(req);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.answer.content, "Answer to: What happens in the video?");
  EXPECT_EQ(r.answer.reasoning, "Let me look at the frames first.");
  EXPECT_EQ(r.answer.finish_reason, "stop");
  EXPECT_FALSE(r.truncated);
  // The fake counts words plus per-message and per-prompt overheads: 2 + (3 + 5) + (3 + 5).
  EXPECT_EQ(r.answer.prompt_tokens, 18);
  EXPECT_EQ(r.answer.completion_tokens, 14);
  EXPECT_EQ(r.answer.cached_tokens, 0);
  EXPECT_EQ(r.server_request_id, "reel-req-42");
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.http_version, "1.1");
  EXPECT_GT(r.latency_s, 0);
  ExpectCleanRequests(server_);
  const json body = server_.ChatLog()[0]["body"];
  EXPECT_EQ(body["chat_template_kwargs"]["thinking_mode"], "adaptive");
  EXPECT_EQ(body["max_completion_tokens"], 256);
  EXPECT_EQ(body["top_k"], 40);
}

TEST_F(ModelClientTest, CachedTokensReportedForASharedPrefix) {
  auto client = Client(Options(server_));
  std::string long_text;
  for (int i = 0; i < 300; ++i) long_text += "word" + std::to_string(i) + " ";
  ASSERT_TRUE(client->Chat(Request(long_text + "first question")).ok());
  ChatResult second = client->Chat(Request(long_text + "second question"));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.answer.cached_tokens, 256);  // whole 128-token blocks of the shared prefix
}

TEST_F(ModelClientTest, RetriesA429AfterItsRetryAfter) {
  auto client = Client(Options(server_));
  server_.Script(R"([{"kind":"status","status":429,"headers":{"retry-after-ms":"400"}}])");
  const auto start = std::chrono::steady_clock::now();
  ChatResult r = client->Chat(Request());
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_GE(elapsed, 0.4);  // the server's hint, not the 0.01 s backoff
  ASSERT_EQ(r.retry_reasons.size(), 1u);
  EXPECT_NE(r.retry_reasons[0].find("HTTP 429"), std::string::npos);
}

TEST_F(ModelClientTest, RetriesServerErrorsUpToTheLimit) {
  auto client = Client(Options(server_));
  server_.Script(R"([{"kind":"status","status":500},{"kind":"status","status":503}])");
  ChatResult r = client->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.attempts, 3);

  server_.Script(R"([{"kind":"status","status":502,"times":3}])");
  r = client->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kServerError);
  EXPECT_EQ(r.attempts, 3);  // 1 + 2 retries (the default)
  EXPECT_NE(r.error.find("HTTP 502"), std::string::npos);
  EXPECT_NE(r.error.find("after 3 attempts"), std::string::npos);

  ModelClientOptions o = Options(server_);
  o.retry.max_retries = 0;
  server_.Script(R"([{"kind":"status","status":500}])");
  EXPECT_EQ(Client(o)->Chat(Request()).attempts, 1);
}

TEST_F(ModelClientTest, OtherClientErrorsAreNotRetried) {
  auto client = Client(Options(server_));
  server_.Script(R"([{"kind":"status","status":422}])");
  ChatResult r = client->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kRejected);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.http_status, 422);
  // The server may say otherwise: x-should-retry.
  server_.Script(R"([{"kind":"status","status":400,"headers":{"x-should-retry":"true"}}])");
  EXPECT_EQ(client->Chat(Request()).attempts, 2);
}

TEST_F(ModelClientTest, TooLongPromptInBothShapesIsReportedNotRetried) {
  auto client = Client(Options(server_));
  struct Case {
    const char* shape;
    std::optional<int64_t> output;
  };
  for (const Case& c :
       {Case{"vllm", 256}, Case{"sglang", std::nullopt}, Case{"sglang_total", 256}}) {
    server_.Reset();
    server_.Script(json::array({{{"kind", "too_long"},
                                 {"shape", c.shape},
                                 {"prompt_tokens", 1050000},
                                 {"limit", 1048576}}})
                       .dump());
    ChatResult r = client->Chat(Request());
    EXPECT_EQ(r.outcome, ChatOutcome::kTooLong) << c.shape << ": " << r.error;
    EXPECT_EQ(r.attempts, 1) << c.shape;
    EXPECT_EQ(server_.ChatLog().size(), 1u) << c.shape;
    ASSERT_TRUE(r.too_long.has_value()) << c.shape;
    EXPECT_EQ(r.too_long->prompt_tokens, 1050000) << c.shape;
    EXPECT_EQ(r.too_long->context_length, 1048576) << c.shape;
    EXPECT_EQ(r.too_long->requested_output, c.output) << c.shape;
  }
}

// Counted by the server: a prompt that does not fit its window.
TEST(ModelClientModesTest, TooLongByTheServersOwnCount) {
  for (const std::string mode : {"vllm", "sglang"}) {
    FakeModelServer server(FakeServerOptions{mode, "MiniMax-M3", 1000, "", {}});
    ASSERT_TRUE(server.started());
    auto client = Client(Options(server));
    std::string text;
    for (int i = 0; i < 1100; ++i) text += "w ";
    ChatResult r = client->Chat(Request(text));
    ASSERT_EQ(r.outcome, ChatOutcome::kTooLong) << mode << ": " << r.error;
    ASSERT_TRUE(r.too_long.has_value());
    EXPECT_EQ(r.too_long->prompt_tokens, 1100 + 2 + 3 + 5 + 3) << mode;
    EXPECT_EQ(r.too_long->context_length, 1000) << mode;
  }
}

TEST_F(ModelClientTest, StalledConnectionTimesOutAndIsRetried) {
  ModelClientOptions o = Options(server_);
  o.read_timeout_s = 0.5;
  auto client = Client(o);
  server_.Script(R"([{"kind":"stall","seconds":5}])");
  ChatResult r = client->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_NE(r.retry_reasons[0].find("read timeout"), std::string::npos) << r.retry_reasons[0];

  o.retry.max_retries = 0;
  server_.Script(R"([{"kind":"stall","seconds":5}])");
  r = Client(o)->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kTimeout);
}

TEST_F(ModelClientTest, CutAndResetConnectionsAreRetried) {
  auto client = Client(Options(server_));
  server_.Script(R"([{"kind":"cut"}])");
  ChatResult cut = client->Chat(Request());
  ASSERT_TRUE(cut.ok()) << cut.error;
  EXPECT_EQ(cut.attempts, 2);
  EXPECT_NE(cut.retry_reasons[0].find("connection cut"), std::string::npos);
  // A kept-alive connection closed before any answer: libcurl itself sends the request again
  // on a fresh connection (or we retry); either way the server sees it twice and we succeed.
  server_.Reset();
  ASSERT_TRUE(client->Chat(Request()).ok());
  server_.Script(R"([{"kind":"reset"}])");
  ChatResult reset = client->Chat(Request());
  ASSERT_TRUE(reset.ok()) << reset.error;
  EXPECT_EQ(server_.ChatLog().size(), 3u);
  ModelClientOptions o = Options(server_);
  o.retry.max_retries = 0;
  o.circuit.failure_threshold = 0;
  server_.Script(R"([{"kind":"cut"}])");
  ChatResult r = Client(o)->Chat(Request());
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.outcome, ChatOutcome::kConnection);
  EXPECT_NE(r.error.find("connection cut"), std::string::npos) << r.error;
}

TEST_F(ModelClientTest, MalformedJsonAndEmptyChoicesAreRecordedFailures) {
  auto client = Client(Options(server_));
  server_.Script(R"([{"kind":"malformed"},{"kind":"empty_choices"}])");
  ChatResult r = client->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kMalformed);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_NE(r.error.find("not a JSON object"), std::string::npos) << r.error;
  r = client->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kEmptyChoices);
  EXPECT_EQ(r.answer.prompt_tokens, 18);  // what could be read is kept
}

// The read timeout is silence, not the whole answer: a slow prefill and a slow stream whose
// gaps are each shorter than the timeout succeed however long they take in all.
TEST_F(ModelClientTest, SlowPrefillAndSlowStreamWithinTheReadTimeout) {
  ModelClientOptions o = Options(server_);
  o.read_timeout_s = 0.8;
  auto client = Client(o);
  server_.Script(R"([{"kind":"slow","seconds":0.5}])");
  ChatResult r = client->Chat(Request());
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GE(r.latency_s, 0.5);

  server_.Script(R"([{"kind":"slow_stream","chunk_delay":0.1}])");
  ChatRequest req = Request();
  req.stream = true;
  r = client->Chat(req);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.attempts, 1);
  EXPECT_GT(r.latency_s, 1.0);  // longer than the read timeout in all
  ASSERT_TRUE(r.ttft_s.has_value());
  EXPECT_LT(*r.ttft_s, r.latency_s);
}

// Chat under a watchdog: a request still running after `limit_s` is cancelled and the test
// fails, so a request that would never end fails instead of hanging the suite. `took_s`: how long
// the call ran.
ChatResult ChatWithin(ModelClient& client, const ChatRequest& request, double limit_s,
                      double* took_s, ChatObserver* observer = nullptr) {
  std::atomic<bool> cancel{false};
  std::atomic<bool> done{false};
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::thread watchdog([&] {
    while (!done.load() && elapsed() < limit_s) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!done.load()) cancel = true;
  });
  ChatResult r = client.Chat(request, &cancel, observer);
  done = true;
  watchdog.join();
  *took_s = elapsed();
  EXPECT_FALSE(cancel.load()) << "the request was still running after " << limit_s
                              << " s (cancelled by the test)";
  return r;
}

struct Collector : ChatObserver {
  std::string content, reasoning;
  int retries = 0;
  void OnContent(std::string_view t) override { content += t; }
  void OnReasoning(std::string_view t) override { reasoning += t; }
  void OnRetry(const std::string&) override {
    ++retries;
    content.clear();
    reasoning.clear();
  }
};

TEST_F(ModelClientTest, StreamingStoresTheSameResult) {
  auto client = Client(Options(server_));
  ChatRequest plain = Request();
  ChatResult a = client->Chat(plain);
  ChatRequest streamed = Request();
  streamed.stream = true;
  Collector seen;
  ChatResult b = client->Chat(streamed, nullptr, &seen);
  ASSERT_TRUE(a.ok() && b.ok()) << a.error << b.error;
  EXPECT_EQ(b.answer.content, a.answer.content);
  EXPECT_EQ(b.answer.reasoning, a.answer.reasoning);
  EXPECT_EQ(b.answer.finish_reason, a.answer.finish_reason);
  EXPECT_EQ(b.answer.prompt_tokens, a.answer.prompt_tokens);
  EXPECT_EQ(b.answer.completion_tokens, a.answer.completion_tokens);
  EXPECT_TRUE(b.answer.cached_tokens.has_value());
  EXPECT_TRUE(b.ttft_s.has_value());
  EXPECT_FALSE(a.ttft_s.has_value());
  EXPECT_EQ(seen.content, a.answer.content);
  EXPECT_EQ(seen.reasoning, a.answer.reasoning);
  EXPECT_EQ(server_.ChatLog()[1]["headers"]["accept"], "text/event-stream");
  ExpectCleanRequests(server_);
}

TEST_F(ModelClientTest, StreamCutOrErrorEventIsRetriedAndTheWatcherStartsOver) {
  auto client = Client(Options(server_));
  for (const char* kind : {"stream_cut", "stream_error"}) {
    server_.Script(json::array({{{"kind", kind}}}).dump());
    ChatRequest req = Request();
    req.stream = true;
    Collector seen;
    ChatResult r = client->Chat(req, nullptr, &seen);
    ASSERT_TRUE(r.ok()) << kind << ": " << r.error;
    EXPECT_EQ(r.attempts, 2) << kind;
    EXPECT_EQ(seen.retries, 1) << kind;
    EXPECT_EQ(seen.content, r.answer.content) << kind;
  }
}

// The connection broke after the last event: the answer is whole and is kept, not asked again.
TEST_F(ModelClientTest, CompleteStreamThenCutIsAnAnswer) {
  auto client = Client(Options(server_));
  server_.Script(R"([{"kind":"stream_done_then_cut"}])");
  ChatRequest req = Request();
  req.stream = true;
  ChatResult r = client->Chat(req);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.answer.content, "Answer to: What happens in the video?");
}

// An endless stream (valid deltas, never [DONE]) is cut at the same size cap as a whole answer,
// instead of growing the answer in memory without end.
TEST_F(ModelClientTest, EndlessStreamIsCutAtTheAnswerSizeCap) {
  ModelClientOptions o = Options(server_);
  o.max_response_bytes = int64_t{1} << 20;
  auto client = Client(o);
  server_.Script(R"([{"kind":"endless_stream","chunk_bytes":1000}])");
  ChatRequest req = Request();
  req.stream = true;
  Collector seen;
  double took = 0;
  ChatResult r = ChatWithin(*client, req, 20, &took, &seen);
  EXPECT_EQ(r.outcome, ChatOutcome::kMalformed) << r.error;
  EXPECT_NE(r.error.find("too large"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("1 MiB"), std::string::npos) << r.error;
  EXPECT_EQ(r.attempts, 1);  // the same body again would be as large: not retried
  EXPECT_LE(seen.content.size(), size_t{1} << 20);
  EXPECT_GT(seen.content.size(), size_t{512} << 10);  // it did stream until the cap
  EXPECT_LT(took, 10);
}

// Every request has an overall deadline (request_timeout_s): an endless stream that is slow
// enough to stay under the size cap, and a server that sends a byte now and then so the read
// timeout (silence) never fires, both end there; the deadline is not retried.
TEST_F(ModelClientTest, EndlessStreamAndTrickleEndAtTheRequestTimeout) {
  ModelClientOptions o = Options(server_);
  o.read_timeout_s = 1;
  o.request_timeout_s = 1.5;
  auto client = Client(o);
  server_.Script(R"([{"kind":"endless_stream","chunk_bytes":10,"chunk_delay":0.05}])");
  ChatRequest req = Request();
  req.stream = true;
  double took = 0;
  ChatResult r = ChatWithin(*client, req, 15, &took);
  EXPECT_EQ(r.outcome, ChatOutcome::kTimeout) << r.error;
  EXPECT_NE(r.error.find("model.request_timeout"), std::string::npos) << r.error;
  EXPECT_EQ(r.attempts, 1);
  EXPECT_GE(took, 1.4);
  EXPECT_LT(took, 4);

  server_.Script(R"([{"kind":"trickle","interval":0.2}])");
  r = ChatWithin(*client, Request(), 15, &took);  // not streamed: one byte every 0.2 s
  EXPECT_EQ(r.outcome, ChatOutcome::kTimeout) << r.error;
  EXPECT_NE(r.error.find("not complete after 1.5 s"), std::string::npos) << r.error;
  EXPECT_EQ(r.attempts, 1);
  EXPECT_GE(took, 1.4);
  EXPECT_LT(took, 4);

  // The deadline covers the attempts together: a read timeout (1 s) and its retry (cut at the
  // 0.5 s left) end at 1.5 s, not 2 s.
  server_.Script(R"([{"kind":"stall","seconds":5,"times":2}])");
  r = ChatWithin(*client, Request(), 15, &took);
  EXPECT_EQ(r.outcome, ChatOutcome::kTimeout) << r.error;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_LT(took, 1.5 + 0.5);
}

// Read timeouts count toward the circuit: a server that accepts and stalls pauses the run and,
// past the circuit's limit, the waiting requests fail as `server down` instead of each one
// waiting out its read timeouts (with the default 3600 s, days for a 450-question run).
TEST_F(ModelClientTest, AStalledServerOpensTheCircuit) {
  std::vector<std::string> events;
  std::mutex events_mutex;
  ModelClientOptions o = Options(server_);
  o.read_timeout_s = 0.3;
  o.retry.max_retries = 1;
  o.circuit = {/*failure_threshold=*/3, /*first_pause_s=*/0.2, /*max_pause_s=*/0.4,
               /*give_up_after_s=*/1.0};
  o.on_event = [&](const std::string& e) {
    std::lock_guard<std::mutex> lock(events_mutex);
    events.push_back(e);
  };
  auto client = Client(o);
  server_.Script(R"([{"kind":"stall","seconds":3,"times":1000}])");
  const auto start = std::chrono::steady_clock::now();
  std::vector<ChatResult> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = client->Chat(Request("q" + std::to_string(i))); });
  }
  for (auto& t : threads) t.join();
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(client->circuit().times_opened(), 1);
  int down = 0;
  for (const ChatResult& r : results) down += r.outcome == ChatOutcome::kServerDown;
  EXPECT_GE(down, 1);
  EXPECT_LT(took, 6);
  bool paused = false;
  for (const auto& e : events) paused = paused || e.find("read timeout") != std::string::npos;
  EXPECT_TRUE(paused);
}

// ... but one slow answer, timing out on every attempt, does not open it: it fails on its own
// (kTimeout) and the next request goes out at once.
TEST_F(ModelClientTest, OneSlowAnswerDoesNotOpenTheCircuit) {
  ModelClientOptions o = Options(server_);
  o.read_timeout_s = 0.2;
  o.retry.max_retries = 4;
  o.circuit.failure_threshold = 2;
  auto client = Client(o);
  server_.Script(R"([{"kind":"stall","seconds":3,"times":5}])");
  ChatResult r = client->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kTimeout) << r.error;
  EXPECT_EQ(r.attempts, 5);
  EXPECT_EQ(client->circuit().times_opened(), 0);
  EXPECT_TRUE(client->Chat(Request()).ok());
}

// Some OpenAI-compatible servers ignore `stream`: a complete JSON answer to a streamed request
// is the answer (not a connection error asked three times), and the watcher is shown it.
TEST_F(ModelClientTest, AJsonAnswerToAStreamedRequestIsAccepted) {
  auto client = Client(Options(server_));
  server_.Script(R"([{"kind":"ignore_stream"}])");
  ChatRequest req = Request();
  req.stream = true;
  Collector seen;
  ChatResult r = client->Chat(req, nullptr, &seen);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(r.answer.content, "Answer to: What happens in the video?");
  EXPECT_EQ(r.answer.reasoning, "Let me look at the frames first.");
  EXPECT_EQ(r.answer.completion_tokens, 14);
  EXPECT_EQ(seen.content, r.answer.content);
  EXPECT_EQ(seen.reasoning, r.answer.reasoning);
  EXPECT_EQ(server_.ChatLog()[0]["body"]["stream"], true);
  // An error document in a 200 is still the server's error (retried as one).
  server_.Script(R"([{"kind":"status","status":200,"body":{"error":{"message":"engine died"}}}])");
  r = client->Chat(req);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.retry_reasons.size(), 1u);
  EXPECT_EQ(r.retry_reasons[0], "server error: engine died");
}

// Why the server could not be used, said with the URL tried and what to change.
TEST(ModelClientEndpointTest, FailuresSayTheUrlTheCauseAndAHint) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  auto check = [](ModelClientOptions o) {
    o.retry.max_retries = 0;
    auto client = Client(o);
    Result<ServerInfo> info = client->CheckModel();
    EXPECT_FALSE(info.ok());
    return info.ok() ? std::string() : info.status().message();
  };
  ModelClientOptions o = Options(server);
  // https:// against a plain HTTP server.
  o.endpoint = "https://" + host + "/v1";
  std::string m = check(o);
  EXPECT_NE(m.find("https://" + host + "/v1/models"), std::string::npos) << m;
  EXPECT_NE(m.find("if the server speaks plain HTTP, use http://" + host + "/v1"),
            std::string::npos)
      << m;
  // The wrong API version.
  o.endpoint = "http://" + host + "/v2";
  m = check(o);
  EXPECT_NE(m.find("HTTP 404 Not Found"), std::string::npos) << m;
  EXPECT_NE(m.find("no model list at http://" + host + "/v2/models"), std::string::npos) << m;
  EXPECT_NE(m.find("(perhaps http://" + host + "/v1)"), std::string::npos) << m;
  // A route instead of the base: refused before anything is sent.
  o.endpoint = "http://" + host + "/v1/chat/completions";
  Result<std::unique_ptr<ModelClient>> made = ModelClient::Create(o);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(made.status().message().find("drop /chat/completions: the endpoint is the API base, "
                                         "http://" +
                                         host + "/v1"),
            std::string::npos)
      << made.status().message();
  EXPECT_TRUE(server.ChatLog().empty());
  // Nothing listening.
  int port = 0;
  {
    FakeModelServer gone;
    port = gone.port();
  }
  o.endpoint = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  m = check(o);
  EXPECT_NE(m.find("cannot reach the model server at http://127.0.0.1:" + std::to_string(port) +
                   "/v1/models"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("nothing listens at 127.0.0.1:" + std::to_string(port)), std::string::npos) << m;
}

// A redirect is named with where it points (it was "HTTP 302: HTTP 302").
TEST(ModelClientEndpointTest, ARedirectNamesItsLocation) {
  FakeModelServer server(
      FakeServerOptions{"vllm", "MiniMax-M3", 1048576, "", {"--redirect-to", "https://gpu:8443"}});
  ASSERT_TRUE(server.started());
  ModelClientOptions o = Options(server);
  o.retry.max_retries = 0;
  Result<ServerInfo> info = Client(o)->CheckModel();
  ASSERT_FALSE(info.ok());
  const std::string& m = info.status().message();
  EXPECT_NE(m.find("HTTP 302 Found: redirected to https://gpu:8443/v1/models"), std::string::npos)
      << m;
  EXPECT_NE(m.find("set the endpoint to https://gpu:8443/v1"), std::string::npos) << m;
  EXPECT_EQ(m.find("HTTP 302: HTTP 302"), std::string::npos) << m;
  o.dialect = "vllm";  // no model check: the chat request itself is redirected
  ChatResult r = Client(o)->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kRejected);
  EXPECT_EQ(r.http_status, 302);
  EXPECT_NE(r.error.find("redirected to https://gpu:8443/v1/chat/completions"), std::string::npos)
      << r.error;
}

TEST(EndpointUrlTest, ChecksAndHints) {
  EXPECT_TRUE(CheckEndpointUrl("http://localhost:8000/v1").ok());
  EXPECT_TRUE(CheckEndpointUrl("https://api.example.com/v1/").ok());
  EXPECT_TRUE(CheckEndpointUrl("http://gpu:8000").ok());
  for (const char* route : {"/chat/completions", "/completions", "/models"}) {
    Status s = CheckEndpointUrl(std::string("http://gpu:8000/v1") + route + "/");
    ASSERT_FALSE(s.ok()) << route;
    EXPECT_NE(s.message().find(std::string("drop ") + route +
                               ": the endpoint is the API base, "
                               "http://gpu:8000/v1"),
              std::string::npos)
        << s.message();
  }
  Status bare = CheckEndpointUrl("http://gpu:8000/chat/completions");
  EXPECT_NE(bare.message().find("API base, http://gpu:8000/v1"), std::string::npos)
      << bare.message();
  EXPECT_FALSE(CheckEndpointUrl("gpu:8000/v1").ok());
  EXPECT_FALSE(CheckEndpointUrl("http:///v1").ok());
  EXPECT_EQ(HostAndPort("https://user:pw@gpu/v1"), "gpu:443");
  EXPECT_EQ(HostAndPort("http://[::1]:8000/v1"), "[::1]:8000");
  EXPECT_EQ(HostAndPort("http://gpu/v1"), "gpu:80");
  HttpResponse redirect;
  redirect.status = 301;
  redirect.headers = {{"location", "/api/v1/models"}};
  EXPECT_EQ(EndpointHint("http://gpu:8000/v1", redirect),
            "Reel does not follow redirects: set the endpoint to http://gpu:8000/api/v1");
  HttpResponse refused;
  refused.error = TransportError::kConnect;
  refused.connect_failure = ConnectFailure::kRefused;
  EXPECT_EQ(EndpointHint("https://gpu/v1", refused),
            "nothing listens at gpu:443: is the server running, and on that port?");
}

TEST_F(ModelClientTest, StructuredAnswerIsCheckedAgainstTheSchema) {
  auto client = Client(Options(server_));
  ChatRequest req = Request();
  req.json_schema = R"({"type":"object","properties":{"people":{"type":"integer"},
    "summary":{"type":"string"}},"required":["people","summary"],"additionalProperties":false})";
  ChatResult r = client->Chat(req);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(json::parse(r.json_answer), json::parse(R"({"people":1,"summary":"text"})"));
  EXPECT_EQ(server_.ChatLog()[0]["body"]["response_format"]["json_schema"]["schema"]["required"],
            json::parse(R"(["people","summary"])"));

  server_.Script(R"([{"kind":"content","content":"{\"people\":\"two\",\"summary\":\"x\"}"},
                     {"kind":"content","content":"{\"people\":2,","finish_reason":"length"}])");
  r = client->Chat(req);
  EXPECT_EQ(r.outcome, ChatOutcome::kSchemaMismatch);
  EXPECT_NE(r.error.find("$.people: expected integer, got string"), std::string::npos) << r.error;
  EXPECT_EQ(r.answer.content, R"({"people":"two","summary":"x"})");  // kept for the record
  r = client->Chat(req);
  EXPECT_EQ(r.outcome, ChatOutcome::kSchemaMismatch);
  EXPECT_TRUE(r.truncated);
  EXPECT_NE(r.error.find("cut by max_completion_tokens"), std::string::npos) << r.error;
}

TEST_F(ModelClientTest, LengthFinishIsFlagged) {
  auto client = Client(Options(server_));
  server_.Script(R"([{"kind":"content","content":"The video shows","finish_reason":"length"}])");
  ChatResult r = client->Chat(Request());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.truncated);
}

TEST(ModelClientKeyTest, KeyOnlyInTheAuthorizationHeaderAndNeverInMessages) {
  const std::string key = "sk-reel-test-9f8e7d6c5b4a";
  FakeModelServer server(FakeServerOptions{"vllm", "MiniMax-M3", 1048576, key, {}});
  ASSERT_TRUE(server.started());
  std::vector<std::string> events;
  ModelClientOptions o = Options(server);
  o.api_key = ApiKey::FromSecret(key);
  o.on_event = [&](const std::string& e) { events.push_back(e); };
  auto client = Client(o);
  ASSERT_TRUE(client->CheckModel().ok());
  ASSERT_TRUE(client->Chat(Request()).ok());
  ASSERT_TRUE(client->CountPromptTokens(Request()).ok());
  ExpectCleanRequests(server);  // right header, and the key nowhere else in the requests

  // A server that echoes the key back in its errors: recorded redacted.
  server.Script(R"([{"kind":"echo_key"},{"kind":"status","status":500,"times":3,
    "body":{"error":{"message":"upstream said Bearer sk-reel-test-9f8e7d6c5b4a"}}}])");
  std::vector<ChatResult> results = {client->Chat(Request()), client->Chat(Request())};
  for (const ChatResult& r : results) {
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.error.find(key), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("[redacted]"), std::string::npos) << r.error;
    for (const auto& reason : r.retry_reasons) EXPECT_EQ(reason.find(key), std::string::npos);
  }
  ASSERT_FALSE(events.empty());
  for (const auto& e : events) EXPECT_EQ(e.find(key), std::string::npos) << e;

  // Without the key (or with a wrong one) the server refuses; the message says so, no key.
  ModelClientOptions wrong = Options(server);
  wrong.api_key = ApiKey::FromSecret("sk-wrong-key-123456");
  Result<ServerInfo> info = Client(wrong)->CheckModel();
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("refused the API key"), std::string::npos);
  EXPECT_EQ(info.status().message().find("sk-wrong-key-123456"), std::string::npos);
  ChatResult r = Client(wrong)->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kRejected);
  EXPECT_EQ(r.http_status, 401);
}

TEST(ModelClientKeyTest, KeyFromTheNamedVariable) {
  ::setenv("REEL_TEST_KEY_VAR", "sk-from-env\n", 1);
  Result<ApiKey> key = ApiKey::FromEnvironment("REEL_TEST_KEY_VAR");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->AuthorizationHeader(), "Authorization: Bearer sk-from-env");
  EXPECT_EQ(key->Describe(), "set (from $REEL_TEST_KEY_VAR)");
  EXPECT_EQ(key->Redact("x sk-from-env y"), "x [redacted] y");
  ::unsetenv("REEL_TEST_KEY_VAR");
  Result<ApiKey> missing = ApiKey::FromEnvironment("REEL_TEST_KEY_VAR");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("$REEL_TEST_KEY_VAR is not set"), std::string::npos);
  EXPECT_TRUE(ApiKey::FromEnvironment("")->empty());
}

// While the server is down, requests wait for it instead of failing, without using up their
// retries; when it answers again they all go on.
TEST_F(ModelClientTest, CircuitPausesTheRunWhileTheServerIsDown) {
  std::vector<std::string> events;
  std::mutex events_mutex;
  ModelClientOptions o = Options(server_);
  o.retry.max_retries = 1;
  o.circuit.failure_threshold = 2;
  o.circuit.first_pause_s = 0.2;
  o.circuit.max_pause_s = 0.4;
  o.on_event = [&](const std::string& e) {
    std::lock_guard<std::mutex> lock(events_mutex);
    events.push_back(e);
  };
  auto client = Client(o);
  server_.Script(R"([{"kind":"down","seconds":1.5,"status":503}])");
  std::vector<ChatResult> results(6);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = client->Chat(Request("q" + std::to_string(i))); });
  }
  for (auto& t : threads) t.join();
  for (const ChatResult& r : results) {
    EXPECT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.answer.content.rfind("Answer to: q", 0), 0u);
  }
  EXPECT_GE(client->circuit().times_opened(), 1);
  EXPECT_FALSE(client->circuit().open());
  bool paused = false, resumed = false;
  for (const auto& e : events) {
    paused = paused || e.find("pausing all requests") != std::string::npos;
    resumed = resumed || e.find("resuming") != std::string::npos;
  }
  EXPECT_TRUE(paused && resumed);
}

TEST(ModelClientDownTest, NoServerFailsAfterRetriesOrTheCircuitsLimit) {
  int port = 0;
  {
    FakeModelServer gone;
    port = gone.port();
  }  // stopped: nothing listens there now
  ModelClientOptions o;
  o.endpoint = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  o.dialect = "vllm";
  o.retry.initial_delay_s = 0.01;
  o.circuit.failure_threshold = 0;  // no circuit
  ChatResult r = Client(o)->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kConnection);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_NE(r.error.find("connection failed"), std::string::npos) << r.error;

  o.circuit = {/*failure_threshold=*/1, /*first_pause_s=*/0.05, /*max_pause_s=*/0.1,
               /*give_up_after_s=*/0.5};
  r = Client(o)->Chat(Request());
  EXPECT_EQ(r.outcome, ChatOutcome::kServerDown);
  EXPECT_NE(r.error.find("unreachable"), std::string::npos) << r.error;

  Result<ServerInfo> info = Client(o)->CheckModel();
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(info.status().message().find("cannot reach the model server"), std::string::npos);
}

TEST_F(ModelClientTest, RateLimitSpacesRequests) {
  testing::FakeClock clock;
  ModelClientOptions o = Options(server_);
  o.clock = &clock;
  o.rate_limit.requests_per_minute = 6;  // one every 10 s, a bucket of one
  auto client = Client(o);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->Chat(Request()).ok());
  const std::vector<double> sleeps = clock.sleeps();
  ASSERT_EQ(sleeps.size(), 2u);
  EXPECT_NEAR(sleeps[0] + sleeps[1], 20, 0.5);
}

TEST_F(ModelClientTest, ServerTokenCount) {
  auto client = Client(Options(server_));
  ASSERT_TRUE(client->CheckModel().ok());
  Result<int64_t> count = client->CountPromptTokens(Request());
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, 18);
  ExpectCleanRequests(server_);

  FakeModelServer hosted(FakeServerOptions{"openai", "MiniMax-M3", 1048576, "", {}});
  auto generic = Client(Options(hosted));
  ASSERT_TRUE(generic->CheckModel().ok());
  EXPECT_EQ(generic->CountPromptTokens(Request()).status().code(), ErrorCode::kUnsupported);
}

TEST_F(ModelClientTest, CancelStopsAWaitingRequest) {
  auto client = Client(Options(server_));
  server_.Script(R"([{"kind":"stall","seconds":5}])");
  std::atomic<bool> cancel{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const auto start = std::chrono::steady_clock::now();
  ChatResult r = client->Chat(Request(), &cancel);
  stopper.join();
  EXPECT_EQ(r.outcome, ChatOutcome::kCancelled);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
}

TEST_F(ModelClientTest, ManyConcurrentRequestsOverKeptAliveConnections) {
  ModelClientOptions o = Options(server_);
  o.max_connections = 4;
  auto client = Client(o);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) ok += client->Chat(Request("t" + std::to_string(t))).ok();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 48);
  std::set<int> ports;
  for (const auto& e : server_.ChatLog()) ports.insert(e["client_port"].get<int>());
  EXPECT_LE(ports.size(), 4u);  // at most max_connections, reused
  EXPECT_EQ(server_.ChatLog().size(), 48u);
}

}  // namespace
}  // namespace reel::llm
