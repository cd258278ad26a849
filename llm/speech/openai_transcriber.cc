// The server backend: POST {endpoint}/audio/transcriptions as OpenAI defines it, which vLLM
// (`vllm serve openai/whisper-large-v3`), speaches (faster-whisper), whisper.cpp's server
// (`--inference-path /v1/audio/transcriptions`) and hosted services speak.
//
// Each chunk goes as a 16-bit PCM WAV in a multipart form with model, language (ISO 639-1, when
// set), response_format=verbose_json and timestamp_granularities[] segment and word. The answer's
// chunk-relative times get the chunk's start added. Requests go through a RequestRunner: the
// model client's retries, rate limit, circuit and timeouts, with the same API key rules. A
// server that refuses word timestamps (a 400 naming the granularity) is asked again without
// them, one that refuses verbose_json (older vLLM) for plain json (text only), and from then on
// the same.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>

#include "llm/client/endpoint_url.h"
#include "llm/client/http_client.h"
#include "llm/client/request_runner.h"
#include "llm/client/server_error.h"
#include "llm/speech/backends.h"
#include "llm/speech/multipart_form.h"
#include "llm/speech/transcription_response.h"
#include "pipeline/audio/language_code.h"
#include "pipeline/audio/wav.h"

namespace reel::llm::speech_internal {
namespace {

constexpr const char* kDefaultModel = "whisper-1";

std::string ChunkName(const pipeline::SpeechChunk& chunk) {
  char name[32];
  std::snprintf(name, sizeof(name), "chunk-%05d.wav", chunk.index);
  return name;
}

ErrorCode CodeFor(ChatOutcome outcome) {
  switch (outcome) {
    case ChatOutcome::kCancelled:
      return ErrorCode::kCancelled;
    case ChatOutcome::kRejected:
    case ChatOutcome::kTooLong:
    case ChatOutcome::kBadRequest:
      return ErrorCode::kInvalidArgument;
    case ChatOutcome::kMalformed:
    case ChatOutcome::kEmptyChoices:
    case ChatOutcome::kSchemaMismatch:
      return ErrorCode::kCorruptData;
    default:
      return ErrorCode::kUnavailable;
  }
}

class OpenAiTranscriber final : public Transcriber {
 public:
  OpenAiTranscriber(const TranscriberOptions& options, std::unique_ptr<HttpClient> http)
      : options_(options),
        url_(NormalizeEndpoint(options.endpoint) + "/audio/transcriptions"),
        model_(options.model.empty() ? kDefaultModel : options.model),
        language_(pipeline::LanguageCode(options.language)),
        http_(std::move(http)),
        runner_(RunnerOptions(options)) {
    if (language_.empty()) language_ = options.language;  // unknown to us: sent as given
  }

  const std::string& backend() const override { return backend_; }
  const std::string& model() const override { return model_; }
  double window_s() const override { return 30; }
  std::string Describe() const override {
    return "transcription server " + url_ + ", model " + model_;
  }

