// The only file that includes curl.h.
#include "llm/client/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>

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

// One transfer: the request's own copies, the response being built, and its timers.
struct Transfer {
  HttpRequest request;
  ResponseSink* sink = nullptr;
  std::function<void(HttpResponse)> done;
  UniqueEasy easy;
  UniqueSlist header_list;
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
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &code);
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
    const long status = t->StatusNow();
    if (t->sink != nullptr && status >= 200 && status < 300) {
      if (!t->sink->OnData(std::string_view(data, n))) {
        t->abort_reason = TransportError::kAborted;
        t->abort_message = "the response reader stopped the transfer";
        return 0;
      }
      return n;
    }
    if (static_cast<int64_t>(t->response.body.size() + n) > t->max_response_bytes) {
      t->abort_reason = TransportError::kTooLarge;
      t->abort_message = "response larger than " + std::to_string(t->max_response_bytes) + " bytes";
      return 0;
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
    Result<size_t> n = t->request.body->Read(out, size * count);
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
    if (offset != 0 || origin != SEEK_SET) return CURL_SEEKFUNC_CANTSEEK;
    if (!t->request.body->Rewind().ok()) return CURL_SEEKFUNC_FAIL;
    t->response.bytes_sent = 0;
    return CURL_SEEKFUNC_OK;
  }
};

struct HttpClient::Impl {
  Options options;
  UniqueMulti multi;
  std::thread thread;

  mutable std::mutex mutex;
  std::vector<std::unique_ptr<Transfer>> queued;  // guarded by mutex
  bool stopping = false;                          // guarded by mutex
  std::atomic<int> in_flight{0};

  // Loop thread only.
  std::vector<std::unique_ptr<Transfer>> active;
  std::vector<UniqueEasy> spare_handles;

  void Loop();
  void Begin(std::unique_ptr<Transfer> t);
  void Finish(Transfer* t, CURLcode code);
  void Complete(std::unique_ptr<Transfer> t);
  void Abandon(Transfer* t, TransportError error, std::string message);
  std::unique_ptr<Transfer> Detach(Transfer* t);
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
  impl->multi.reset(curl_multi_init());
  if (!impl->multi) return Internal("libcurl: cannot create a multi handle");
  CURLM* m = impl->multi.get();
  curl_multi_setopt(m, CURLMOPT_PIPELINING, long{CURLPIPE_MULTIPLEX});
  curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, options.max_connections_per_host);
  curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, options.max_total_connections);
  curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, options.max_total_connections);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->Loop(); });
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

HttpClient::~HttpClient() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  curl_multi_wakeup(impl_->multi.get());
  impl_->thread.join();
}

int HttpClient::InFlight() const { return impl_->in_flight.load(); }

void HttpClient::Start(HttpRequest request, ResponseSink* sink,
                       std::function<void(HttpResponse)> done) {
  auto t = std::make_unique<Transfer>();
  t->request = std::move(request);
  t->sink = sink;
  t->done = std::move(done);
  t->max_response_bytes = impl_->options.max_response_bytes;
  impl_->in_flight.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (!impl_->stopping) {
      impl_->queued.push_back(std::move(t));
    }
  }
  if (t) {  // the client is being destroyed
    t->response.error = TransportError::kCancelled;
    t->response.error_message = "the HTTP client is shutting down";
    impl_->Complete(std::move(t));
    return;
  }
  curl_multi_wakeup(impl_->multi.get());
}

HttpResponse HttpClient::Perform(const HttpRequest& request, ResponseSink* sink) {
  std::promise<HttpResponse> promise;
  std::future<HttpResponse> future = promise.get_future();
  Start(request, sink, [&promise](HttpResponse r) { promise.set_value(std::move(r)); });
  return future.get();
}

void HttpClient::Impl::Begin(std::unique_ptr<Transfer> t) {
  if (!spare_handles.empty()) {
    t->easy = std::move(spare_handles.back());
    spare_handles.pop_back();
    curl_easy_reset(t->easy.get());
  } else {
    t->easy.reset(curl_easy_init());
  }
  if (!t->easy) {
    t->response.error = TransportError::kOther;
    t->response.error_message = "libcurl: cannot create a transfer";
    Complete(std::move(t));
    return;
  }
  const HttpRequest& r = t->request;
  CURL* e = t->easy.get();
  curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error_buffer);
  curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_2TLS});
  curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  // A minutes-long prefill sends nothing: keep the connection alive through NATs and proxies.
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 15L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::max(1.0, r.connect_timeout_s * 1000)));
  if (r.total_timeout_s > 0) {
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(std::max(1.0, r.total_timeout_s * 1000)));
  }
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());

  curl_slist* list = nullptr;
  for (const std::string& h : r.headers) list = curl_slist_append(list, h.c_str());
  if (!r.api_key.empty()) list = curl_slist_append(list, r.api_key.AuthorizationHeader().c_str());
  if (r.method == "POST") {
    // No "Expect: 100-continue" round trip before a large body.
    list = curl_slist_append(list, "Expect:");
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    if (r.body != nullptr) {
      if (Status s = r.body->Rewind(); !s.ok()) {
        t->response.error = TransportError::kBodyFailed;
        t->response.error_message = "request body: " + s.message();
        curl_slist_free_all(list);
        Complete(std::move(t));
        return;
      }
      curl_easy_setopt(e, CURLOPT_READFUNCTION, &Transfer::OnRead);
      curl_easy_setopt(e, CURLOPT_READDATA, t.get());
      curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, &Transfer::OnSeek);
      curl_easy_setopt(e, CURLOPT_SEEKDATA, t.get());
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
  t->header_list.reset(list);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, list);

  t->started = Clock::now();
  t->last_activity = t->started;
  if (curl_multi_add_handle(multi.get(), e) != CURLM_OK) {
    t->response.error = TransportError::kOther;
    t->response.error_message = "libcurl: cannot start the transfer";
    Complete(std::move(t));
    return;
  }
  active.push_back(std::move(t));
}

