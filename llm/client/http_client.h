// An HTTP client for model servers on libcurl: a bounded pool of kept-alive connections; each
// Perform runs on the calling thread. Bodies are pulled from a BodySource; responses collected
// or handed to a ResponseSink, at most `max_response_bytes` (kTooLarge); connect, idle and total
// timeouts. Thread-safe; destroying the client cancels running transfers (kCancelled) and waits
// for them. The API key goes into the Authorization header and nowhere else.
// Timeouts and threads in detail: llm/README.md, "HTTP client".
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "llm/client/api_key.h"
#include "llm/client/body_source.h"

namespace reel::llm {

// Receives a successful (2xx) response's body as it arrives. Bodies of other statuses are
// collected into HttpResponse::body instead (they are error documents).
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // Returns false to stop the transfer (it then completes with kAborted).
  virtual bool OnData(std::string_view bytes) = 0;
};

struct HttpRequest {
  std::string method = "GET";  // GET or POST
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; never secrets (use api_key)
  ApiKey api_key;                    // sent as "Authorization: Bearer ..." when set
  const BodySource* body = nullptr;  // POST body; not owned; read from its start
  double connect_timeout_s = 10;
  double idle_timeout_s = 3600;  // no byte either way for this long fails the transfer
  double total_timeout_s = 0;    // 0 = no limit on the whole transfer (connect to last byte)
  // When it becomes true the transfer stops and completes with kCancelled.
  const std::atomic<bool>* cancel = nullptr;
};

enum class TransportError {
  kNone = 0,
  kConnect,         // no connection: refused, unreachable, name not resolved, TLS failure
  kConnectTimeout,  // no connection within connect_timeout_s
  kIdleTimeout,     // nothing sent or received for idle_timeout_s
  kTotalTimeout,    // total_timeout_s passed
  kSendFailed,      // the connection broke while sending
  kBodyFailed,      // the request's BodySource failed (a file vanished, say)
  kReceiveFailed,   // the connection broke before the whole response arrived (cut, reset)
  kTooLarge,        // the response body was larger than Options::max_response_bytes
  kAborted,         // the sink asked to stop
  kCancelled,       // `cancel` became true, or the client was destroyed
  kOther,
};

const char* TransportErrorName(TransportError error);

// With TransportError::kConnect: what kept the connection from being made.
enum class ConnectFailure {
  kNone = 0,
  kRefused,     // nothing listens there (ECONNREFUSED)
  kUnresolved,  // the host name is not known
  kTls,         // the TLS handshake failed (a plain-HTTP server asked for https://, say)
  kOther,       // unreachable network, no route, ...
};

struct HttpResponse {
  TransportError error = TransportError::kNone;
  std::string error_message;  // set with `error`; never contains a header or the key
  ConnectFailure connect_failure = ConnectFailure::kNone;  // with kConnect
  int status = 0;                                          // HTTP status, 0 when none was received
  // Response headers, names in lower case, in the order received (of the final response).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                  // the body, unless a sink took it (2xx with a sink)
  std::string http_version;          // "1.1", "2"
  double seconds_to_first_byte = 0;  // from the start of the transfer to the first response byte
  double seconds_total = 0;          // from the start of the transfer to its end
  int64_t bytes_sent = 0;            // request body bytes sent
  int64_t bytes_received = 0;        // response body bytes received

  bool transport_ok() const { return error == TransportError::kNone; }
  // The first header of that name (lower case), or "".
  std::string Header(std::string_view lower_name) const;
};

class HttpClient {
 public:
  struct Options {
    int max_connections = 64;  // transfers at once; each keeps its own connection alive
    int64_t max_response_bytes = int64_t{256} << 20;  // bodies above this fail (sinks too)
    std::string user_agent = "reel";
  };

  static Result<std::unique_ptr<HttpClient>> Create(const Options& options);
  static Result<std::unique_ptr<HttpClient>> Create() { return Create(Options()); }
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Runs one request on this thread and returns when it ends. Never throws; failures are in the
  // response.
  HttpResponse Perform(const HttpRequest& request, ResponseSink* sink = nullptr);

  // Transfers running now.
  int InFlight() const;

  struct Impl;

 private:
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace reel::llm
