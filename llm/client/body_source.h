// Request bodies produced while they are sent: a BodySource describes bytes and never changes;
// each use opens its own BodyReader, so one source feeds several requests, retries, a Batch line
// or a hash, and is never built as one string. Ownership and threads: a source outlives its
// readers; Open and Size from any thread; a reader on one thread at a time; a ComposedBody is
// built by one thread before it is shared. Why: llm/README.md, "Body sources".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel::llm {

// A cursor over a source's bytes, from the first.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // Copies the next bytes into `out` (at most `capacity`, capacity > 0) and returns how many;
  // 0 means the end. An error (a file that vanished, say) fails the request that reads it.
  virtual Result<size_t> Read(char* out, size_t capacity) = 0;
};

class BodySource {
 public:
  virtual ~BodySource() = default;
  // The total number of bytes, or -1 when it is not known before the end.
  virtual int64_t Size() const = 0;
  // A new reader at byte 0. Opening does no I/O; errors show up on Read.
  virtual std::unique_ptr<BodyReader> Open() const = 0;
};

// Reads a whole source into a string (tests, small bodies).
Result<std::string> ReadAll(const BodySource& source);

// A body held in memory.
class StringBody final : public BodySource {
 public:
  explicit StringBody(std::string text) : text_(std::move(text)) {}
  int64_t Size() const override { return static_cast<int64_t>(text_.size()); }
  std::unique_ptr<BodyReader> Open() const override;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// A body made of parts sent one after the other: literal bytes, other sources, files as they
// are, and bytes (in memory or in a file) encoded as base64 on the fly. This is the shape of a
// chat request: JSON text around base64 images, e.g.
//   ComposedBody b;
//   b.AddText(R"({"type":"image_url","image_url":{"url":"data:image/jpeg;base64,)");
//   b.AddBase64OfFile("/frames/000123.jpg");
//   b.AddText(R"("}})");
// Memory held: the literal text (adjacent pieces joined) and about 40 bytes plus the path per
// file part; file bytes are read and encoded in 48 KiB pieces by each reader while it is read.
class ComposedBody final : public BodySource {
 public:
  ComposedBody() = default;
  ComposedBody(const ComposedBody&) = delete;
  ComposedBody& operator=(const ComposedBody&) = delete;

  void AddText(std::string text);
  void AddSource(std::shared_ptr<const BodySource> source);
  // The file's bytes as they are. Its size is taken now; a file that changes size before it is
  // sent fails that request (with a message naming it).
  Status AddFile(const std::string& path);
  // Base64 (standard alphabet, padded, no line breaks) of bytes or of a file.
  void AddBase64(std::shared_ptr<const std::string> bytes);
  Status AddBase64OfFile(const std::string& path);

  int64_t Size() const override;
  std::unique_ptr<BodyReader> Open() const override;

 private:
  friend class ComposedReader;
  enum class Kind : uint8_t { kText, kSource, kFile, kBase64Bytes, kBase64File };
  struct Part {
    Kind kind;
    size_t index;    // kText: offset in text_; kSource: in sources_; kBase64Bytes: in bytes_;
                     // kFile, kBase64File: in paths_
    int64_t length;  // kText: bytes of text_; kFile, kBase64File: the file's size
  };
  std::string text_;
  std::vector<Part> parts_;
  std::vector<std::shared_ptr<const BodySource>> sources_;
  std::vector<std::shared_ptr<const std::string>> bytes_;
  std::vector<std::string> paths_;
  int64_t size_ = 0;  // -1 once a part of unknown size is added
};

// The length of the base64 text of `n` bytes.
inline int64_t Base64Length(int64_t n) { return (n + 2) / 3 * 4; }

// Base64 of `bytes` (standard alphabet, padded).
std::string Base64Encode(std::string_view bytes);

}  // namespace reel::llm