std::unique_ptr<Transfer> HttpClient::Impl::Detach(Transfer* t) {
  curl_multi_remove_handle(multi.get(), t->easy.get());
  auto it = std::find_if(active.begin(), active.end(),
                         [t](const std::unique_ptr<Transfer>& p) { return p.get() == t; });
  std::unique_ptr<Transfer> owned = std::move(*it);
  active.erase(it);
  return owned;
}

void HttpClient::Impl::Finish(Transfer* t, CURLcode code) {
  HttpResponse& r = t->response;
  long status = 0;
  curl_easy_getinfo(t->easy.get(), CURLINFO_RESPONSE_CODE, &status);
  r.status = static_cast<int>(status);
  long version = 0;
  curl_easy_getinfo(t->easy.get(), CURLINFO_HTTP_VERSION, &version);
  r.http_version = version == CURL_HTTP_VERSION_2_0   ? "2"
                   : version == CURL_HTTP_VERSION_3   ? "3"
                   : version == CURL_HTTP_VERSION_1_0 ? "1.0"
                   : version == CURL_HTTP_VERSION_1_1 ? "1.1"
                                                      : "";
  if (code != CURLE_OK) {
    std::string detail = t->error_buffer[0] != '\0' ? t->error_buffer : curl_easy_strerror(code);
    if (t->abort_reason != TransportError::kNone) {
      r.error = t->abort_reason;
      r.error_message = t->abort_message;
    } else {
      switch (code) {
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CACERT_BADFILE:
          r.error = TransportError::kConnect;
          break;
        case CURLE_OPERATION_TIMEDOUT: {
          curl_off_t connected = 0;
          curl_easy_getinfo(t->easy.get(), CURLINFO_CONNECT_TIME_T, &connected);
          r.error =
              connected == 0 ? TransportError::kConnectTimeout : TransportError::kTotalTimeout;
          break;
        }
        case CURLE_SEND_ERROR:
          r.error = TransportError::kSendFailed;
          break;
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
          r.error = TransportError::kReceiveFailed;
          break;
        default:
          r.error = TransportError::kOther;
          break;
      }
      r.error_message = detail;
    }
  }
  std::unique_ptr<Transfer> owned = Detach(t);
  owned->response.seconds_total = SecondsBetween(owned->started, Clock::now());
  Complete(std::move(owned));
}

void HttpClient::Impl::Abandon(Transfer* t, TransportError error, std::string message) {
  std::unique_ptr<Transfer> owned = Detach(t);
  long status = 0;
  curl_easy_getinfo(owned->easy.get(), CURLINFO_RESPONSE_CODE, &status);
  owned->response.status = static_cast<int>(status);
  owned->response.error = error;
  owned->response.error_message = std::move(message);
  owned->response.seconds_total = SecondsBetween(owned->started, Clock::now());
  Complete(std::move(owned));
}

void HttpClient::Impl::Complete(std::unique_ptr<Transfer> t) {
  if (t->easy) {
    if (spare_handles.size() < 64) {
      spare_handles.push_back(std::move(t->easy));
    } else {
      t->easy.reset();
    }
  }
  auto done = std::move(t->done);
  HttpResponse response = std::move(t->response);
  t.reset();
  in_flight.fetch_sub(1);
  if (done) done(std::move(response));
}

void HttpClient::Impl::Loop() {
  while (true) {
    std::vector<std::unique_ptr<Transfer>> incoming;
    bool stop = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      incoming.swap(queued);
      stop = stopping;
    }
    if (stop) {
      for (auto& t : incoming) {
        t->response.error = TransportError::kCancelled;
        t->response.error_message = "the HTTP client is shutting down";
        Complete(std::move(t));
      }
      while (!active.empty()) {
        Abandon(active.back().get(), TransportError::kCancelled,
                "the HTTP client is shutting down");
      }
      return;
    }
    for (auto& t : incoming) Begin(std::move(t));

    int running = 0;
    curl_multi_perform(multi.get(), &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
      Finish(t, msg->data.result);
    }

    // Our own timers: silence (the read timeout) and cancellation.
    const Clock::time_point now = Clock::now();
    for (size_t i = 0; i < active.size();) {
      Transfer* t = active[i].get();
      if (t->request.cancel != nullptr && t->request.cancel->load()) {
        Abandon(t, TransportError::kCancelled, "cancelled");
        continue;
      }
      // A transfer still waiting for a free connection is not silent yet (the connect timeout
      // covers connecting).
      curl_off_t pretransfer = 0;
      curl_easy_getinfo(t->easy.get(), CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
      if (pretransfer == 0 && t->response.bytes_sent == 0 && !t->got_first_byte) {
        t->last_activity = now;
      }
      const double idle = SecondsBetween(t->last_activity, now);
      if (t->request.idle_timeout_s > 0 && idle > t->request.idle_timeout_s) {
        char text[96];
        std::snprintf(text, sizeof(text), "no data for %.3g s (read timeout)",
                      t->request.idle_timeout_s);
        Abandon(t, TransportError::kIdleTimeout, text);
        continue;
      }
      ++i;
    }

    long wait_ms = active.empty() ? 60000 : 100;
    long curl_ms = -1;
    curl_multi_timeout(multi.get(), &curl_ms);
    if (curl_ms >= 0) wait_ms = std::min(wait_ms, curl_ms);
    curl_multi_poll(multi.get(), nullptr, 0, static_cast<int>(wait_ms), nullptr);
  }
}

}  // namespace reel::llm
