#include "pipeline/documents/internal/ocr.h"

#include <dlfcn.h>
#include <tesseract/baseapi.h>

#include <cstdlib>
#include <filesystem>

namespace reel::pipeline::documents {

struct OcrEngine::Impl {
  tesseract::TessBaseAPI api;
  ~Impl() { api.End(); }
};

OcrEngine::OcrEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OcrEngine::~OcrEngine() = default;

std::string TessdataDir() {
  if (const char* prefix = std::getenv("TESSDATA_PREFIX"); prefix != nullptr && *prefix) {
    return prefix;
  }
  for (const char* dir : {"/usr/share/tesseract-ocr/5/tessdata",
                          "/usr/share/tesseract-ocr/4.00/tessdata", "/usr/share/tessdata"}) {
    if (std::filesystem::exists(std::filesystem::path(dir) / "eng.traineddata")) return dir;
  }
  return "/usr/share/tesseract-ocr/5/tessdata";
}

Result<std::unique_ptr<OcrEngine>> OcrEngine::Create(const std::vector<std::string>& languages) {
  if (languages.empty()) return InvalidArgument("OCR: no language given");
  const std::string dir = TessdataDir();
  std::string joined;
  for (const std::string& language : languages) {
    const bool plain =
        !language.empty() &&
        language.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == std::string::npos;
    if (!plain) return InvalidArgument("OCR: '" + language + "' is not a Tesseract language name");
    if (!std::filesystem::exists(std::filesystem::path(dir) / (language + ".traineddata"))) {
      std::string package = language;
      for (char& c : package) c = c == '_' ? '-' : static_cast<char>(std::tolower(c));
      return InvalidArgument("OCR language '" + language + "' is not installed (no " + dir + "/" +
                             language + ".traineddata; install tesseract-ocr-" + package + ")");
    }
    joined += (joined.empty() ? "" : "+") + language;
  }
  // Debian's Tesseract runs its LSTM on OpenMP threads (4 per layer) that spin while they wait:
  // on a busy machine that tripled the wall time of a page. With dynamic adjustment on, OpenMP
  // gives a parallel region only the cores the load average leaves free. (Looked up at run time:
  // libgomp comes in through Tesseract, and a build without OpenMP simply has no such symbol.)
  using SetDynamic = void (*)(int);
  if (auto set_dynamic = reinterpret_cast<SetDynamic>(dlsym(RTLD_DEFAULT, "omp_set_dynamic"))) {
    set_dynamic(1);
  }
  auto impl = std::make_unique<Impl>();
  // Tesseract's own chatter (warnings on stderr) goes nowhere.
  impl->api.SetVariable("debug_file", "/dev/null");
  if (impl->api.Init(dir.c_str(), joined.c_str(), tesseract::OEM_LSTM_ONLY) != 0) {
    return Unavailable("OCR: Tesseract could not load " + joined + " from " + dir);
  }
  impl->api.SetPageSegMode(tesseract::PSM_AUTO);
  return std::unique_ptr<OcrEngine>(new OcrEngine(std::move(impl)));
}

Result<OcrText> OcrEngine::Read(const Image& image, int dpi) {
  if (image.empty()) return InvalidArgument("OCR: empty picture");
  tesseract::TessBaseAPI& api = impl_->api;
  api.SetImage(image.pixels.data(), image.width, image.height, image.channels,
               static_cast<int>(image.stride()));
  api.SetSourceResolution(dpi);
  std::unique_ptr<char[]> text(api.GetUTF8Text());
  if (!text) return Internal("OCR: Tesseract recognised nothing (no result)");
  OcrText out;
  out.text = text.get();
  out.confidence = std::max(0, api.MeanTextConf());
  api.Clear();
  return out;
}

}  // namespace reel::pipeline::documents
