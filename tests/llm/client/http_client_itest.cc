// The transport: request bodies streamed from a BodySource (large, chunked, failing), and the
// HTTP client's own behaviour, against the fake server.
#include "llm/client/http_client.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "llm/client/model_client.h"
#include "tests/support/fake_model_server.h"

namespace reel::llm {
namespace {

using nlohmann::json;
using reel::testing::FakeModelServer;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("reel_http_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// A JPEG-looking file of `n` bytes.
std::string WriteJpegLike(const std::string& name, size_t n) {
  const std::string path = TempPath(name);
  std::mt19937 rng(5);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  bytes[0] = '\xff';
  bytes[1] = '\xd8';
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// messages = [{"role":"user","content":[image parts..., {"type":"text","text":...}]}]
std::shared_ptr<ComposedBody> ImageMessages(const std::vector<std::string>& paths) {
  auto m = std::make_shared<ComposedBody>();
  m->AddText(R"([{"role":"user","content":[)");
  for (const std::string& p : paths) {
    m->AddText(R"({"type":"image_url","image_url":{"url":"data:image/jpeg;base64,)");
    EXPECT_TRUE(m->AddBase64OfFile(p).ok());
    m->AddText(R"("}},)");
  }
  m->AddText(R"({"type":"text","text":"Describe the frames."}]}])");
  return m;
}

long MaxRssKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

std::unique_ptr<ModelClient> Client(const FakeModelServer& server) {
  ModelClientOptions o;
  o.endpoint = server.endpoint();
  o.dialect = "vllm";
  o.retry.initial_delay_s = 0.01;
  return std::move(ModelClient::Create(o)).value();
}

// A 36 MB request (three 9 MB frames as base64) goes out from the files while it is sent: the
// server receives every byte intact, and this process never holds the body.
TEST(HttpClientTest, LargeBodyIsStreamedFromFiles) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    paths.push_back(WriteJpegLike("frame" + std::to_string(i) + ".jpg", 9'000'000));
  }
  auto client = Client(server);
  ChatRequest req;
  req.messages = ImageMessages(paths);
  req.max_completion_tokens = 100;
  const long rss_before = MaxRssKiB();
  ChatResult r = client->Chat(req);
  const long rss_growth_mib = (MaxRssKiB() - rss_before) / 1024;
  ASSERT_TRUE(r.ok()) << r.error;
  const json log = json::parse(server.Log());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_TRUE(log[0]["shape_errors"].empty()) << log[0]["shape_errors"].dump();
  EXPECT_EQ(log[0]["counts"]["images"], 3);
  EXPECT_EQ(log[0]["counts"]["jpeg"], 3);
  EXPECT_EQ(log[0]["counts"]["media_bytes"], 27'000'000);
  EXPECT_EQ(log[0]["body_bytes"].get<int64_t>(), r.request_bytes);
  EXPECT_GT(r.request_bytes, 36'000'000);
  EXPECT_EQ(r.answer.prompt_tokens, 2 + 3 + 3 * 720 + 3);
  EXPECT_LT(rss_growth_mib, 16) << "the body was held in memory";
  for (const auto& p : paths) std::filesystem::remove(p);
}

// A source that does not know its size is sent with chunked transfer encoding.
class UnsizedBody final : public BodySource {
 public:
  explicit UnsizedBody(std::string text) : inner_(std::move(text)) {}
  int64_t Size() const override { return -1; }
  std::unique_ptr<BodyReader> Open() const override { return inner_.Open(); }

 private:
  StringBody inner_;
};

TEST(HttpClientTest, UnsizedBodyGoesChunked) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  auto client = Client(server);
  ChatRequest req;
  req.messages = std::make_shared<UnsizedBody>(R"([{"role":"user","content":"chunked hello"}])");
  ChatResult r = client->Chat(req);
  ASSERT_TRUE(r.ok()) << r.error;
  const json log = json::parse(server.Log());
  EXPECT_EQ(log[0]["headers"]["transfer-encoding"], "chunked");
  EXPECT_EQ(r.answer.content, "Answer to: chunked hello");
}

// A frame file that disappears after the request was built fails that request at once, named,
// without retries (sending it again cannot help).
TEST(HttpClientTest, VanishedBodyFileFailsTheRequestOnly) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string path = WriteJpegLike("vanish.jpg", 300'000);
  auto client = Client(server);
  ChatRequest req;
  req.messages = ImageMessages({path});
  std::filesystem::remove(path);
  ChatResult r = client->Chat(req);
  EXPECT_EQ(r.outcome, ChatOutcome::kBadRequest);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_NE(r.error.find("vanish.jpg"), std::string::npos) << r.error;
  // The client goes on with the next request.
  ChatRequest next;
  next.messages = std::make_shared<StringBody>(R"([{"role":"user","content":"next"}])");
  EXPECT_TRUE(client->Chat(next).ok());
}

TEST(HttpClientTest, DirectUseAndShutdownWithTransfersInFlight) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  auto http = std::move(HttpClient::Create()).value();
  HttpRequest get;
  get.url = server.endpoint() + "/models";
  HttpResponse r = http->Perform(get);
  ASSERT_TRUE(r.transport_ok()) << r.error_message;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("content-type"), "application/json");
  EXPECT_NE(r.body.find("\"owned_by\": \"vllm\""), std::string::npos);

  // Destroying the client cancels what is still running and waits for it.
  server.Script(R"([{"kind":"stall","seconds":5}])");
  HttpRequest stalled;
  stalled.method = "POST";
  stalled.url = server.endpoint() + "/chat/completions";
  StringBody body(R"({"model":"MiniMax-M3","messages":[{"role":"user","content":"x"}],)"
                  R"("max_completion_tokens":5})");
  stalled.body = &body;
  HttpResponse stalled_response;
  std::thread caller([&] { stalled_response = http->Perform(stalled); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(http->InFlight(), 1);
  const auto start = std::chrono::steady_clock::now();
  http.reset();
  caller.join();
  EXPECT_EQ(stalled_response.error, TransportError::kCancelled);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}

// At most max_connections transfers run at once; the others wait for a free connection, and
// every connection is kept alive for the next request.
TEST(HttpClientTest, BoundedPoolOfKeptAliveConnections) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  HttpClient::Options options;
  options.max_connections = 2;
  auto http = std::move(HttpClient::Create(options)).value();
  server.Script(R"([{"kind":"slow","seconds":0.3,"times":6}])");
  const std::string body_text =
      R"({"model":"MiniMax-M3","messages":[{"role":"user","content":"x"}],)"
      R"("max_completion_tokens":5})";
  std::atomic<int> ok{0}, peak{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      StringBody body(body_text);
      HttpRequest post;
      post.method = "POST";
      post.url = server.endpoint() + "/chat/completions";
      post.body = &body;
      HttpResponse r = http->Perform(post);
      ok += r.status == 200;
    });
  }
  for (int i = 0; i < 20; ++i) {
    peak = std::max(peak.load(), http->InFlight());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 6);
  EXPECT_EQ(peak.load(), 2);
  std::set<int> ports;
  for (const auto& e : json::parse(server.Log())) ports.insert(e["client_port"].get<int>());
  EXPECT_EQ(ports.size(), 2u);
}

}  // namespace
}  // namespace reel::llm
