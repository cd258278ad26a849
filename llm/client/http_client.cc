// The only file that includes curl.h.
#include "llm/client/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

namespace reel::llm {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct EasyDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
using UniqueEasy = std::unique_ptr<CURL, EasyDeleter>;

struct MultiDeleter {
  void operator()(CURLM* h) const { curl_multi_cleanup(h); }
};
using UniqueMulti = std::unique_ptr<CURLM, MultiDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using UniqueSlist = std::unique_ptr<curl_slist, SlistDeleter>;

std::once_flag g_curl_init;
CURLcode g_curl_init_result = CURLE_OK;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// "256 MiB", "1.5 KiB", "17 bytes".
std::string SizeText(int64_t bytes) {
  char text[48];
  if (bytes >= (int64_t{1} << 20)) {
    std::snprintf(text, sizeof(text), "%.4g MiB", static_cast<double>(bytes) / (1 << 20));
  } else if (bytes >= 1024) {
    std::snprintf(text, sizeof(text), "%.4g KiB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(text, sizeof(text), "%lld bytes", static_cast<long long>(bytes));
  }
  return text;
}

}  // namespace

const char* TransportErrorName(TransportError error) {
  switch (error) {
    case TransportError::kNone:
      return "none";
    case TransportError::kConnect:
      return "connection failed";
    case TransportError::kConnectTimeout:
      return "connect timeout";
    case TransportError::kIdleTimeout:
      return "read timeout";
    case TransportError::kTotalTimeout:
      return "total timeout";
    case TransportError::kSendFailed:
      return "send failed";
    case TransportError::kBodyFailed:
      return "request body failed";
    case TransportError::kReceiveFailed:
      return "connection cut";
    case TransportError::kTooLarge:
      return "response too large";
    case TransportError::kAborted:
      return "aborted";
    case TransportError::kCancelled:
      return "cancelled";
    case TransportError::kOther:
      return "transport error";
  }
  return "transport error";
}

std::string HttpResponse::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

// One transfer: the request, the response being built, and its timers. Lives on the stack of
// the Perform that runs it.
struct Transfer {
  const HttpRequest* request = nullptr;
  std::unique_ptr<BodyReader> body;  // a fresh cursor over request->body
  ResponseSink* sink = nullptr;
  CURL* easy = nullptr;
  HttpResponse response;
  char error_buffer[CURL_ERROR_SIZE] = {};
  Clock::time_point started;
  Clock::time_point last_activity;
  bool got_first_byte = false;
  // Set by a callback that stopped the transfer, to say why.
  TransportError abort_reason = TransportError::kNone;
  std::string abort_message;
  int64_t max_response_bytes = 0;

  void Touch() { last_activity = Clock::now(); }

  long StatusNow() const {
    long code = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
    return code;
  }

  static size_t OnWrite(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    t->Touch();
    if (!t->got_first_byte) {
      t->got_first_byte = true;
      t->response.seconds_to_first_byte = SecondsBetween(t->started, t->last_activity);
    }
    t->response.bytes_received += static_cast<int64_t>(n);
    // The same bound for a body handed to a sink as for one collected: a stream that never ends
    // must not grow its reader's answer without limit.
    if (t->response.bytes_received > t->max_response_bytes) {
      t->abort_reason = TransportError::kTooLarge;
      t->abort_message = "response larger than " + SizeText(t->max_response_bytes);
      return 0;
    }
    const long status = t->StatusNow();
    if (t->sink != nullptr && status >= 200 && status < 300) {
      if (!t->sink->OnData(std::string_view(data, n))) {
        t->abort_reason = TransportError::kAborted;
        t->abort_message = "the response reader stopped the transfer";
        return 0;
      }
      return n;
    }
    t->response.body.append(data, n);
    return n;
  }

  static size_t OnHeader(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t n = size * count;
    t->Touch();
    std::string_view line(data, n);
    if (line.substr(0, 5) == "HTTP/") {
      t->response.headers.clear();  // a new response (after 100 Continue, say)
      return n;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return n;
    t->response.headers.emplace_back(Lower(Trim(line.substr(0, colon))),
                                     std::string(Trim(line.substr(colon + 1))));
    return n;
  }

  static size_t OnRead(char* out, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    t->Touch();
    Result<size_t> n = t->body->Read(out, size * count);
    if (!n.ok()) {
      t->abort_reason = TransportError::kBodyFailed;
      t->abort_message = "request body: " + n.status().message();
      return CURL_READFUNC_ABORT;
    }
    t->response.bytes_sent += static_cast<int64_t>(*n);
    return *n;
  }

  static int OnSeek(void* user, curl_off_t offset, int origin) {
    auto* t = static_cast<Transfer*>(user);
    // libcurl rewinds to send the body again (a kept-alive connection that turned out closed).
    if (offset != 0 || origin != SEEK_SET) return CURL_SEEKFUNC_CANTSEEK;
    t->body = t->request->body->Open();
    t->response.bytes_sent = 0;
    return CURL_SEEKFUNC_OK;
  }
};

// A pooled connection: a multi handle (its connection cache keeps the connection open between
// transfers) and the easy handle driven through it.
struct Connection {
  UniqueMulti multi;
  UniqueEasy easy;
};

struct HttpClient::Impl {
  Options options;
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::unique_ptr<Connection>> idle;  // guarded by mutex; most recently used last
  int created = 0;                                // guarded by mutex
  int leased = 0;                                 // guarded by mutex
  std::atomic<bool> stopping{false};