  Result<ChunkTranscript> Transcribe(const pipeline::SpeechChunk& chunk,
                                     const std::atomic<bool>* cancel) override {
    const std::string wav =
        pipeline::EncodeWav(chunk.samples.data(), chunk.samples.size(), chunk.sample_rate);
    ChunkTranscript out;
    ParsedTranscription parsed;
    int level = level_.load();
    auto body = std::make_unique<StringBody>("");
    std::string content_type;
    auto build = [&] {
      MultipartForm form;
      form.AddFile("file", ChunkName(chunk), "audio/wav", wav);
      form.AddField("model", model_);
      if (!language_.empty()) form.AddField("language", language_);
      form.AddField("response_format", level == kPlainJson ? "json" : "verbose_json");
      if (level != kPlainJson) form.AddField("timestamp_granularities[]", "segment");
      if (level == kWords) form.AddField("timestamp_granularities[]", "word");
      MultipartForm::Encoded encoded =
          form.Encode(static_cast<unsigned long long>(chunk.index) * 7919u + seed_.fetch_add(1));
      body = std::make_unique<StringBody>(std::move(encoded.body));
      content_type = std::move(encoded.content_type);
    };
    build();

    const RequestOutcome r = runner_.Run(0, cancel, [&](bool, double) {
      HttpResponse response = http_->Perform(Request(*body, content_type, cancel));
      // A server that refuses what was asked (a 400 naming it) is asked for less: word times,
      // then segment times (older vLLM has no verbose_json); remembered for later chunks.
      while (response.transport_ok() && response.status == 400 && level != kPlainJson) {
        const std::string message = ParseServerError(response.status, response.body).message;
        const bool words = level == kWords && message.find("granularit") != std::string::npos;
        const bool verbose = message.find("verbose_json") != std::string::npos ||
                             message.find("response_format") != std::string::npos;
        if (!words && !verbose) break;
        level = verbose ? kPlainJson : kSegments;
        int expected = level_.load();
        while (expected > level && !level_.compare_exchange_weak(expected, level)) {
        }
        out.notes.push_back(std::string(verbose ? "the server gives no segment times"
                                                : "the server gives no word times") +
                            ": " + options_.api_key.Redact(message));
        build();
        response = http_->Perform(Request(*body, content_type, cancel));
      }
      if (!response.transport_ok() || response.status < 200 || response.status >= 300) {
        return ClassifyHttpFailure(response);
      }
      Result<ParsedTranscription> p = ParseTranscriptionResponse(response.body, chunk.duration_s());
      if (!p.ok()) {
        return AttemptVerdict::Fail(ChatOutcome::kMalformed, p.status().message(), response.status);
      }
      parsed = std::move(p).value();
      return AttemptVerdict::Ok(response.status);
    });
    out.attempts = r.attempts;
    if (!r.ok()) {
      return Status(CodeFor(r.outcome),
                    std::string(ChatOutcomeName(r.outcome)) + " from " + url_ + ": " + r.error);
    }
    if (!parsed.timed) {
      out.notes.push_back("the server gave no segment times: the chunk's text spans the chunk");
    }
    const std::string language = !parsed.language.empty() ? parsed.language : language_;
    for (TranscriptSegment& s : parsed.segments) {
      s.start_s += chunk.start_s;
      s.end_s += chunk.start_s;
      for (TranscriptWord& w : s.words) {
        w.start_s += chunk.start_s;
        w.end_s += chunk.start_s;
      }
      s.language = language;
      s.backend = backend_;
      s.model = model_;
      out.segments.push_back(std::move(s));
    }
    return out;
  }

 private:
  static RequestRunnerOptions RunnerOptions(const TranscriberOptions& o) {
    RequestRunnerOptions r;
    r.retry = o.retry;
    r.rate_limit = o.rate_limit;
    r.circuit = o.circuit;
    r.clock = o.clock != nullptr ? o.clock : ClientClock::Real();
    r.api_key = o.api_key;
    r.on_event = o.on_event;
    return r;
  }

  HttpRequest Request(const BodySource& body, const std::string& content_type,
                      const std::atomic<bool>* cancel) const {
    HttpRequest r;
    r.method = "POST";
    r.url = url_;
    r.api_key = options_.api_key;
    r.connect_timeout_s = options_.connect_timeout_s;
    r.idle_timeout_s = options_.read_timeout_s;
    r.cancel = cancel;
    r.headers = {"Accept: application/json", "Content-Type: " + content_type};
    r.body = &body;
    return r;
  }

  TranscriberOptions options_;
  std::string backend_ = "openai";
  std::string url_;
  std::string model_;
  std::string language_;
  std::unique_ptr<HttpClient> http_;
  RequestRunner runner_;
  // What the server gives, learnt from its refusals: kWords, kSegments or kPlainJson.
  static constexpr int kPlainJson = 0;
  static constexpr int kSegments = 1;
  static constexpr int kWords = 2;
  std::atomic<int> level_{kWords};
  std::atomic<unsigned long long> seed_{
      static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count())};
};

}  // namespace

Result<std::unique_ptr<Transcriber>> CreateOpenAiTranscriber(const TranscriberOptions& options) {
  if (options.endpoint.empty()) {
    return InvalidArgument(
        "the openai speech backend needs an endpoint (e.g. "
        "http://localhost:8000/v1)");
  }
  if (options.endpoint.find("://") == std::string::npos) {
    return InvalidArgument("speech endpoint '" + options.endpoint +
                           "' is not a URL (e.g. http://localhost:8000/v1)");
  }
  HttpClient::Options http_options;
  http_options.max_connections = 16;
  http_options.max_response_bytes = int64_t{64} << 20;
  http_options.user_agent = "reel/0.1";
  REEL_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> http, HttpClient::Create(http_options));
  return std::unique_ptr<Transcriber>(new OpenAiTranscriber(options, std::move(http)));
}

}  // namespace reel::llm::speech_internal
