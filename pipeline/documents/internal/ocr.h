// Reading a page's picture with Tesseract (the only file that includes it is ocr.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/image.h"

namespace reel::pipeline::documents {

struct OcrText {
  std::string text;       // UTF-8; lines end with '\n', paragraphs separated by a blank line
  double confidence = 0;  // Tesseract's mean word confidence, 0..100
};

// One Tesseract instance with its language data loaded. Not thread-safe: one per thread.
class OcrEngine {
 public:
  // Errors: kInvalidArgument naming a language whose data is not installed (and the Debian
  // package that has it); kUnavailable when Tesseract cannot start.
  static Result<std::unique_ptr<OcrEngine>> Create(const std::vector<std::string>& languages);
  ~OcrEngine();
  OcrEngine(const OcrEngine&) = delete;
  OcrEngine& operator=(const OcrEngine&) = delete;

  // Reads a gray or RGB picture rendered at `dpi`.
  Result<OcrText> Read(const Image& image, int dpi);

 private:
  struct Impl;
  explicit OcrEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Where Tesseract's language data is looked for ($TESSDATA_PREFIX, else Debian's folder).
std::string TessdataDir();

}  // namespace reel::pipeline::documents
