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
  const size_t start = out->size();
  out->resize(start + (n + 2) / 3 * 4);
  char* o = out->data() + start;
  size_t i = 0;
  for (; i + 3 <= n; i += 3, o += 4) {
    const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    o[0] = kAlphabet[v >> 18];
    o[1] = kAlphabet[(v >> 12) & 63];
    o[2] = kAlphabet[(v >> 6) & 63];
    o[3] = kAlphabet[v & 63];
  }
  if (i < n) {
    uint32_t v = uint32_t{in[i]} << 16;
    if (i + 1 < n) v |= uint32_t{in[i + 1]} << 8;
    o[0] = kAlphabet[v >> 18];
    o[1] = kAlphabet[(v >> 12) & 63];
    o[2] = i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
    o[3] = '=';
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
  int64_t size() const { return size_; }

 private:
  std::string path_;
  int64_t size_;
  int64_t done_ = 0;
  UniqueFile file_;
};

}  // namespace

Result<std::string> ReadAll(const BodySource& source) {
  std::string out;
  if (source.Size() > 0) out.reserve(static_cast<size_t>(source.Size()));
  std::unique_ptr<BodyReader> reader = source.Open();
  char buffer[16384];
  while (true) {
    REEL_ASSIGN_OR_RETURN(size_t n, reader->Read(buffer, sizeof(buffer)));
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

namespace {

class MemoryReader final : public BodyReader {
 public:
  explicit MemoryReader(std::string_view bytes) : bytes_(bytes) {}
  Result<size_t> Read(char* out, size_t capacity) override {
    const size_t n = std::min(capacity, bytes_.size() - offset_);
    std::memcpy(out, bytes_.data() + offset_, n);
    offset_ += n;
    return n;
  }

 private:
  std::string_view bytes_;
  size_t offset_ = 0;
};

class FileBytesReader final : public BodyReader {
 public:
  FileBytesReader(const std::string& path, int64_t size) : file_(path, size) {}
  Result<size_t> Read(char* out, size_t capacity) override { return file_.Read(out, capacity); }

 private:
  FileReader file_;
};

// Base64 of bytes in memory (`bytes`) or of a file (`path`), encoded one chunk at a time.
class Base64Reader final : public BodyReader {
 public:
  explicit Base64Reader(const std::string* bytes)
      : bytes_(bytes), input_size_(static_cast<int64_t>(bytes->size())) {}
  Base64Reader(const std::string& path, int64_t size)
      : file_(std::make_unique<FileReader>(path, size)), input_size_(size) {}

  Result<size_t> Read(char* out, size_t capacity) override {
    if (pending_pos_ == pending_.size()) {
      pending_.clear();
      pending_pos_ = 0;
      const int64_t left = input_size_ - consumed_;
      if (left == 0) return size_t{0};
      const size_t n = static_cast<size_t>(std::min<int64_t>(kChunk, left));
      if (file_) {
        raw_.resize(n);
        REEL_ASSIGN_OR_RETURN(size_t got, file_->Read(raw_.data(), n));
        AppendBase64(reinterpret_cast<const unsigned char*>(raw_.data()), got, &pending_);
      } else {
        AppendBase64(reinterpret_cast<const unsigned char*>(bytes_->data()) + consumed_, n,
                     &pending_);
      }
      consumed_ += static_cast<int64_t>(n);
    }
    const size_t n = std::min(capacity, pending_.size() - pending_pos_);
    std::memcpy(out, pending_.data() + pending_pos_, n);
    pending_pos_ += n;
    return n;
  }

 private:
  const std::string* bytes_ = nullptr;  // or the file:
  std::unique_ptr<FileReader> file_;
  int64_t input_size_;
  int64_t consumed_ = 0;  // input bytes encoded so far
  std::string raw_;       // one chunk of file bytes
  std::string pending_;   // encoded text not yet handed out
  size_t pending_pos_ = 0;
};

}  // namespace

std::unique_ptr<BodyReader> StringBody::Open() const {
  return std::make_unique<MemoryReader>(text_);
}

void ComposedBody::AddText(std::string text) {
  if (text.empty()) return;
  if (!parts_.empty() && parts_.back().kind == Kind::kText) {
    parts_.back().length += static_cast<int64_t>(text.size());  // joins the previous text
  } else {
    parts_.push_back({Kind::kText, text_.size(), static_cast<int64_t>(text.size())});
  }
  text_ += text;
  if (size_ >= 0) size_ += static_cast<int64_t>(text.size());
}

void ComposedBody::AddSource(std::shared_ptr<const BodySource> source) {
  const int64_t n = source->Size();
  size_ = size_ < 0 || n < 0 ? -1 : size_ + n;
  parts_.push_back({Kind::kSource, sources_.size(), 0});
  sources_.push_back(std::move(source));
}

Status ComposedBody::AddFile(const std::string& path) {
  REEL_ASSIGN_OR_RETURN(int64_t size, FileSize(path));
  parts_.push_back({Kind::kFile, paths_.size(), size});
  paths_.push_back(path);
  if (size_ >= 0) size_ += size;
  return Status::Ok();
}

void ComposedBody::AddBase64(std::shared_ptr<const std::string> bytes) {
  if (size_ >= 0) size_ += Base64Length(static_cast<int64_t>(bytes->size()));
  parts_.push_back({Kind::kBase64Bytes, bytes_.size(), 0});
  bytes_.push_back(std::move(bytes));
}

Status ComposedBody::AddBase64OfFile(const std::string& path) {
  REEL_ASSIGN_OR_RETURN(int64_t size, FileSize(path));
  parts_.push_back({Kind::kBase64File, paths_.size(), size});
  paths_.push_back(path);
  if (size_ >= 0) size_ += Base64Length(size);
  return Status::Ok();
}

int64_t ComposedBody::Size() const { return size_; }

// Walks a ComposedBody's parts, with a reader for the current one.
class ComposedReader final : public BodyReader {
 public:
  explicit ComposedReader(const ComposedBody& body) : body_(body) {}
  Result<size_t> Read(char* out, size_t capacity) override {
    size_t written = 0;
    while (written < capacity) {
      if (!current_) {
        if (next_ == body_.parts_.size()) break;
        current_ = OpenPart(body_.parts_[next_++]);
      }
      REEL_ASSIGN_OR_RETURN(size_t n, current_->Read(out + written, capacity - written));
      if (n == 0) {
        current_.reset();
      } else {
        written += n;
      }
    }
    return written;
  }

 private:
  std::unique_ptr<BodyReader> OpenPart(const ComposedBody::Part& p) const {
    switch (p.kind) {
      case ComposedBody::Kind::kText:
        return std::make_unique<MemoryReader>(
            std::string_view(body_.text_).substr(p.index, static_cast<size_t>(p.length)));
      case ComposedBody::Kind::kSource:
        return body_.sources_[p.index]->Open();
      case ComposedBody::Kind::kFile:
        return std::make_unique<FileBytesReader>(body_.paths_[p.index], p.length);
      case ComposedBody::Kind::kBase64Bytes:
        return std::make_unique<Base64Reader>(body_.bytes_[p.index].get());
      case ComposedBody::Kind::kBase64File:
        return std::make_unique<Base64Reader>(body_.paths_[p.index], p.length);
    }
    return nullptr;
  }

  const ComposedBody& body_;
  size_t next_ = 0;
  std::unique_ptr<BodyReader> current_;
};

std::unique_ptr<BodyReader> ComposedBody::Open() const {
  return std::make_unique<ComposedReader>(*this);
}

}  // namespace reel::llm
