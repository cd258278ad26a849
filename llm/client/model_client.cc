#include "llm/client/model_client.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>

#include "llm/client/client_clock.h"
#include "llm/client/endpoint_url.h"
#include "llm/client/http_client.h"
#include "llm/client/json_schema.h"
#include "llm/client/request_runner.h"
#include "llm/client/server_error.h"
#include "llm/client/utf8_text.h"

namespace reel::llm {
namespace {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

// Feeds a streamed body to the chat parser and notes when the first token came.
class StreamSink final : public ResponseSink {
 public:
  StreamSink(const Dialect& dialect, ChatObserver* observer)
      : parser_(dialect, observer), started_(SteadyClock::now()) {}
  bool OnData(std::string_view bytes) override {
    const bool ok = parser_.Feed(bytes);
    if (!ttft_ && parser_.got_first_token()) {
      ttft_ = std::chrono::duration<double>(SteadyClock::now() - started_).count();
    }
    return ok;
  }
  ChatStreamParser& parser() { return parser_; }
  std::optional<double> ttft() const { return ttft_; }

 private:
  ChatStreamParser parser_;
  SteadyClock::time_point started_;
  std::optional<double> ttft_;
};

}  // namespace

const char* ChatOutcomeName(ChatOutcome outcome) {
  switch (outcome) {
    case ChatOutcome::kOk:
      return "ok";
    case ChatOutcome::kTooLong:
      return "prompt too long";
    case ChatOutcome::kRejected:
      return "rejected";
    case ChatOutcome::kServerError:
      return "server error";
    case ChatOutcome::kTimeout:
      return "timeout";
    case ChatOutcome::kConnection:
      return "connection error";
    case ChatOutcome::kMalformed:
      return "malformed response";
    case ChatOutcome::kEmptyChoices:
      return "empty choices";
    case ChatOutcome::kSchemaMismatch:
      return "schema mismatch";
    case ChatOutcome::kServerDown:
      return "server down";
    case ChatOutcome::kCancelled:
      return "cancelled";
    case ChatOutcome::kBadRequest:
      return "bad request";
  }
  return "failed";
}

void FinishAnswer(const ChatAnswer& answer, const JsonSchema* schema, ChatResult* result) {
  result->answer = answer;
  result->truncated = answer.finish_reason == "length";
  result->outcome = ChatOutcome::kOk;
  result->error.clear();
  if (schema == nullptr) return;
  const std::string cut = result->truncated ? " (cut by max_completion_tokens)" : "";
  Result<std::string> answer_json = ExtractJsonAnswer(answer.content);
  if (!answer_json.ok()) {
    result->outcome = ChatOutcome::kSchemaMismatch;
    result->error = "the answer is not JSON" + cut;
    return;
  }
  if (Status valid = schema->Validate(*answer_json); !valid.ok()) {
    result->outcome = ChatOutcome::kSchemaMismatch;
    result->error = "the answer does not match the schema: " + valid.message() + cut;
    return;
  }
  result->json_answer = std::move(answer_json).value();
}

struct ModelClient::Impl {
  ModelClientOptions options;
  std::string base;  // ".../v1"
  std::string root;  // without "/v1"
  std::unique_ptr<HttpClient> http;
  RequestRunner runner;  // the retries, the rate limit and the circuit of chat requests

  std::mutex mutex;  // guards the fields below
  const Dialect* dialect = nullptr;
  bool dialect_resolved = false;
  std::optional<ServerInfo> info;
  std::mt19937_64 rng{std::random_device{}()};

  Impl(ModelClientOptions o) : options(std::move(o)), runner(RunnerOptions(options)) {}

  static RequestRunnerOptions RunnerOptions(const ModelClientOptions& o) {
    RequestRunnerOptions r;
    r.request_timeout_s = o.request_timeout_s;
    r.request_timeout_setting = "model.request_timeout";
    r.retry = o.retry;
    r.rate_limit = o.rate_limit;
    r.circuit = o.circuit;
    r.clock = o.clock;
    r.api_key = o.api_key;
    r.on_event = o.on_event;
    return r;
  }

  void Event(const std::string& message) {
    if (options.on_event) options.on_event(options.api_key.Redact(message));
  }

  double Random() {
    std::lock_guard<std::mutex> lock(mutex);
    return std::uniform_real_distribution<double>(0, 1)(rng);
  }

  const Dialect& CurrentDialect() {
    std::lock_guard<std::mutex> lock(mutex);
    return *dialect;
  }

