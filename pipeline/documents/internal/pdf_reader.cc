// PDFs through Poppler's C++ API (the only file that includes Poppler): text as pdftotext gives
// it (reading order, lines, a blank line between blocks), page size and label, and the page's
// picture rendered by Splash straight at the model's size. Scanned pages go to OCR.
#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-global.h>
#include <poppler/cpp/poppler-image.h>
#include <poppler/cpp/poppler-page-renderer.h>
#include <poppler/cpp/poppler-page.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "base/utf8.h"
#include "pipeline/documents/internal/format_reader.h"
#include "pipeline/documents/internal/ocr.h"
#include "pipeline/documents/internal/text_util.h"
#include "pipeline/image_codec.h"

namespace reel::pipeline::documents {
namespace {

// Poppler reports problems through one process-wide callback; the last message on this thread
// explains a failure better than "could not open".
thread_local std::string t_last_poppler_error;

void OnPopplerError(const std::string& message, void*) { t_last_poppler_error = message; }

void InstallErrorHandler() {
  static std::once_flag once;
  std::call_once(once, [] { poppler::set_debug_error_function(OnPopplerError, nullptr); });
}

std::string LastError() {
  std::string message = t_last_poppler_error;
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return SafeUtf8(message);
}

// Whether the last 1 KiB of the file holds %%EOF: a PDF cut short lacks it.
bool LooksTruncated(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) return false;
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return false;
  const long size = std::ftell(f.get());
  const long tail = std::min<long>(size, 1024);
  if (std::fseek(f.get(), size - tail, SEEK_SET) != 0) return false;
  std::string bytes(static_cast<size_t>(tail), '\0');
  if (std::fread(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) return false;
  return bytes.find("%%EOF") == std::string::npos;
}

// Poppler's UTF-16 strings as UTF-8 (bad sequences replaced).
std::string Utf8(const poppler::ustring& text) {
  const poppler::byte_array bytes = text.to_utf8();
  return ReplaceInvalidUtf8(std::string_view(bytes.data(), bytes.size()));
}

bool Rotated(const poppler::page& page) {
  const auto o = page.orientation();
  return o == poppler::page::landscape || o == poppler::page::seascape;
}

// Renders `page` to exactly `size` (upright, the page's /Rotate applied). Gray when `gray`.
Result<Image> Render(const poppler::page& page, double width_pt, double height_pt, Size size,
                     bool gray) {
  poppler::page_renderer renderer;
  // pdftoppm's defaults: anti-aliased shapes and glyphs, no glyph hinting.
  renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
  renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
  renderer.set_image_format(gray ? poppler::image::format_gray8 : poppler::image::format_rgb24);
  // Resolutions along the unrotated page's axes: a page turned by 90 degrees shows its
  // unrotated width as the picture's height.
  const bool rotated = Rotated(page);
  const double x_pixels = rotated ? size.height : size.width;
  const double y_pixels = rotated ? size.width : size.height;
  const double unrotated_w = rotated ? height_pt : width_pt;
  const double unrotated_h = rotated ? width_pt : height_pt;
  const double xres = x_pixels * 72.0 / unrotated_w;
  const double yres = y_pixels * 72.0 / unrotated_h;
  poppler::image rendered = renderer.render_page(&page, xres, yres, 0, 0, size.width, size.height);
  if (!rendered.is_valid() || rendered.width() <= 0 || rendered.height() <= 0) {
    std::string why = LastError();
    return CorruptData("the page could not be rendered" + (why.empty() ? "" : " (" + why + ")"));
  }
  Image image = MakeImage(rendered.width(), rendered.height(), gray ? 1 : 3);
  const char* data = rendered.const_data();
  const int bpr = rendered.bytes_per_row();
  for (int y = 0; y < image.height; ++y) {
    const auto* src = reinterpret_cast<const uint8_t*>(data + static_cast<size_t>(bpr) * y);
    uint8_t* dst = image.row(y);
    // gray8: one byte per pixel; rgb24: R, G, B (Splash's RGB8), three bytes per pixel.
    std::copy(src, src + image.stride(), dst);
  }
  if (image.width != size.width || image.height != size.height) {
    REEL_ASSIGN_OR_RETURN(image, ResizeImage(image, size.width, size.height));
  }
  return image;
}

// A page with ink on it: more than 1 in 2000 pixels darker than mid-gray.
bool HasInk(const Image& gray) {
  size_t dark = 0;
  for (uint8_t v : gray.pixels) dark += v < 128;
  return dark * 2000 > gray.pixels.size();
}

// The page's size at `dpi`, capped to `max_pixels` (aspect kept).
Size PixelsAt(double width_pt, double height_pt, double dpi, int64_t max_pixels) {
  double w = width_pt * dpi / 72.0, h = height_pt * dpi / 72.0;
  if (w * h > static_cast<double>(max_pixels)) {
    const double scale = std::sqrt(static_cast<double>(max_pixels) / (w * h));
    w *= scale;
    h *= scale;
  }
  return {std::max(1, static_cast<int>(std::floor(w))),
          std::max(1, static_cast<int>(std::floor(h)))};
}

}  // namespace

Status ReadPdfInProcess(const std::string& path, PageOutput& out, int first_page) {
  InstallErrorHandler();
  t_last_poppler_error.clear();
  const DocumentOptions& options = out.options();
  DocumentReport& report = out.report();
  std::unique_ptr<poppler::document> doc(poppler::document::load_from_file(path));
  if (!doc) {
    const std::string why = LastError();
    if (LooksTruncated(path)) {
      return CorruptData(out.name() + ": not a readable PDF: the file is cut short (no %EOF)" +
                         (why.empty() ? "" : "; " + why));
    }
    return CorruptData(out.name() + ": not a readable PDF" + (why.empty() ? "" : ": " + why));
  }
  if (doc->is_locked()) {
    return Unsupported(out.name() + ": the PDF is encrypted and needs a password to open");
  }
  out.SetPageCount(doc->pages());
  report.title = Utf8(doc->get_title());
  if (LooksTruncated(path)) {
    report.truncated = true;
    report.notes.push_back(
        "the file is cut short (no %EOF at its end): Poppler rebuilt what it could");
  }
  if (report.page_count <= 0) {
    return CorruptData(out.name() + ": the PDF has no pages" +
                       (LastError().empty() ? "" : " (" + LastError() + ")"));
  }
  const int last = out.LastWanted(report.page_count);
  // Labels are kept when the file has its own (some page's label is not its number).
  bool has_labels = false;
  for (int i = 0; i < last && !has_labels; ++i) {
    std::unique_ptr<poppler::page> page(doc->create_page(i));
    if (page && Utf8(page->label()) != std::to_string(i + 1)) has_labels = true;
  }

  std::unique_ptr<OcrEngine> ocr;
  Status ocr_status;
  for (int number = std::max(first_page, 1); number <= last; ++number) {
    if (!out.Wanted(number)) continue;
    REEL_RETURN_IF_ERROR(out.CheckTime());
    DocumentPage result;
    result.number = number;
    t_last_poppler_error.clear();
    std::unique_ptr<poppler::page> page(doc->create_page(number - 1));
    if (!page) {
      const std::string why = LastError();
      result.error = CorruptData("page " + std::to_string(number) + " cannot be loaded" +
                                 (why.empty() ? "" : " (" + why + ")"));
      REEL_RETURN_IF_ERROR(out.Emit(std::move(result)));
      continue;
    }
    if (has_labels) result.label = Utf8(page->label());
    const poppler::rectf box = page->page_rect(poppler::crop_box);
    double width_pt = std::abs(box.width()), height_pt = std::abs(box.height());
    if (Rotated(*page)) std::swap(width_pt, height_pt);
    result.width_pt = width_pt;
    result.height_pt = height_pt;
    if (!(width_pt >= 1 && height_pt >= 1 && width_pt <= 200 * 72 * 20 &&
          height_pt <= 200 * 72 * 20)) {
      result.error =
          CorruptData("page " + std::to_string(number) + " has an unusable size (" +
                      std::to_string(width_pt) + " x " + std::to_string(height_pt) + " pt)");
      REEL_RETURN_IF_ERROR(out.Emit(std::move(result)));
      continue;
    }
    std::vector<std::string> problems;
    try {
      if (options.text) {
        result.text = NormalizePageText(
            Utf8(page->text(poppler::rectf(), poppler::page::non_raw_non_physical_layout)));
        result.source = result.text.empty() ? TextSource::kNone : TextSource::kTextLayer;
        if (options.ocr.enabled && CountNonSpace(result.text) < options.ocr.min_text_chars) {
          // At most 32 megapixels to read (an A3 page at 300 dpi is 17): Tesseract needs several
          // times a picture's size in memory.
          const Size size = PixelsAt(width_pt, height_pt, options.ocr.dpi,
                                     std::min<int64_t>(options.limits.max_page_pixels, 1LL << 25));
          Result<Image> gray = Render(*page, width_pt, height_pt, size, /*gray=*/true);
          if (!gray.ok()) {
            problems.push_back("OCR: " + gray.status().message());
          } else if (HasInk(*gray)) {
            if (!ocr && ocr_status.ok()) {
              Result<std::unique_ptr<OcrEngine>> engine = OcrEngine::Create(options.ocr.languages);
              if (engine.ok()) {
                ocr = std::move(*engine);
              } else {
                ocr_status = engine.status();
              }
            }
            if (!ocr_status.ok()) return ocr_status.WithPrefix(out.name());
            // The resolution actually used (lower than asked when the page hit the pixel cap).
            const int dpi = static_cast<int>(std::lround(size.width * 72.0 / width_pt));
            Result<OcrText> read = ocr->Read(*gray, std::max(dpi, 1));
            if (!read.ok()) {
              problems.push_back(read.status().message());
            } else {
              std::string text = NormalizePageText(read->text);
              if (CountNonSpace(text) > CountNonSpace(result.text)) {
                result.text = std::move(text);
                result.source = TextSource::kOcr;
                result.ocr_confidence = read->confidence;
              }
            }
          }
        }
      }
      if (options.images) {
        Result<Size> target = TargetSize(
            PixelsAt(width_pt, height_pt, options.render_dpi, options.limits.max_page_pixels),
            options.resize);
        if (!target.ok()) {
          problems.push_back("picture: " + target.status().message());
        } else if (static_cast<int64_t>(target->width) * target->height >
                   options.limits.max_page_pixels) {
          problems.push_back("picture: " + std::to_string(target->width) + "x" +
                             std::to_string(target->height) + " is past the limit of " +
                             std::to_string(options.limits.max_page_pixels) + " pixels");
        } else {
          Result<Image> image = Render(*page, width_pt, height_pt, *target, /*gray=*/false);
          if (image.ok()) {
            result.image = std::move(*image);
          } else {
            problems.push_back("picture: " + image.status().message());
          }
        }
      }
    } catch (const std::bad_alloc&) {
      problems.push_back("out of memory reading the page (the memory limit is " +
                         std::to_string(options.limits.memory_bytes >> 20) + " MiB)");
    }
    if (!problems.empty()) {
      std::string message = "page " + std::to_string(number) + ": ";
      for (size_t i = 0; i < problems.size(); ++i) message += (i ? "; " : "") + problems[i];
      result.error = CorruptData(message);
    }
    REEL_RETURN_IF_ERROR(out.Emit(std::move(result)));
  }
  return Status::Ok();
}

}  // namespace reel::pipeline::documents
