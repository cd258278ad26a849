// Request bodies that are produced while they are sent.
//
// A 1M-token request for an hour of video is hundreds of megabytes of base64 JPEG; the HTTP client
// pulls it through a BodySource in small pieces, so it is never built as one string (and never
// twice). The same source feeds a Batch-file line (batch_lines.h) or a hash.
//
// A source is rewound, then read from the start to the end (the HTTP client, ReadAll and the
// Batch writer rewind first, so a source shared by several bodies reads whole in each). Sizes are
// known before the first byte whenever the parts' sizes are (files are stat'ed when the body is
// built), so the request carries a Content-Length; a source of unknown size is sent chunked.
//
// Thread safety: one source is read by one thread at a time (the HTTP client's thread while it is
// being sent). Sources are not copied; ComposedBody holds its parts by shared pointer so a part
// (the messages of a context, say) can be sent in several requests one after the other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel::llm {

class BodySource {
 public:
  virtual ~BodySource() = default;

  // The total number of bytes, or -1 when it is not known before the end.
  virtual int64_t Size() const = 0;

  // Copies the next bytes into `out` (at most `capacity`, capacity > 0) and returns how many;
  // 0 means the end. An error (a file that vanished, say) fails the request that reads it.
  virtual Result<size_t> Read(char* out, size_t capacity) = 0;

  // Back to the first byte.
  virtual Status Rewind() = 0;
};

// Rewinds a source and reads it whole into a string (tests, small bodies).
Result<std::string> ReadAll(BodySource& source);

// A body held in memory.
class StringBody final : public BodySource {
 public:
  explicit StringBody(std::string text) : text_(std::move(text)) {}
  int64_t Size() const override { return static_cast<int64_t>(text_.size()); }
  Result<size_t> Read(char* out, size_t capacity) override;
  Status Rewind() override {
    offset_ = 0;
    return Status::Ok();
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  size_t offset_ = 0;
};

// A body made of parts sent one after the other: literal bytes, other sources, files as they
// are, and bytes (in memory or in a file) encoded as base64 on the fly. This is the shape of a
// chat request: JSON text around base64 images, e.g.
//   ComposedBody b;
//   b.AddText(R"({"type":"image_url","image_url":{"url":"data:image/jpeg;base64,)");
//   b.AddBase64OfFile("/frames/000123.jpg");
//   b.AddText(R"("}})");
// Memory held: the literal text and the parts' descriptions; file bytes are read in 48 KiB
// pieces while sending.
class ComposedBody final : public BodySource {
 public:
  ComposedBody();
  ~ComposedBody() override;
  ComposedBody(const ComposedBody&) = delete;
  ComposedBody& operator=(const ComposedBody&) = delete;

  void AddText(std::string text);
  void AddSource(std::shared_ptr<BodySource> source);
  // The file's bytes as they are. Its size is taken now; a file that changes size before it is
  // sent fails that request.
  Status AddFile(const std::string& path);
  // Base64 (standard alphabet, padded, no line breaks) of bytes or of a file.
  void AddBase64(std::shared_ptr<const std::string> bytes);
  Status AddBase64OfFile(const std::string& path);

  int64_t Size() const override;
  Result<size_t> Read(char* out, size_t capacity) override;
  Status Rewind() override;

  struct Part;

 private:
  std::vector<std::unique_ptr<Part>> parts_;
  size_t current_ = 0;
};

// The length of the base64 text of `n` bytes.
inline int64_t Base64Length(int64_t n) { return (n + 2) / 3 * 4; }

// Base64 of `bytes` (standard alphabet, padded).
std::string Base64Encode(std::string_view bytes);

}  // namespace reel::llm
