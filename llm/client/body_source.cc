#include "llm/client/body_source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace reel::llm {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr size_t kChunk = 48 * 1024;  // a multiple of 3: whole base64 quads per chunk

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using UniqueFile = std::unique_ptr<std::FILE, FileCloser>;

// Appends the base64 of `n` bytes; `n` must be a multiple of 3 unless this is the end.
void AppendBase64(const unsigned char* in, size_t n, std::string* out) {
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    const char quad[4] = {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63],
                          kAlphabet[v & 63]};
    out->append(quad, 4);
  }
  if (i < n) {
    uint32_t v = uint32_t{in[i]} << 16;
    if (i + 1 < n) v |= uint32_t{in[i + 1]} << 8;
    out->push_back(kAlphabet[v >> 18]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=');
    out->push_back('=');
  }
}

Result<int64_t> FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound(path + ": no such file");
    return IoError(path + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  return static_cast<int64_t>(st.st_size);
}

// Reads exactly the file's recorded size, in order.
class FileReader {
 public:
  FileReader(std::string path, int64_t size) : path_(std::move(path)), size_(size) {}

  // Reads up to `n` bytes; fewer only at the recorded end.
  Result<size_t> Read(char* out, size_t n) {
    if (!file_) {
      file_.reset(std::fopen(path_.c_str(), "rb"));
      if (!file_) return IoError(path_ + ": cannot open: " + std::strerror(errno));
    }
    const size_t want = static_cast<size_t>(std::min<int64_t>(n, size_ - done_));
    size_t got = 0;
    while (got < want) {
      const size_t r = std::fread(out + got, 1, want - got, file_.get());
      if (r == 0) {
        if (std::ferror(file_.get())) return IoError(path_ + ": read error");
        return IoError(path_ + ": file became shorter while it was being sent (" +
                       std::to_string(done_ + got) + " of " + std::to_string(size_) + " bytes)");
      }
      got += r;
    }
    done_ += static_cast<int64_t>(got);
    if (done_ == size_) file_.reset();
    return got;
  }
  void Rewind() {
    file_.reset();
    done_ = 0;
  }
  int64_t size() const { return size_; }

 private:
  std::string path_;
  int64_t size_;
  int64_t done_ = 0;
  UniqueFile file_;
};

}  // namespace

Result<std::string> ReadAll(BodySource& source) {
  REEL_RETURN_IF_ERROR(source.Rewind());
  std::string out;
  if (source.Size() > 0) out.reserve(static_cast<size_t>(source.Size()));
  char buffer[16384];
  while (true) {
    REEL_ASSIGN_OR_RETURN(size_t n, source.Read(buffer, sizeof(buffer)));
    if (n == 0) break;
    out.append(buffer, n);
  }
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve(static_cast<size_t>(Base64Length(static_cast<int64_t>(bytes.size()))));
  AppendBase64(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), &out);
  return out;
}

Result<size_t> StringBody::Read(char* out, size_t capacity) {
  const size_t n = std::min(capacity, text_.size() - offset_);
  std::memcpy(out, text_.data() + offset_, n);
  offset_ += n;
  return n;
}

// One part of a ComposedBody. Each kind keeps its own read position.
struct ComposedBody::Part {
  virtual ~Part() = default;
  virtual int64_t Size() const = 0;
  virtual Result<size_t> Read(char* out, size_t capacity) = 0;
  virtual Status Rewind() = 0;
};

namespace {

struct TextPart final : ComposedBody::Part {
  explicit TextPart(std::string t) : body(std::move(t)) {}
  int64_t Size() const override { return body.Size(); }
  Result<size_t> Read(char* out, size_t capacity) override { return body.Read(out, capacity); }
  Status Rewind() override { return body.Rewind(); }
  StringBody body;
};

struct SourcePart final : ComposedBody::Part {
  explicit SourcePart(std::shared_ptr<BodySource> s) : source(std::move(s)) {}
  int64_t Size() const override { return source->Size(); }
  Result<size_t> Read(char* out, size_t capacity) override { return source->Read(out, capacity); }
  Status Rewind() override { return source->Rewind(); }
  std::shared_ptr<BodySource> source;
};

struct FilePart final : ComposedBody::Part {
  FilePart(std::string path, int64_t size) : reader(std::move(path), size) {}
  int64_t Size() const override { return reader.size(); }
  Result<size_t> Read(char* out, size_t capacity) override { return reader.Read(out, capacity); }
  Status Rewind() override {
    reader.Rewind();
    return Status::Ok();
  }
  FileReader reader;
};

// Base64 of bytes in memory or of a file, encoded one chunk at a time.
struct Base64Part final : ComposedBody::Part {
  explicit Base64Part(std::shared_ptr<const std::string> b) : bytes(std::move(b)) {}
  Base64Part(std::string path, int64_t size) : file(std::make_unique<FileReader>(path, size)) {}

