// The PDF reader behind a process boundary. Poppler has no allocation or time hooks, and an
// embedded font is read whole into memory: a 2 MB file can ask for 2 GB. So each PDF is read by
// a program of its own, reel-pdf-reader (pipeline/documents/pdf_reader_main.cc), started fresh
// with posix_spawn, with an address-space limit (RLIMIT_AS: its size at start plus
// limits.memory_bytes) and no core dumps. It takes the file, the first page and the options on
// its standard input and sends the pages back on its standard output; the parent enforces the
// wall-clock limit and kills it past it. A reader that dies on a page (out of memory, a crash in
// the library) fails that page; a new one goes on from the next page.
//
// Not a bare fork(): a forked copy of a process with other threads inherits every lock one of
// them held at that moment, and the copy waits for it forever. glibc's time-zone lock, which
// Little CMS takes when Poppler draws a page and Reel's threads take to stamp times, hung a
// `reel run` that way (and AddressSanitizer's allocator did the same before). A new program
// starts with no locks held and no other descriptors of the parent (its pipes included).
//
// Where reel-pdf-reader is: $REEL_PDF_READER, else beside the running program (`reel` and it are
// built and installed side by side), else where the build put it. Without it a PDF is read in
// this process, without the memory limit, and the report says so.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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

extern char** environ;