  ~Impl() {
    // Easy handles before their multi handles.
    for (auto& c : idle) c->easy.reset();
  }

  // A free connection, a new one while under the limit, or nullptr when cancelled or stopping.
  std::unique_ptr<Connection> Lease(const std::atomic<bool>* cancel) {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      if (stopping.load() || (cancel != nullptr && cancel->load())) return nullptr;
      if (!idle.empty()) {
        std::unique_ptr<Connection> c = std::move(idle.back());
        idle.pop_back();
        ++leased;
        return c;
      }
      if (created < std::max(1, options.max_connections)) {
        auto c = std::make_unique<Connection>();
        c->multi.reset(curl_multi_init());
        c->easy.reset(curl_easy_init());
        if (!c->multi || !c->easy) return nullptr;
        curl_multi_setopt(c->multi.get(), CURLMOPT_MAXCONNECTS, 1L);
        ++created;
        ++leased;
        return c;
      }
      changed.wait_for(lock, std::chrono::milliseconds(100));
    }
  }

  void Return(std::unique_ptr<Connection> c) {
    // Notified under the lock: the destructor may run as soon as `leased` reaches 0.
    std::lock_guard<std::mutex> lock(mutex);
    --leased;
    idle.push_back(std::move(c));
    changed.notify_all();
  }

