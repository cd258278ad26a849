// The backends' constructors, for CreateTranscriber (transcriber.cc) only.
#pragma once

#include <memory>

#include "base/status.h"
#include "llm/speech/transcriber.h"

namespace reel::llm::speech_internal {

// pocketsphinx_transcriber.cc
Result<std::unique_ptr<Transcriber>> CreatePocketSphinxTranscriber(
    const TranscriberOptions& options);

// openai_transcriber.cc
Result<std::unique_ptr<Transcriber>> CreateOpenAiTranscriber(const TranscriberOptions& options);

}  // namespace reel::llm::speech_internal