namespace reel::pipeline::documents {
namespace {

enum RecordType : uint8_t { kInfo = 1, kPage = 2, kEnd = 3, kRequest = 4 };

class Writer {
 public:
  void U32(uint32_t v) { buf_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void I32(int32_t v) { buf_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void I64(int64_t v) { buf_.append(reinterpret_cast<const char*>(&v), sizeof v); }
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

void PutOptions(Writer& w, const DocumentOptions& o) {
  w.I32(o.pages.first);
  w.I32(o.pages.last);
  w.I32(o.text ? 1 : 0);
  w.I32(o.images ? 1 : 0);
  w.F64(o.render_dpi);
  w.I32(static_cast<int32_t>(o.resize.mode));
  w.I32(o.resize.smart.factor);
  w.I64(o.resize.smart.min_pixels);
  w.I64(o.resize.smart.max_pixels);
  w.F64(o.resize.smart.max_aspect_ratio);
  w.I32(o.resize.long_side.factor);
  w.I32(o.resize.long_side.max_long_side);
  w.I32(static_cast<int32_t>(o.resize.shape));
  w.I32(o.resize.deinterlace ? 1 : 0);
  w.I32(o.ocr.enabled ? 1 : 0);
  w.U32(static_cast<uint32_t>(o.ocr.languages.size()));
  for (const std::string& language : o.ocr.languages) w.Str(language);
  w.I32(o.ocr.dpi);
  w.I32(o.ocr.min_text_chars);
  w.I32(o.limits.max_pages);
  w.I64(o.limits.max_page_pixels);
  w.I64(o.limits.max_file_bytes);
  w.I64(o.limits.memory_bytes);
  w.F64(o.limits.time_limit_s);
}

void GetOptions(ReaderOf& r, DocumentOptions& o) {
  o.pages.first = r.Raw<int32_t>();
  o.pages.last = r.Raw<int32_t>();
  o.text = r.Raw<int32_t>() != 0;
  o.images = r.Raw<int32_t>() != 0;
  o.render_dpi = r.Raw<double>();
  o.resize.mode = static_cast<ResizeMode>(r.Raw<int32_t>());
  o.resize.smart.factor = r.Raw<int32_t>();
  o.resize.smart.min_pixels = r.Raw<int64_t>();
  o.resize.smart.max_pixels = r.Raw<int64_t>();
  o.resize.smart.max_aspect_ratio = r.Raw<double>();
  o.resize.long_side.factor = r.Raw<int32_t>();
  o.resize.long_side.max_long_side = r.Raw<int32_t>();
  o.resize.shape = static_cast<FrameShape>(r.Raw<int32_t>());
  o.resize.deinterlace = r.Raw<int32_t>() != 0;
  o.ocr.enabled = r.Raw<int32_t>() != 0;
  o.ocr.languages.clear();
  const uint32_t languages = r.Raw<uint32_t>();
  for (uint32_t i = 0; i < languages && r.ok(); ++i) o.ocr.languages.push_back(r.Str());
  o.ocr.dpi = r.Raw<int32_t>();
  o.ocr.min_text_chars = r.Raw<int32_t>();
  o.limits.max_pages = r.Raw<int32_t>();
  o.limits.max_page_pixels = r.Raw<int64_t>();
  o.limits.max_file_bytes = r.Raw<int64_t>();
  o.limits.memory_bytes = r.Raw<int64_t>();
  o.limits.time_limit_s = r.Raw<double>();
}

// What the parent asks of one reader: the file, its name for messages, the first page, the
// options.
std::string EncodeRequest(const std::string& path, const std::string& name, int first_page,
                          const DocumentOptions& options) {
  Writer w;
  w.Str(path);
  w.Str(name);
  w.I32(first_page);
  PutOptions(w, options);
  return w.Record(kRequest);
}

std::string DescribeExit(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    return std::string("killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(wstatus)) return "exited with status " + std::to_string(WEXITSTATUS(wstatus));
  return "stopped";
}

bool Executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}

// Where reel-pdf-reader is (see the top of this file), or "" with where it was looked for.
std::string FindPdfReaderProgram(std::string* looked) {
  if (const char* set = std::getenv("REEL_PDF_READER"); set != nullptr && *set != '\0') {
    *looked = std::string("$REEL_PDF_READER (") + set + ")";
    return Executable(set) ? set : "";
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string beside = ec ? "" : (self.parent_path() / kPdfReaderProgram).string();
  if (Executable(beside)) return beside;
  *looked = beside.empty() ? std::string(kPdfReaderProgram) + " beside this program" : beside;
#ifdef REEL_PDF_READER_BUILT_AT
  if (Executable(REEL_PDF_READER_BUILT_AT)) return REEL_PDF_READER_BUILT_AT;
  *looked += std::string(" and ") + REEL_PDF_READER_BUILT_AT;
#endif
  return "";
}

// A running reader: killed and waited for when it goes out of scope unless reaped.
struct ReaderProcess {
  pid_t pid = -1;
  int from = -1;  // its standard output
  int wstatus = 0;
  bool reaped = false;
  ReaderProcess() = default;
  ReaderProcess(const ReaderProcess&) = delete;
  ReaderProcess& operator=(const ReaderProcess&) = delete;
  ~ReaderProcess() {
    if (pid > 0 && !reaped) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
      }
    }
    if (from >= 0) ::close(from);
  }
};

// Starts `program` with `request` on its standard input (a pipe it reads to the end) and its
// standard output on a pipe whose read end goes to `reader.from`. Its own process group: Ctrl-C
// at a terminal stops the run, which then stops the reader, rather than failing a page.
Status StartReader(const std::string& program, const std::string& request, const std::string& name,
                   ReaderProcess& reader) {
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) {
    return IoError(name + ": cannot make a pipe: " + std::strerror(errno));
  }
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(to_child[0]);
    ::close(to_child[1]);
    return IoError(name + ": cannot make a pipe: " + std::strerror(error));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  const char* argv[] = {program.c_str(), nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, program.c_str(), &actions, &attributes,
                                  const_cast<char* const*>(argv), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (spawned != 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    return IoError(name + ": cannot start the PDF reader " + program + ": " +
                   std::strerror(spawned));
  }
  reader.pid = pid;
  reader.from = from_child[0];
  // The request is a few hundred bytes: within a pipe's buffer, so this does not wait for the
  // reader. A reader that died at once is seen when its output ends.
  WriteAll(to_child[1], request);
  ::close(to_child[1]);
  return Status::Ok();
}

class IsolatedPdfReader : public FormatReader {
 public:
  Status Read(const std::string& path, PageOutput& out) override;

 private:
  // One reader from `first_page` on. Sets `last_page` to the last page received, `page_count`
  // once known; `ended` when the reader finished (its status returned), else it died.
  Status RunOnce(const std::string& program, const std::string& path, PageOutput& out,
                 int first_page, int& last_page, int& page_count, bool& ended, std::string& death);
};

Status IsolatedPdfReader::RunOnce(const std::string& program, const std::string& path,
                                  PageOutput& out, int first_page, int& last_page, int& page_count,
                                  bool& ended, std::string& death) {
  ended = false;
  ReaderProcess child;
  REEL_RETURN_IF_ERROR(StartReader(
      program, EncodeRequest(path, out.name(), first_page, out.options()), out.name(), child));
  const int fd = child.from;
  const pid_t pid = child.pid;

  std::string buffer;
  Status result;
  bool stop = false;
  char chunk[1 << 16];
  while (!stop) {
    Status time = out.CheckTime();
    if (!time.ok()) return time;  // the reader is killed on the way out
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 200);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the reader is gone
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
  while (::waitpid(pid, &child.wstatus, 0) < 0 && errno == EINTR) {
  }
  child.reaped = true;
  if (!ended) death = DescribeExit(child.wstatus);
  return result;
}

Status IsolatedPdfReader::Read(const std::string& path, PageOutput& out) {
  if (!out.options().isolate) return ReadPdfInProcess(path, out, 1);
  std::string looked;
  const std::string program = FindPdfReaderProgram(&looked);
  if (program.empty()) {
    out.report().notes.push_back(
        "read in this process, without the memory limit: the PDF reader program " +
        std::string(kPdfReaderProgram) + " was not found (looked for " + looked +
        "; REEL_PDF_READER names it)");
    return ReadPdfInProcess(path, out, 1);
  }
  constexpr int kMaxCrashes = 8;
  int first_page = 1, crashes = 0, page_count = 0;
  while (true) {
    int last_page = first_page - 1;
    bool ended = false;
    std::string death;
    Status status = RunOnce(program, path, out, first_page, last_page, page_count, ended, death);
    if (ended || !status.ok()) return status;
    const std::string memory = std::to_string(out.options().limits.memory_bytes >> 20);
    if (page_count == 0) {
      return CorruptData(out.name() + ": the PDF reader stopped while opening the file (" + death +
                         "; the memory limit is " + memory + " MiB)");
    }
    // The reader died on the next wanted page after the last one it sent.
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

int RunPdfReaderProgram(int in_fd, int out_fd) {
  // Dies with the run that started it (a killed `reel run` leaves no reader behind). A run that
  // died before this line left the request unfinished: the reader stops below. (Not a getppid()
  // check: `reel` may itself be process 1, in a container.)
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGPIPE, SIG_IGN);
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  std::string request;
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    request.append(chunk, static_cast<size_t>(n));
  }
  uint32_t length = 0;
  if (request.size() < 5 || request[0] != static_cast<char>(kRequest)) {
    std::fprintf(stderr, "%s: no request on standard input (Reel starts this program)\n",
                 kPdfReaderProgram);
    return 2;
  }
  std::memcpy(&length, request.data() + 1, sizeof length);
  ReaderOf r(std::string_view(request).substr(5));
  const std::string path = r.Str();
  const std::string name = r.Str();
  const int first_page = r.Raw<int32_t>();
  DocumentOptions options;
  GetOptions(r, options);
  if (!r.ok() || length != request.size() - 5) {
    std::fprintf(stderr, "%s: a malformed request\n", kPdfReaderProgram);
    return 2;
  }
#ifndef REEL_DOCUMENTS_ASAN
  // (AddressSanitizer reserves terabytes of shadow memory; the fuzz builds rely on its own limits.)
  const int64_t limit = AddressSpaceBytes() + options.limits.memory_bytes;
  rlimit as{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
  setrlimit(RLIMIT_AS, &as);
#endif
  DocumentReport report;
  PageSink sink = [&](DocumentPage&& page) -> Status {
    if (!WriteAll(out_fd, EncodePage(page))) return IoError("pipe closed");
    return Status::Ok();
  };
  PageOutput out(options, sink, report, name);
  out.OnPageCount([out_fd](int page_count) {
    Writer w;
    w.I32(page_count);
    WriteAll(out_fd, w.Record(kInfo));
  });
  Status status = ReadPdfInProcess(path, out, first_page);
  Writer w;
  PutStatus(w, status);
  w.I32(report.page_count);
  w.Str(report.title);
  w.I32(report.truncated ? 1 : 0);
  w.U32(static_cast<uint32_t>(report.notes.size()));
  for (const std::string& note : report.notes) w.Str(note);
  return WriteAll(out_fd, w.Record(kEnd)) ? 0 : 1;
}

std::unique_ptr<FormatReader> MakePdfReader() { return std::make_unique<IsolatedPdfReader>(); }

}  // namespace reel::pipeline::documents