  HttpResponse Run(Connection& c, const HttpRequest& request, ResponseSink* sink);
};

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<HttpClient>> HttpClient::Create(const Options& options) {
  std::call_once(g_curl_init, [] { g_curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (g_curl_init_result != CURLE_OK) {
    return Internal(std::string("libcurl initialisation failed: ") +
                    curl_easy_strerror(g_curl_init_result));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

HttpClient::~HttpClient() {
  impl_->stopping = true;
  std::unique_lock<std::mutex> lock(impl_->mutex);
  impl_->changed.wait(lock, [this] { return impl_->leased == 0; });
}

int HttpClient::InFlight() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->leased;
}

HttpResponse HttpClient::Perform(const HttpRequest& request, ResponseSink* sink) {
  std::unique_ptr<Connection> c = impl_->Lease(request.cancel);
  if (!c) {
    HttpResponse r;
    r.error = TransportError::kCancelled;
    r.error_message = impl_->stopping ? "the HTTP client is shutting down" : "cancelled";
    return r;
  }
  HttpResponse response = impl_->Run(*c, request, sink);
  impl_->Return(std::move(c));
  return response;
}

namespace {

void Classify(CURLcode code, CURL* easy, HttpResponse* r) {
  switch (code) {
    case CURLE_COULDNT_CONNECT: {
      r->error = TransportError::kConnect;
      long os_error = 0;
      curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_error);
      r->connect_failure =
          os_error == ECONNREFUSED ? ConnectFailure::kRefused : ConnectFailure::kOther;
      break;
    }
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      r->error = TransportError::kConnect;
      r->connect_failure = ConnectFailure::kUnresolved;
      break;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
      r->error = TransportError::kConnect;
      r->connect_failure = ConnectFailure::kTls;
      break;
    case CURLE_OPERATION_TIMEDOUT: {
      curl_off_t connected = 0;
      curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connected);
      r->error = connected == 0 ? TransportError::kConnectTimeout : TransportError::kTotalTimeout;
      break;
    }
    case CURLE_SEND_ERROR:
      r->error = TransportError::kSendFailed;
      break;
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      r->error = TransportError::kReceiveFailed;
      break;
    default:
      r->error = TransportError::kOther;
      break;
  }
}

}  // namespace

HttpResponse HttpClient::Impl::Run(Connection& c, const HttpRequest& r, ResponseSink* sink) {
  Transfer t;
  t.request = &r;
  t.sink = sink;
  t.easy = c.easy.get();
  t.max_response_bytes = options.max_response_bytes;
  CURL* e = c.easy.get();
  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.error_buffer);
  curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_2TLS});
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  // A minutes-long prefill sends nothing: keep the connection alive through NATs and proxies.
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 15L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::max(1.0, r.connect_timeout_s * 1000)));
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);

  curl_slist* list = nullptr;
  for (const std::string& h : r.headers) list = curl_slist_append(list, h.c_str());
  if (!r.api_key.empty()) list = curl_slist_append(list, r.api_key.AuthorizationHeader().c_str());
  if (r.method == "POST") {
    // No "Expect: 100-continue" round trip before a large body.
    list = curl_slist_append(list, "Expect:");
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    if (r.body != nullptr) {
      t.body = r.body->Open();
      curl_easy_setopt(e, CURLOPT_READFUNCTION, &Transfer::OnRead);
      curl_easy_setopt(e, CURLOPT_READDATA, &t);
      curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, &Transfer::OnSeek);
      curl_easy_setopt(e, CURLOPT_SEEKDATA, &t);
      const int64_t size = r.body->Size();
      if (size >= 0) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(size));
      } else {
        list = curl_slist_append(list, "Transfer-Encoding: chunked");
      }
    } else {
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t{0});
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
    }
  } else {
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
  }
  UniqueSlist header_list(list);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, list);

  t.started = Clock::now();
  t.last_activity = t.started;
  CURLM* m = c.multi.get();
  if (curl_multi_add_handle(m, e) != CURLM_OK) {
    t.response.error = TransportError::kOther;
    t.response.error_message = "libcurl: cannot start the transfer";
    return std::move(t.response);
  }

  bool finished = false;
  CURLcode code = CURLE_OK;
  while (!finished) {
    int running = 0;
    curl_multi_perform(m, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(m, &left)) {
      if (msg->msg == CURLMSG_DONE) {
        finished = true;
        code = msg->data.result;
      }
    }
    if (finished) break;
    // Our own timers: silence (the read timeout) and cancellation.
    if (stopping.load() || (r.cancel != nullptr && r.cancel->load())) {
      t.abort_reason = TransportError::kCancelled;
      t.abort_message = stopping.load() ? "the HTTP client is shutting down" : "cancelled";
      code = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    const Clock::time_point now = Clock::now();
    // The whole transfer: our own timer (not CURLOPT_TIMEOUT), so the failure says which limit.
    if (r.total_timeout_s > 0 && SecondsBetween(t.started, now) > r.total_timeout_s) {
      char text[128];
      std::snprintf(text, sizeof(text), "the response was not complete after %.3g s (%s received)",
                    r.total_timeout_s, SizeText(t.response.bytes_received).c_str());
      t.abort_reason = TransportError::kTotalTimeout;
      t.abort_message = text;
      code = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    if (r.idle_timeout_s > 0 && SecondsBetween(t.last_activity, now) > r.idle_timeout_s) {
      char text[96];
      std::snprintf(text, sizeof(text), "no data for %.3g s (read timeout)", r.idle_timeout_s);
      t.abort_reason = TransportError::kIdleTimeout;
      t.abort_message = text;
      code = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    long wait_ms = 100;
    long curl_ms = -1;
    curl_multi_timeout(m, &curl_ms);
    if (curl_ms >= 0) wait_ms = std::min(wait_ms, curl_ms);
    if (wait_ms > 0) curl_multi_poll(m, nullptr, 0, static_cast<int>(wait_ms), nullptr);
  }

  HttpResponse& out = t.response;
  long status = 0;
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  out.status = static_cast<int>(status);
  long version = 0;
  curl_easy_getinfo(e, CURLINFO_HTTP_VERSION, &version);
  out.http_version = version == CURL_HTTP_VERSION_2_0   ? "2"
                     : version == CURL_HTTP_VERSION_3   ? "3"
                     : version == CURL_HTTP_VERSION_1_0 ? "1.0"
                     : version == CURL_HTTP_VERSION_1_1 ? "1.1"
                                                        : "";
  if (code != CURLE_OK) {
    if (t.abort_reason != TransportError::kNone) {
      out.error = t.abort_reason;
      out.error_message = t.abort_message;
    } else {
      Classify(code, e, &out);
      out.error_message = t.error_buffer[0] != '\0' ? t.error_buffer : curl_easy_strerror(code);
    }
  }
  // Removing a transfer that did not finish closes its connection; a finished one stays open
  // in the multi handle's cache for the next request.
  curl_multi_remove_handle(m, e);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, nullptr);
  out.seconds_total = SecondsBetween(t.started, Clock::now());
  return std::move(out);
}

}  // namespace reel::llm
