#include "llm/client/endpoint_url.h"

namespace reel::llm {

std::string NormalizeEndpoint(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  const size_t scheme = url.find("://");
  const size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (path == std::string::npos) url += "/v1";
  return url;
}

}  // namespace reel::llm