  HttpRequest MakeRequest(const std::string& method, const std::string& url,
                          const std::atomic<bool>* cancel,
                          const char* accept = "application/json") const {
    HttpRequest r;
    r.method = method;
    r.url = url;
    r.api_key = options.api_key;
    r.connect_timeout_s = options.connect_timeout_s;
    r.idle_timeout_s = options.read_timeout_s;
    r.total_timeout_s = options.request_timeout_s;
    r.cancel = cancel;
    r.headers = options.extra_headers;
    r.headers.push_back(std::string("Accept: ") + accept);
    if (method == "POST") r.headers.push_back("Content-Type: application/json");
    return r;
  }

  // A small request (models, tokenize) with the standard retries; no circuit, no rate limit.
  HttpResponse Exchange(HttpRequest request) {
    for (int retry = 0;; ++retry) {
      HttpResponse r = http->Perform(request);
      bool retryable = false;
      if (!r.transport_ok()) {
        retryable =
            r.error != TransportError::kCancelled && r.error != TransportError::kBodyFailed &&
            r.error != TransportError::kTooLarge && r.error != TransportError::kTotalTimeout;
      } else {
        retryable = ShouldRetryHeader(r).value_or(IsRetryableStatus(r.status));
      }
      if (!retryable || retry >= options.retry.max_retries) return r;
      const auto hint =
          ParseRetryAfter(r.Header("retry-after-ms"), r.Header("retry-after"), std::time(nullptr));
      const double wait = RetryDelaySeconds(options.retry, retry, hint, Random());
      Event("retrying " + request.url + " in " + WaitText(wait) + ": " + Describe(r));
      if (!options.clock->SleepUntil(options.clock->Now() + wait, request.cancel)) return r;
    }
  }

  std::string Describe(const HttpResponse& r) const {
    if (!r.transport_ok()) {
      return options.api_key.Redact(std::string(TransportErrorName(r.error)) + ": " +
                                    r.error_message);
    }
    return options.api_key.Redact(HttpFailureText(r));
  }

  Result<ServerInfo> CheckModel();
  ChatResult Chat(const ChatRequest& request, const std::atomic<bool>* cancel,
                  ChatObserver* observer);
};

ModelClient::ModelClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModelClient::~ModelClient() = default;

Result<std::unique_ptr<ModelClient>> ModelClient::Create(ModelClientOptions options) {
  if (options.endpoint.empty()) return InvalidArgument("no model endpoint given");
  REEL_RETURN_IF_ERROR(CheckEndpointUrl(options.endpoint));
  if (options.model.empty()) return InvalidArgument("no model name given");
  if (options.clock == nullptr) options.clock = ClientClock::Real();
  const std::string dialect_name = options.dialect.empty() ? "auto" : options.dialect;
  auto impl = std::make_unique<Impl>(std::move(options));
  impl->base = NormalizeEndpoint(impl->options.endpoint);
  impl->root = ServerRoot(impl->base);
  if (dialect_name == "auto") {
    impl->dialect = &OpenAiDialect();
  } else {
    REEL_ASSIGN_OR_RETURN(impl->dialect, DialectByName(dialect_name));
    impl->dialect_resolved = true;
  }
  HttpClient::Options http_options;
  http_options.max_connections = std::max(1, impl->options.max_connections);
  http_options.user_agent = "reel/0.1";
  http_options.max_response_bytes = impl->options.max_response_bytes;
  REEL_ASSIGN_OR_RETURN(impl->http, HttpClient::Create(http_options));
  return std::unique_ptr<ModelClient>(new ModelClient(std::move(impl)));
}

const Dialect& ModelClient::dialect() const { return impl_->CurrentDialect(); }
const std::string& ModelClient::endpoint() const { return impl_->base; }
const CircuitBreaker& ModelClient::circuit() const { return impl_->runner.circuit(); }

Result<ServerInfo> ModelClient::CheckModel() { return impl_->CheckModel(); }

Result<ServerInfo> ModelClient::Impl::CheckModel() {
  const std::string url = base + "/models";
  HttpResponse r = Exchange(MakeRequest("GET", url, nullptr));
  // The cause as libcurl or the server said it, then what to change where that is clear.
  auto with_hint = [&](std::string message) {
    const std::string hint = EndpointHint(base, r);
    return hint.empty() ? message : message + "; " + hint;
  };
  if (!r.transport_ok()) {
    return Unavailable(with_hint("cannot reach the model server at " + url + ": " + Describe(r)));
  }
  if (r.status == 401 || r.status == 403) {
    return InvalidArgument(url + ": the server refused the API key (" + options.api_key.Describe() +
                           "): " + Describe(r));
  }
  if (r.status != 200) return Unavailable(with_hint(url + ": " + Describe(r)));
  const json doc = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("data") || !doc["data"].is_array()) {
    return CorruptData(url +
                       ": the answer is not a model list (is the endpoint the server's "
                       "OpenAI-compatible API base, usually ending in /v1?)");
  }
  ServerInfo out;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!dialect_resolved) {
      dialect = &DetectDialect(r.body);
      dialect_resolved = true;
    }
    out.dialect = dialect;
  }
  const json* card = nullptr;
  for (const auto& c : doc["data"]) {
    if (!c.is_object() || !c.contains("id") || !c["id"].is_string()) continue;
    out.models.push_back(c["id"].get<std::string>());
    if (out.models.back() == options.model) card = &c;
  }
  if (card == nullptr) {
    std::string served;
    for (const auto& m : out.models) served += (served.empty() ? "" : ", ") + m;
    return NotFound("model '" + options.model + "' is not served by " + base +
                    (served.empty() ? " (it lists no models)" : " (it serves: " + served + ")"));
  }
  for (const std::string& field : out.dialect->context_length_fields) {
    auto it = card->find(field);
    if (it != card->end() && it->is_number_integer() && it->get<int64_t>() > 0) {
      out.max_model_len = it->get<int64_t>();
      break;
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  info = out;
  return out;
}

Status ModelClient::CheckBudget(int64_t token_budget) {
  std::optional<ServerInfo> info;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    info = impl_->info;
  }
  if (!info) {
    REEL_ASSIGN_OR_RETURN(ServerInfo fresh, CheckModel());
    info = fresh;
  }
  if (info->max_model_len && token_budget > *info->max_model_len) {
    return LimitExceeded("the job's token budget (" + std::to_string(token_budget) +
                         " tokens) is larger than the server's max_model_len (" +
                         std::to_string(*info->max_model_len) + " tokens) for model '" +
                         impl_->options.model + "' at " + impl_->base +
                         ": lower context.token_budget, or start the server with a larger "
                         "--max-model-len");
  }
  return Status::Ok();
}

