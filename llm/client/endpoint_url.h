// The endpoint: the base URL of an OpenAI-compatible API ("http://gpu:8000/v1"), to which the
// client adds "/models" and "/chat/completions". What a person gives is checked here, and when the
// server cannot be reached or answers strangely, the hint says what to change.
//
// Pure functions; no I/O.
#pragma once

#include <string>

#include "base/status.h"
#include "llm/client/http_client.h"

namespace reel::llm {

// Checks a URL given as an endpoint. kInvalidArgument, with what to change, when it is not an
// http:// or https:// URL with a host, or when it names one of the API's routes instead of its
// base ("drop /chat/completions: the endpoint is the API base, http://gpu:8000/v1").
Status CheckEndpointUrl(const std::string& url);

// "http://host:8000" -> "http://host:8000/v1" (a URL without a path gets "/v1"); trailing '/'
// dropped.
std::string NormalizeEndpoint(std::string url);

// The server root: the endpoint without a final "/v1".
std::string ServerRoot(const std::string& base);

// "host:port" of a URL (the scheme's default port when none is written).
std::string HostAndPort(const std::string& url);

// What a person can do when `GET <base>/models` failed as `r` says (no connection, a redirect, a
// 404, ...): a sentence, or "" when there is nothing obvious to suggest.
std::string EndpointHint(const std::string& base, const HttpResponse& r);

}  // namespace reel::llm
