// The PDF reader behind a process boundary. Poppler has no allocation or time hooks, and an
// embedded font is read whole into memory: a 2 MB file can ask for 2 GB. So each PDF is read by
// a forked child with an address-space limit (RLIMIT_AS: the child's size at the fork plus
// limits.memory_bytes) and no core dumps, which sends its pages back over a pipe; the parent
// enforces the wall-clock limit and kills the child past it. A child that dies on a page (out
// of memory, a crash in the library) fails that page; a new child goes on from the next one.
//
// The child only runs Poppler, Tesseract, malloc and this file's code, none of which the parent
// has touched, so forking from a process with other threads does not meet a lock held at the
// fork (glibc resets malloc's own locks in the child).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "pipeline/documents/internal/format_reader.h"

#if defined(__SANITIZE_ADDRESS__)
#define REEL_DOCUMENTS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REEL_DOCUMENTS_ASAN 1
#endif
#endif

namespace reel::pipeline::documents {
namespace {

enum RecordType : uint8_t { kInfo = 1, kPage = 2, kEnd = 3 };

class Writer {
 public:
  void U32(uint32_t v) { buf_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void I32(int32_t v) { buf_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void F64(double v) { buf_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    buf_.append(s);
  }
  std::string Record(RecordType type) {
    std::string out(1, static_cast<char>(type));
    const uint32_t n = static_cast<uint32_t>(buf_.size());
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += buf_;
    return out;
  }

 private:
  std::string buf_;
};

class ReaderOf {
 public:
  explicit ReaderOf(std::string_view data) : data_(data) {}
  template <typename T>
  T Raw() {
    T v{};
    if (data_.size() < sizeof v) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, data_.data(), sizeof v);
    data_.remove_prefix(sizeof v);
    return v;
  }
  std::string Str() {
    const uint32_t n = Raw<uint32_t>();
    if (!ok_ || data_.size() < n) {
      ok_ = false;
      return {};
    }
    std::string s(data_.substr(0, n));
    data_.remove_prefix(n);
    return s;
  }
  bool ok() const { return ok_; }

 private:
  std::string_view data_;
  bool ok_ = true;
};

void PutStatus(Writer& w, const Status& s) {
  w.I32(static_cast<int32_t>(s.code()));
  w.Str(s.message());
}

Status GetStatus(ReaderOf& r) {
  const auto code = static_cast<ErrorCode>(r.Raw<int32_t>());
  std::string message = r.Str();
  if (code == ErrorCode::kOk) return Status::Ok();
  return Status(code, std::move(message));
}

std::string EncodePage(const DocumentPage& p) {
  Writer w;
  w.I32(p.number);
  w.Str(p.label);
  w.Str(p.title);
  w.F64(p.width_pt);
  w.F64(p.height_pt);
  w.Str(p.text);
  w.I32(static_cast<int32_t>(p.source));
  w.F64(p.ocr_confidence);
  w.I32(p.image.width);
  w.I32(p.image.height);
  w.I32(p.image.channels);
  w.Str(std::string_view(reinterpret_cast<const char*>(p.image.pixels.data()),
                         p.image.pixels.size()));
  PutStatus(w, p.error);
  return w.Record(kPage);
}

bool DecodePage(std::string_view data, DocumentPage& p) {
  ReaderOf r(data);
  p.number = r.Raw<int32_t>();
  p.label = r.Str();
  p.title = r.Str();
  p.width_pt = r.Raw<double>();
  p.height_pt = r.Raw<double>();
  p.text = r.Str();
  p.source = static_cast<TextSource>(r.Raw<int32_t>());
  p.ocr_confidence = r.Raw<double>();
  p.image.width = r.Raw<int32_t>();
  p.image.height = r.Raw<int32_t>();
  p.image.channels = r.Raw<int32_t>();
  const std::string pixels = r.Str();
  p.image.pixels.assign(pixels.begin(), pixels.end());
  p.error = GetStatus(r);
  return r.ok() && p.image.pixels.size() == static_cast<size_t>(std::max(0, p.image.width)) *
                                                std::max(0, p.image.height) *
                                                std::max(0, p.image.channels);
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

#ifndef REEL_DOCUMENTS_ASAN
int64_t AddressSpaceBytes() {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen("/proc/self/statm", "r"), std::fclose);
  long pages = 0;
  if (!f || std::fscanf(f.get(), "%ld", &pages) != 1) return 0;
  return static_cast<int64_t>(pages) * sysconf(_SC_PAGESIZE);
}
#endif

// In the child: limits, then the in-process reader with a sink that writes to `fd`.
[[noreturn]] void RunChild(int fd, const std::string& path, const DocumentOptions& options,
                           const std::string& name, int first_page) {
  signal(SIGPIPE, SIG_IGN);
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
#ifndef REEL_DOCUMENTS_ASAN
  // (AddressSanitizer reserves terabytes of shadow memory; the fuzz builds rely on its own limits.)
  const int64_t limit = AddressSpaceBytes() + options.limits.memory_bytes;
  rlimit as{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
  setrlimit(RLIMIT_AS, &as);
#endif
  DocumentReport report;
  PageSink sink = [&](DocumentPage&& page) -> Status {
    if (!WriteAll(fd, EncodePage(page))) return IoError("pipe closed");
    return Status::Ok();
  };
  PageOutput out(options, sink, report, name);
  out.OnPageCount([fd](int page_count) {
    Writer w;
    w.I32(page_count);
    WriteAll(fd, w.Record(kInfo));
  });
  Status status = ReadPdfInProcess(path, out, first_page);
  Writer w;
  PutStatus(w, status);
  w.I32(report.page_count);
  w.Str(report.title);
  w.I32(report.truncated ? 1 : 0);
  w.U32(static_cast<uint32_t>(report.notes.size()));
  for (const std::string& note : report.notes) w.Str(note);
  WriteAll(fd, w.Record(kEnd));
  ::close(fd);
  _exit(0);
}

#ifdef REEL_DOCUMENTS_ASAN
// AddressSanitizer's allocator keeps its locks across fork(): a child forked while another
// thread holds one waits for it forever (seen in `reel run`, whose workers allocate all the
// time). The sanitizer build therefore reads in-process while other threads run.
bool OtherThreadsRun() {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen("/proc/self/status", "r"), std::fclose);
  if (!f) return true;
  char line[256];
  while (std::fgets(line, sizeof(line), f.get()) != nullptr) {
    int threads = 0;
    if (std::sscanf(line, "Threads: %d", &threads) == 1) return threads > 1;
  }
  return true;
}
#endif

std::string DescribeExit(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    return std::string("killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(wstatus)) return "exited with status " + std::to_string(WEXITSTATUS(wstatus));
  return "stopped";
}

class IsolatedPdfReader : public FormatReader {
 public:
  Status Read(const std::string& path, PageOutput& out) override;

 private:
  // One child from `first_page` on. Sets `last_page` to the last page received, `page_count`
  // once known; `ended` when the child finished (its status returned), else the child died.
  Status RunOnce(const std::string& path, PageOutput& out, int first_page, int& last_page,
                 int& page_count, bool& ended, std::string& death);
};

Status IsolatedPdfReader::RunOnce(const std::string& path, PageOutput& out, int first_page,
                                  int& last_page, int& page_count, bool& ended,
                                  std::string& death) {
  ended = false;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return IoError(out.name() + ": cannot make a pipe: " + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return IoError(out.name() + ": cannot start the PDF reader: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(fds[1], path, out.options(), out.name(), first_page);
  }
  ::close(fds[1]);
  const int fd = fds[0];
  struct Child {
    pid_t pid;
    int fd;
    int wstatus = 0;
    bool reaped = false;
    ~Child() {
      if (!reaped) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &wstatus, 0);
      }
      ::close(fd);
    }
  } child{pid, fd};

  std::string buffer;
  Status result;
  bool stop = false;
  char chunk[1 << 16];
  while (!stop) {
    Status time = out.CheckTime();
    if (!time.ok()) {
      ::kill(pid, SIGKILL);
      return time;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 200);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child is gone
    buffer.append(chunk, static_cast<size_t>(n));
    size_t used = 0;
    while (buffer.size() - used >= 5) {
      uint32_t length = 0;
      std::memcpy(&length, buffer.data() + used + 1, sizeof length);
      if (buffer.size() - used - 5 < length) break;
      const auto type = static_cast<RecordType>(buffer[used]);
      const std::string_view body(buffer.data() + used + 5, length);
      used += 5 + length;
      if (type == kInfo) {
        ReaderOf r(body);
        page_count = r.Raw<int32_t>();
        out.report().page_count = page_count;
      } else if (type == kPage) {
        DocumentPage page;
        if (!DecodePage(body, page)) return Internal(out.name() + ": bad page from the PDF reader");
        last_page = page.number;
        Status emitted = out.Emit(std::move(page));
        if (!emitted.ok()) return emitted;
      } else if (type == kEnd) {
        ReaderOf r(body);
        result = GetStatus(r);
        DocumentReport& report = out.report();
        const int count = r.Raw<int32_t>();
        if (count > 0) report.page_count = page_count = count;
        report.title = r.Str();
        report.truncated = r.Raw<int32_t>() != 0;
        const uint32_t notes = r.Raw<uint32_t>();
        for (uint32_t i = 0; i < notes && r.ok(); ++i) report.notes.push_back(r.Str());
        ended = true;
        stop = true;
        break;
      } else {
        return Internal(out.name() + ": bad record from the PDF reader");
      }
    }
    buffer.erase(0, used);
  }
  ::waitpid(pid, &child.wstatus, 0);
  child.reaped = true;
  if (!ended) death = DescribeExit(child.wstatus);
  return result;
}

Status IsolatedPdfReader::Read(const std::string& path, PageOutput& out) {
  if (!out.options().isolate) return ReadPdfInProcess(path, out, 1);
#ifdef REEL_DOCUMENTS_ASAN
  if (OtherThreadsRun()) return ReadPdfInProcess(path, out, 1);
#endif
  constexpr int kMaxCrashes = 8;
  int first_page = 1, crashes = 0, page_count = 0;
  while (true) {
    int last_page = first_page - 1;
    bool ended = false;
    std::string death;
    Status status = RunOnce(path, out, first_page, last_page, page_count, ended, death);
    if (ended || !status.ok()) return status;
    const std::string memory = std::to_string(out.options().limits.memory_bytes >> 20);
    if (page_count == 0) {
      return CorruptData(out.name() + ": the PDF reader stopped while opening the file (" + death +
                         "; the memory limit is " + memory + " MiB)");
    }
    // The child died on the next wanted page after the last one it sent.
    int failed = last_page + 1;
    while (failed <= page_count && !out.Wanted(failed)) ++failed;
    if (failed > out.LastWanted(page_count)) return Status::Ok();
    DocumentPage page;
    page.number = failed;
    page.error = CorruptData("page " + std::to_string(failed) + ": the PDF reader stopped on it (" +
                             death + "; the memory limit is " + memory + " MiB)");
    REEL_RETURN_IF_ERROR(out.Emit(std::move(page)));
    if (++crashes >= kMaxCrashes) {
      return CorruptData(out.name() + ": the PDF reader stopped on " + std::to_string(crashes) +
                         " pages; giving up after page " + std::to_string(failed));
    }
    first_page = failed + 1;
  }
}

}  // namespace

std::unique_ptr<FormatReader> MakePdfReader() { return std::make_unique<IsolatedPdfReader>(); }

}  // namespace reel::pipeline::documents
