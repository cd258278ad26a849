#include "llm/speech/transcriber.h"

#include "llm/speech/backends.h"

namespace reel::llm {

Result<std::unique_ptr<Transcriber>> CreateTranscriber(const TranscriberOptions& options) {
  std::string backend = options.backend.empty() ? "auto" : options.backend;
  if (backend == "auto") backend = options.endpoint.empty() ? "pocketsphinx" : "openai";
  if (backend == "pocketsphinx") return speech_internal::CreatePocketSphinxTranscriber(options);
  if (backend == "openai") return speech_internal::CreateOpenAiTranscriber(options);
  return InvalidArgument("unknown speech backend '" + options.backend +
                         "' (auto, pocketsphinx or openai)");
}

}  // namespace reel::llm
