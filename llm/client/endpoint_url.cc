#include "llm/client/endpoint_url.h"

#include <array>
#include <cctype>
#include <string_view>

namespace reel::llm {
namespace {

struct UrlParts {
  std::string scheme;     // "http", "https"
  std::string authority;  // "host:8000", "[::1]:8000", "host"
  std::string path;       // "/v1", "" (no query or fragment)
};

UrlParts Split(const std::string& url) {
  UrlParts p;
  size_t at = url.find("://");
  size_t rest = 0;
  if (at != std::string::npos) {
    p.scheme = url.substr(0, at);
    rest = at + 3;
  }
  const size_t slash = url.find_first_of("/?#", rest);
  p.authority = url.substr(rest, slash == std::string::npos ? std::string::npos : slash - rest);
  if (slash != std::string::npos && url[slash] == '/') {
    const size_t end = url.find_first_of("?#", slash);
    p.path = url.substr(slash, end == std::string::npos ? std::string::npos : end - slash);
  }
  for (char& c : p.scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return p;
}

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The routes of the API that a person may paste instead of its base.
constexpr std::array<std::string_view, 6> kRoutes = {
    "/chat/completions", "/completions", "/models", "/embeddings", "/responses", "/tokenize"};

}  // namespace

Status CheckEndpointUrl(const std::string& url) {
  const UrlParts p = Split(url);
  if (p.scheme != "http" && p.scheme != "https") {
    return InvalidArgument(
        "the endpoint must be an http:// or https:// URL (e.g. "
        "http://localhost:8000/v1), got '" +
        url + "'");
  }
  if (p.authority.empty()) return InvalidArgument("the endpoint '" + url + "' has no host");
  std::string path = p.path;
  while (!path.empty() && path.back() == '/') path.pop_back();
  for (std::string_view route : kRoutes) {
    if (!EndsWith(path, route)) continue;
    std::string base = p.scheme + "://" + p.authority + path.substr(0, path.size() - route.size());
    if (base.size() == p.scheme.size() + 3 + p.authority.size()) base += "/v1";
    return InvalidArgument("the endpoint '" + url + "' names the API's " + std::string(route) +
                           " route: drop " + std::string(route) +
                           ": the endpoint is the API base, " + base);
  }
  return Status::Ok();
}

std::string NormalizeEndpoint(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  const size_t scheme = url.find("://");
  const size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (path == std::string::npos) url += "/v1";
  return url;
}

std::string ServerRoot(const std::string& base) {
  if (EndsWith(base, "/v1")) return base.substr(0, base.size() - 3);
  return base;
}

std::string HostAndPort(const std::string& url) {
  const UrlParts p = Split(url);
  std::string authority = p.authority;
  const size_t at = authority.rfind('@');  // user:password@ is never shown
  if (at != std::string::npos) authority = authority.substr(at + 1);
  const size_t bracket = authority.rfind(']');
  const size_t colon = authority.rfind(':');
  const bool has_port =
      colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
  if (has_port) return authority;
  return authority + (p.scheme == "https" ? ":443" : ":80");
}

std::string EndpointHint(const std::string& base, const HttpResponse& r) {
  const UrlParts p = Split(base);
  const std::string other_scheme = p.scheme == "https" ? "http" : "https";
  const std::string with_other_scheme = other_scheme + base.substr(p.scheme.size());
  switch (r.error) {
    case TransportError::kConnect:
      switch (r.connect_failure) {
        case ConnectFailure::kRefused:
          return "nothing listens at " + HostAndPort(base) +
                 ": is the server running, and on that port?";
        case ConnectFailure::kUnresolved:
          return "the host name in " + base + " is not known: check its spelling";
        case ConnectFailure::kTls:
          return p.scheme == "https" ? "the TLS handshake failed: if the server speaks plain "
                                       "HTTP, use " +
                                           with_other_scheme
                                     : "";
        case ConnectFailure::kOther:
        case ConnectFailure::kNone:
          return "the host cannot be reached: check the address and the network";
      }
      return "";
    case TransportError::kConnectTimeout:
      return "no connection to " + HostAndPort(base) +
             " in time: check the address, and any firewall between";
    case TransportError::kReceiveFailed:
    case TransportError::kSendFailed:
      if (r.status == 0 && p.scheme == "http") {
        return "the server closed the connection without an answer: if it speaks HTTPS, use " +
               with_other_scheme;
      }
      return "";
    case TransportError::kNone:
      break;
    default:
      return "";
  }
  if (r.status >= 300 && r.status < 400) {
    std::string location = r.Header("location");
    if (location.empty()) return "Reel does not follow redirects: give the final URL";
    if (location.front() == '/') location = p.scheme + "://" + p.authority + location;
    while (!location.empty() && location.back() == '/') location.pop_back();
    if (EndsWith(location, "/models")) location.resize(location.size() - 7);
    return "Reel does not follow redirects: set the endpoint to " + location;
  }
  if (r.status == 404 || r.status == 405) {
    std::string path = p.path;
    const std::string suggestion =
        EndsWith(path, "/v1") ? "" : " (perhaps " + p.scheme + "://" + p.authority + "/v1)";
    return "no model list at " + base +
           "/models: the endpoint is the server's OpenAI-compatible API base, usually ending in "
           "/v1" +
           suggestion;
  }
  if (r.status == 401 || r.status == 403) {
    return "the server wants an API key: set the variable model.api_key_env names ($REEL_API_KEY "
           "for reel ask)";
  }
  return "";
}

}  // namespace reel::llm