Result<int64_t> ModelClient::CountPromptTokens(const ChatRequest& request) {
  const Dialect& d = impl_->CurrentDialect();
  if (d.tokenize_path.empty()) {
    return Unsupported("the " + d.name + " dialect has no token-count endpoint");
  }
  REEL_ASSIGN_OR_RETURN(std::unique_ptr<BodySource> body,
                        BuildTokenizeBody(d, impl_->options.model, request));
  HttpRequest r = impl_->MakeRequest("POST", impl_->root + d.tokenize_path, nullptr);
  r.body = body.get();
  HttpResponse response = impl_->Exchange(std::move(r));
  if (!response.transport_ok()) {
    return Unavailable("token count: " + impl_->Describe(response));
  }
  if (response.status == 404) {
    return Unsupported("the server has no " + d.tokenize_path + " endpoint");
  }
  if (response.status != 200) return Unavailable("token count: " + impl_->Describe(response));
  const json doc = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("count") || !doc["count"].is_number_integer()) {
    return CorruptData("token count: the answer has no count");
  }
  return doc["count"].get<int64_t>();
}

ChatResult ModelClient::Chat(const ChatRequest& request, const std::atomic<bool>* cancel,
                             ChatObserver* observer) {
  return impl_->Chat(request, cancel, observer);
}