  int64_t InputSize() const { return file ? file->size() : static_cast<int64_t>(bytes->size()); }
  int64_t Size() const override { return Base64Length(InputSize()); }

  Result<size_t> Read(char* out, size_t capacity) override {
    if (pending_pos == pending.size()) {
      pending.clear();
      pending_pos = 0;
      const int64_t left = InputSize() - consumed;
      if (left == 0) return size_t{0};
      const size_t n = static_cast<size_t>(std::min<int64_t>(kChunk, left));
      if (file) {
        raw.resize(n);
        REEL_ASSIGN_OR_RETURN(size_t got, file->Read(raw.data(), n));
        AppendBase64(reinterpret_cast<const unsigned char*>(raw.data()), got, &pending);
      } else {
        AppendBase64(reinterpret_cast<const unsigned char*>(bytes->data()) + consumed, n, &pending);
      }
      consumed += static_cast<int64_t>(n);
    }
    const size_t n = std::min(capacity, pending.size() - pending_pos);
    std::memcpy(out, pending.data() + pending_pos, n);
    pending_pos += n;
    return n;
  }

  Status Rewind() override {
    if (file) file->Rewind();
    consumed = 0;
    pending.clear();
    pending_pos = 0;
    return Status::Ok();
  }

  std::shared_ptr<const std::string> bytes;
  std::unique_ptr<FileReader> file;
  int64_t consumed = 0;  // input bytes encoded so far
  std::string raw;       // one chunk of file bytes
  std::string pending;   // encoded text not yet handed out
  size_t pending_pos = 0;
};

}  // namespace

ComposedBody::ComposedBody() = default;
ComposedBody::~ComposedBody() = default;

void ComposedBody::AddText(std::string text) {
  if (text.empty()) return;
  parts_.push_back(std::make_unique<TextPart>(std::move(text)));
}

void ComposedBody::AddSource(std::shared_ptr<BodySource> source) {
  parts_.push_back(std::make_unique<SourcePart>(std::move(source)));
}

Status ComposedBody::AddFile(const std::string& path) {
  REEL_ASSIGN_OR_RETURN(int64_t size, FileSize(path));
  parts_.push_back(std::make_unique<FilePart>(path, size));
  return Status::Ok();
}

void ComposedBody::AddBase64(std::shared_ptr<const std::string> bytes) {
  parts_.push_back(std::make_unique<Base64Part>(std::move(bytes)));
}

Status ComposedBody::AddBase64OfFile(const std::string& path) {
  REEL_ASSIGN_OR_RETURN(int64_t size, FileSize(path));
  parts_.push_back(std::make_unique<Base64Part>(path, size));
  return Status::Ok();
}

int64_t ComposedBody::Size() const {
  int64_t total = 0;
  for (const auto& part : parts_) {
    const int64_t n = part->Size();
    if (n < 0) return -1;
    total += n;
  }
  return total;
}

Result<size_t> ComposedBody::Read(char* out, size_t capacity) {
  size_t written = 0;
  while (written < capacity && current_ < parts_.size()) {
    REEL_ASSIGN_OR_RETURN(size_t n, parts_[current_]->Read(out + written, capacity - written));
    if (n == 0) {
      ++current_;
    } else {
      written += n;
    }
  }
  return written;
}

Status ComposedBody::Rewind() {
  for (auto& part : parts_) REEL_RETURN_IF_ERROR(part->Rewind());
  current_ = 0;
  return Status::Ok();
}

}  // namespace reel::llm
