// Speech to timed text, one backend per file behind one interface (PocketSphinx offline, or a
// /v1/audio/transcriptions server): one speech chunk in, its segments with absolute times out.
// Transcribe may be called from several threads at once.
// Backends and usage: llm/README.md, "Transcriber".
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "llm/client/api_key.h"
#include "llm/client/circuit_breaker.h"
#include "llm/client/client_clock.h"
#include "llm/client/rate_limiter.h"
#include "llm/client/retry_policy.h"
#include "llm/speech/transcript.h"
#include "pipeline/audio/speech_chunker.h"

namespace reel::llm {

struct TranscriberOptions {
  std::string backend = "auto";  // auto | pocketsphinx | openai ("auto": openai with an endpoint)
  // openai: the server's base URL ("http://host:8000/v1"; a URL without a path gets "/v1").
  std::string endpoint;
  // openai: the served model ("" = "whisper-1", OpenAI's name; vLLM: "openai/whisper-large-v3").
  // pocketsphinx: a model folder laid out as Debian's pocketsphinx-en-us (en-us/, en-us.lm.bin,
  // cmudict-en-us.dict); "" = $REEL_POCKETSPHINX_MODEL, else the package's.
  std::string model;
  // The spoken language (any spelling pipeline/audio/language_code.h knows). openai: sent as
  // ISO 639-1 ("" = the server detects it); pocketsphinx: English only ("" = English).
  std::string language;
  ApiKey api_key;
  double connect_timeout_s = 10;
  double read_timeout_s = 600;  // silence allowed while a server transcribes one chunk
  RetryOptions retry;
  RateLimitOptions rate_limit;
  CircuitOptions circuit;
  ClientClock* clock = ClientClock::Real();
  std::function<void(const std::string&)> on_event;  // retries, waits, the circuit
};

// One chunk's transcript.
struct ChunkTranscript {
  std::vector<TranscriptSegment> segments;  // in time order
  int attempts = 1;                         // requests sent (server backends)
  std::vector<std::string> notes;           // e.g. the server gave no segment times
};

class Transcriber {
 public:
  virtual ~Transcriber() = default;
  virtual const std::string& backend() const = 0;  // "pocketsphinx" | "openai"
  virtual const std::string& model() const = 0;
  // The longest chunk it takes, seconds (Whisper's window: 30).
  virtual double window_s() const = 0;
  // For people: "PocketSphinx 5prealpha, model en-us (English only, offline)", "openai at URL".
  virtual std::string Describe() const = 0;

  // Errors: kInvalidArgument (a chunk it cannot take: sample rate, length; or the server
  // rejected the request: a 4xx, named), kUnavailable (the server could not be reached, timed out
  // or kept failing after the retries; the message says how), kCorruptData (the server's answer
  // could not be read), kCancelled (`cancel` was set), kInternal (the engine failed).
  virtual Result<ChunkTranscript> Transcribe(const pipeline::SpeechChunk& chunk,
                                             const std::atomic<bool>* cancel) = 0;
};

// Errors: kInvalidArgument (unknown backend, an endpoint that is not a URL, pocketsphinx with a
// language other than English), kNotFound (the PocketSphinx model is not installed: the message
// says which package), kInternal (the engine failed to start).
Result<std::unique_ptr<Transcriber>> CreateTranscriber(const TranscriberOptions& options);

}  // namespace reel::llm