ChatResult ModelClient::Impl::Chat(const ChatRequest& request, const std::atomic<bool>* cancel,
                                   ChatObserver* observer) {
  const SteadyClock::time_point call_start = SteadyClock::now();
  ChatResult result;
  auto finish = [&](ChatOutcome outcome, std::string message) {
    result.outcome = outcome;
    result.error = options.api_key.Redact(message);
    result.total_s = std::chrono::duration<double>(SteadyClock::now() - call_start).count();
    return result;
  };

  bool needs_resolution;
  {
    std::lock_guard<std::mutex> lock(mutex);
    needs_resolution = !dialect_resolved;
  }
  if (needs_resolution) {
    Result<ServerInfo> checked = CheckModel();
    if (!checked.ok() && checked.status().code() == ErrorCode::kUnavailable) {
      return finish(ChatOutcome::kConnection, checked.status().message());
    }
  }
  const Dialect& d = CurrentDialect();

  std::optional<JsonSchema> schema;
  if (!request.json_schema.empty()) {
    Result<JsonSchema> parsed = JsonSchema::Parse(request.json_schema);
    if (!parsed.ok()) return finish(ChatOutcome::kBadRequest, parsed.status().message());
    schema = std::move(parsed).value();
  }
  Result<std::unique_ptr<BodySource>> body = BuildChatBody(d, options.model, request);
  if (!body.ok()) return finish(ChatOutcome::kBadRequest, body.status().message());

  const int64_t reserved = request.prompt_tokens_estimate + request.max_completion_tokens;
  bool shown_output = false;
  auto attempt = [&](bool probe, double time_left_s) -> AttemptVerdict {
    (void)probe;
    HttpRequest http_request =
        MakeRequest("POST", base + "/chat/completions", cancel,
                    request.stream ? "text/event-stream" : "application/json");
    if (!request.client_request_id.empty()) {
      http_request.headers.push_back("X-Request-Id: " + request.client_request_id);
    }
    http_request.body = body->get();
    if (time_left_s > 0) http_request.total_timeout_s = time_left_s;

    std::unique_ptr<StreamSink> sink;
    if (request.stream) sink = std::make_unique<StreamSink>(d, observer);
    HttpResponse r = http->Perform(http_request, sink.get());
    result.http_status = r.status;
    result.http_version = r.http_version;
    result.latency_s = r.seconds_total;
    result.request_bytes = r.bytes_sent;
    result.ttft_s = sink ? sink->ttft() : std::nullopt;
    if (sink && sink->ttft()) shown_output = true;
    const std::string header_id = r.Header(d.request_id_header);

    AttemptVerdict v = AttemptVerdict::Ok(r.status);
    ParsedAnswer parsed;
    const bool got_2xx = r.status >= 200 && r.status < 300;
    // A stream that reached its end is an answer even if the connection then broke; a body
    // whose transfer failed is not read at all.
    if (got_2xx && sink) parsed = sink->parser().Finish();
    const bool complete_stream = got_2xx && sink && parsed.ok();
    if (got_2xx && (r.transport_ok() || r.error == TransportError::kAborted || complete_stream)) {
      if (!sink) parsed = ParseChatCompletion(r.body, d);
      result.answer = parsed.answer;
      switch (parsed.problem) {
        case AnswerProblem::kNone:
          break;
        case AnswerProblem::kIncomplete:
          v = AttemptVerdict::Fail(ChatOutcome::kConnection,
                                   "the answer stopped early: " + parsed.problem_message, r.status);
          v.retryable = true;
          break;
        case AnswerProblem::kServerError: {
          ServerError se{parsed.problem_message, "", ""};
          if (auto too_long = RecognizeTooLongPrompt(400, se)) {
            result.too_long = too_long;
            v = AttemptVerdict::Fail(ChatOutcome::kTooLong, "prompt too long: " + se.message,
                                     r.status);
            break;
          }
          v = AttemptVerdict::Fail(ChatOutcome::kServerError,
                                   "server error: " + parsed.problem_message, r.status);
          v.retryable = true;
          break;
        }
        case AnswerProblem::kMalformed:
          v = AttemptVerdict::Fail(ChatOutcome::kMalformed,
                                   "malformed response: " + parsed.problem_message, r.status);
          break;
        case AnswerProblem::kEmptyChoices:
          v = AttemptVerdict::Fail(ChatOutcome::kEmptyChoices, parsed.problem_message, r.status);
          break;
      }
    } else if (!r.transport_ok()) {
      v = ClassifyHttpFailure(r);
      if (r.error == TransportError::kTotalTimeout) {
        v.message = "request timeout: no complete answer within " +
                    WaitText(options.request_timeout_s) +
                    " (model.request_timeout): " + r.error_message;
      }
    } else if (auto too_long = RecognizeTooLongPrompt(r.status, ParseServerError(r.status, r.body));
               too_long && r.status < 500) {
      result.too_long = too_long;
      v = AttemptVerdict::Fail(
          ChatOutcome::kTooLong,
          "HTTP " + std::to_string(r.status) + ": " + ParseServerError(r.status, r.body).message,
          r.status);
    } else {
      v = ClassifyHttpFailure(r);
    }
    result.server_request_id = !header_id.empty() ? header_id : result.answer.response_id;
    v.seconds = r.seconds_total;
    if (v.outcome == ChatOutcome::kOk) {
      const ChatAnswer& a = result.answer;
      if (a.prompt_tokens || a.completion_tokens) {
        v.used_tokens = a.prompt_tokens.value_or(request.prompt_tokens_estimate) +
                        a.completion_tokens.value_or(0);
      }
    }
    return v;
  };
  const RequestOutcome outcome =
      runner.Run(reserved, cancel, attempt, [&](const std::string& reason) {
        if (observer && shown_output) observer->OnRetry(reason);
      });
  result.attempts = outcome.attempts;
  result.retry_reasons = outcome.retry_reasons;
  if (!outcome.ok()) return finish(outcome.outcome, outcome.error);
  FinishAnswer(result.answer, schema ? &*schema : nullptr, &result);
  return finish(result.outcome, result.error);
}

}  // namespace reel::llm
