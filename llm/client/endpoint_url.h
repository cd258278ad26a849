// The base URL of an OpenAI-compatible server as users write it, made canonical.
#pragma once

#include <string>

namespace reel::llm {

// "http://host:8000" -> "http://host:8000/v1" (a URL without a path gets "/v1"); trailing "/"
// dropped. Other paths are kept ("https://api.example.com/openai/v1").
std::string NormalizeEndpoint(std::string url);

}  // namespace reel::llm
