// Documents in: pages per second of text and of page pictures (at the model's still-image size)
// through pipeline/documents, against pdftotext and pdftoppm on the same files in the same run,
// and OCR seconds per page on a scan made from the same pages (pdftoppm -r 300, img2pdf).
//   documents_bench [PDF...]   (default: the Debian documentation PDFs fetched by the tests, in
//                               BUILD/debian-media, when present)
// Each figure is the median of 3 runs; ratio = baseline time / Reel time (above 1: Reel faster).
#include <filesystem>

#include "bench/bench_util.h"
#include "pipeline/documents/document.h"

namespace {

using reel::bench::Clock;
using reel::bench::Median;
using reel::bench::Seconds;
using reel::bench::ShellQuote;
namespace fs = std::filesystem;

struct Pass {
  double seconds = 0;
  int pages = 0;
  std::vector<std::pair<int, int>> sizes;  // picture size per page
};

Pass ReadOnce(const std::string& pdf, reel::pipeline::DocumentOptions options) {
  Pass pass;
  const auto start = Clock::now();
  auto report =
      reel::pipeline::ReadDocument(pdf, options, [&](reel::pipeline::DocumentPage&& page) {
        pass.sizes.emplace_back(page.image.width, page.image.height);
        return reel::Status::Ok();
      });
  pass.seconds = Seconds(start);
  if (!report.ok()) {
    std::fprintf(stderr, "%s\n", report.status().ToString().c_str());
    std::exit(1);
  }
  pass.pages = report->pages_read;
  return pass;
}

double TimeCommand(const std::string& command) {
  const auto start = Clock::now();
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "failed: %s\n", command.c_str());
    std::exit(1);
  }
  return Seconds(start);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pdfs;
  for (int i = 1; i < argc; ++i) pdfs.push_back(argv[i]);
  if (pdfs.empty()) {
    const fs::path dir = fs::path(REEL_BINARY_DIR) / "debian-media";
    for (const char* name : {"maint-guide.en.pdf", "debian-reference.ja.pdf"}) {
      if (fs::exists(dir / name)) pdfs.push_back((dir / name).string());
    }
  }
  if (pdfs.empty()) {
    std::fprintf(stderr, "no PDFs: give some, or run documents_itest first to fetch Debian's\n");
    return 2;
  }
  const std::string scratch = (fs::temp_directory_path() / "reel-documents-bench").string();
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  std::printf("%-28s %6s  %-22s %-22s %-8s\n", "file", "pages", "text p/s (pdftotext)",
              "pictures p/s (pdftoppm)", "ratios");
  for (const std::string& pdf : pdfs) {
    reel::pipeline::DocumentOptions text;
    text.images = false;
    text.ocr.enabled = false;
    reel::pipeline::DocumentOptions pictures;
    pictures.text = false;
    std::vector<double> ours_text, ours_pictures, ref_text, ref_pictures;
    Pass last;
    for (int rep = 0; rep < 3; ++rep) {
      ours_text.push_back(ReadOnce(pdf, text).seconds);
      ref_text.push_back(TimeCommand("pdftotext " + ShellQuote(pdf) + " /dev/null"));
      last = ReadOnce(pdf, pictures);
      ours_pictures.push_back(last.seconds);
    }
    // pdftoppm draws every page at the size Reel drew it (all pages of these files share one
    // size), as PPM into a RAM-backed folder: no encoding on either side.
    const auto [w, h] = last.sizes.front();
    for (int rep = 0; rep < 3; ++rep) {
      ref_pictures.push_back(TimeCommand("pdftoppm -scale-to-x " + std::to_string(w) +
                                         " -scale-to-y " + std::to_string(h) + " " +
                                         ShellQuote(pdf) + " " + ShellQuote(scratch + "/p") +
                                         " && rm -f " + ShellQuote(scratch) + "/p*"));
    }
    const int n = last.pages;
    const double t = Median(ours_text), rt = Median(ref_text);
    const double p = Median(ours_pictures), rp = Median(ref_pictures);
    std::printf(
        "%-28s %6d  %7.0f (%7.0f)      %7.1f (%7.1f)        text %.2fx, pictures %.2fx  (%dx%d)\n",
        fs::path(pdf).filename().c_str(), n, n / t, n / rt, n / p, n / rp, rt / t, rp / p, w, h);
  }
  // OCR: the first 5 pages of the first file as a scan.
  const std::string scan = scratch + "/scan.pdf";
  TimeCommand("pdftoppm -r 300 -gray -png -f 1 -l 5 " + ShellQuote(pdfs[0]) + " " +
              ShellQuote(scratch + "/s") + " && img2pdf -o " + ShellQuote(scan) + " " +
              ShellQuote(scratch) + "/s-*.png");
  reel::pipeline::DocumentOptions ocr;
  ocr.images = false;
  const Pass read = ReadOnce(scan, ocr);
  // Baseline: the tesseract command line on the same 300 dpi pictures, one page at a time.
  double cli = -1;
  if (std::system("command -v tesseract >/dev/null 2>&1") == 0) {
    cli = TimeCommand("for p in " + ShellQuote(scratch) + "/s-*.png; do tesseract \"$p\" - " +
                      ">/dev/null 2>&1; done") /
          read.pages;
  }
  std::printf(
      "OCR (Tesseract, eng, 300 dpi): %.2f s per page over %d pages of %s; tesseract "
      "command line %.2f s per page (%.2fx)\n",
      read.seconds / read.pages, read.pages, fs::path(pdfs[0]).filename().c_str(), cli,
      cli > 0 ? cli / (read.seconds / read.pages) : 0);
  fs::remove_all(scratch);
  return 0;
}
