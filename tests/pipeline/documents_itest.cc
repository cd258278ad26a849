// The document readers on generated documents with known text, on real PDFs and EPUBs from
// Debian's documentation packages, and on hostile files; PDFs compared with pdfinfo, pdftotext
// and pdftoppm (poppler-utils) in the same test.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/file_util.h"
#include "pipeline/documents/document.h"
#include "pipeline/image_codec.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_documents.h"
#include "tests/support/test_environment.h"
#include "tests/support/test_media.h"

namespace reel::pipeline {
namespace {

namespace fs = std::filesystem;
using testing::NormalizeSpace;
using testing::RunCommand;
using testing::ShellQuote;

struct DocumentRead {
  Status status;
  DocumentReport report;
  std::vector<DocumentPage> pages;
};

DocumentRead ReadDocument(const std::string& path, const DocumentOptions& options) {
  DocumentRead read;
  Result<DocumentReport> report = ReadDocument(path, options, [&](DocumentPage&& page) {
    read.pages.push_back(std::move(page));
    return Status::Ok();
  });
  if (report.ok()) {
    read.report = *report;
  } else {
    read.status = report.status();
  }
  return read;
}

DocumentOptions TextOnly() {
  DocumentOptions options;
  options.images = false;
  return options;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int PdfinfoPages(const std::string& path) {
  auto r = RunCommand("pdfinfo " + ShellQuote(path));
  const size_t at = r.out.find("Pages:");
  return at == std::string::npos ? -1 : std::stoi(r.out.substr(at + 6));
}

// pdftotext's text of every page (its default mode: reading order).
std::vector<std::string> PdftotextPages(const std::string& path) {
  auto r = RunCommand("pdftotext -enc UTF-8 " + ShellQuote(path) + " -");
  return testing::SplitPages(r.out);
}

// Peak resident memory of this process's finished children (the PDF reader's child), in MiB.
long ChildrenPeakMib() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_maxrss / 1024;
}

class DocumentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    dir_ = testing::TestDocuments(&why);
    if (dir_.empty()) GTEST_SKIP() << why;
  }
  std::string Doc(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  std::vector<std::string> Expected(const std::string& name) const {
    return testing::SplitPages(Slurp(Doc(name + ".expected.txt")));
  }
  std::string dir_;
};

TEST_F(DocumentsTest, PdfTextEqualsKnownTextAndPdftotext) {
  for (const std::string name : {"text.pdf", "ps.pdf"}) {
    SCOPED_TRACE(name);
    DocumentRead read = ReadDocument(Doc(name), TextOnly());
    ASSERT_TRUE(read.status.ok()) << read.status.ToString();
    const std::vector<std::string> expected = Expected(name);
    const std::vector<std::string> reference = PdftotextPages(Doc(name));
    ASSERT_EQ(read.report.page_count, PdfinfoPages(Doc(name)));
    ASSERT_EQ(read.pages.size(), expected.size());
    ASSERT_EQ(reference.size(), expected.size());
    for (size_t i = 0; i < read.pages.size(); ++i) {
      EXPECT_EQ(read.pages[i].number, static_cast<int>(i) + 1);
      EXPECT_EQ(NormalizeSpace(read.pages[i].text), NormalizeSpace(expected[i]));
      EXPECT_EQ(NormalizeSpace(read.pages[i].text), NormalizeSpace(reference[i]));
      EXPECT_EQ(read.pages[i].source, TextSource::kTextLayer);
      EXPECT_TRUE(read.pages[i].error.ok());
    }
  }
}

TEST_F(DocumentsTest, PdfKeepsLinesParagraphsLabelsAndSize) {
  DocumentRead read = ReadDocument(Doc("text.pdf"), TextOnly());
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  ASSERT_EQ(read.pages.size(), 3u);
  EXPECT_EQ(read.pages[0].label, "i");
  EXPECT_EQ(read.pages[1].label, "ii");
  EXPECT_EQ(read.pages[2].label, "1");
  // Lines stay lines; the blank line in the source is a paragraph break.
  EXPECT_EQ(read.pages[0].text,
            "The quick brown fox jumps over the lazy dog.\nReel reads documents page by page.\n\n"
            "A second paragraph follows the blank line.\n");
  EXPECT_DOUBLE_EQ(read.pages[0].width_pt, 612);
  EXPECT_DOUBLE_EQ(read.pages[0].height_pt, 792);
  // A file without labels has none.
  DocumentRead ps = ReadDocument(Doc("ps.pdf"), TextOnly());
  ASSERT_EQ(ps.pages.size(), 1u);
  EXPECT_EQ(ps.pages[0].label, "");
}

// Compares two RGB pictures of one size: the mean absolute difference per channel, and the
// fraction of pixels with a channel more than 48 apart.
void ExpectSamePicture(const Image& got, const Image& want) {
  ASSERT_EQ(got.width, want.width);
  ASSERT_EQ(got.height, want.height);
  ASSERT_EQ(got.channels, 3);
  ASSERT_EQ(want.channels, 3);
  double sum = 0;
  size_t far = 0;
  for (size_t i = 0; i < got.pixels.size(); i += 3) {
    int worst = 0;
    for (int c = 0; c < 3; ++c) {
      const int d = std::abs(int{got.pixels[i + c]} - int{want.pixels[i + c]});
      sum += d;
      worst = std::max(worst, d);
    }
    far += worst > 48;
  }
  EXPECT_LT(sum / static_cast<double>(got.pixels.size()), 1.0);
  EXPECT_LT(static_cast<double>(far) / (got.pixels.size() / 3), 0.002);
}

void ExpectPicturesMatchPdftoppm(const std::string& pdf, const std::vector<DocumentPage>& pages,
                                 const std::string& scratch) {
  for (const DocumentPage& page : pages) {
    SCOPED_TRACE("page " + std::to_string(page.number));
    ASSERT_TRUE(page.error.ok()) << page.error.message();
    ASSERT_FALSE(page.image.empty());
    const std::string stem = scratch + "/ref" + std::to_string(page.number);
    auto r = RunCommand("pdftoppm -png -singlefile -f " + std::to_string(page.number) + " -l " +
                        std::to_string(page.number) + " -scale-to-x " +
                        std::to_string(page.image.width) + " -scale-to-y " +
                        std::to_string(page.image.height) + " " + ShellQuote(pdf) + " " +
                        ShellQuote(stem));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Result<Image> reference = ReadImageFile(stem + ".png");
    ASSERT_TRUE(reference.ok()) << reference.status().ToString();
    ExpectSamePicture(page.image, *reference);
  }
}

TEST_F(DocumentsTest, PagePicturesAreTheStillImageSizeAndMatchPdftoppm) {
  DocumentOptions options;
  options.ocr.enabled = false;
  DocumentRead read = ReadDocument(Doc("text.pdf"), options);
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  ASSERT_EQ(read.pages.size(), 3u);
  // 612 x 792 pt at 144 dpi is 1224 x 1584; the still-image rule makes it at most 451584 pixels.
  Result<Size> want = SmartResize({1224, 1584}, options.resize.smart);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(read.pages[0].image.width, want->width);
  EXPECT_EQ(read.pages[0].image.height, want->height);
  EXPECT_LE(int64_t{want->width} * want->height, kImageMaxPixels);
  ExpectPicturesMatchPdftoppm(Doc("text.pdf"), read.pages, testing::ScratchDir("doc_pictures"));

  // A smaller limit gives a smaller picture by the same rule.
  options.resize.smart.max_pixels = 100000;
  DocumentRead small = ReadDocument(Doc("text.pdf"), options);
  ASSERT_EQ(small.pages.size(), 3u);
  Result<Size> want_small = SmartResize({1224, 1584}, options.resize.smart);
  EXPECT_EQ(small.pages[0].image.width, want_small->width);
  EXPECT_EQ(small.pages[0].image.height, want_small->height);
}

TEST_F(DocumentsTest, PagePicturesKeepTheirColours) {
  DocumentOptions options;
  options.ocr.enabled = false;
  DocumentRead read = ReadDocument(Doc("colour.pdf"), options);
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  ASSERT_EQ(read.pages.size(), 1u);
  const Image& image = read.pages[0].image;
  ASSERT_EQ(image.channels, 3);
  const uint8_t* left = image.row(image.height / 2) + 3 * (image.width / 4);
  const uint8_t* right = image.row(image.height / 2) + 3 * (3 * image.width / 4);
  EXPECT_EQ(std::vector<int>(left, left + 3), (std::vector<int>{255, 0, 0}));
  EXPECT_EQ(std::vector<int>(right, right + 3), (std::vector<int>{0, 0, 255}));
}

TEST_F(DocumentsTest, PageRangeAndItsErrors) {
  DocumentOptions options = TextOnly();
  options.pages = {2, 3};
  DocumentRead read = ReadDocument(Doc("text.pdf"), options);
  ASSERT_TRUE(read.status.ok());
  ASSERT_EQ(read.pages.size(), 2u);
  EXPECT_EQ(read.pages[0].number, 2);
  EXPECT_EQ(read.pages[1].number, 3);
  EXPECT_FALSE(read.report.partial());
  options.pages = {5, 0};
  DocumentRead past = ReadDocument(Doc("text.pdf"), options);
  EXPECT_EQ(past.status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(past.status.message().find("has 3 pages"), std::string::npos) << past.status.message();
}

TEST_F(DocumentsTest, InProcessReadingGivesWhatTheChildGives) {
  DocumentOptions options;
  options.ocr.enabled = false;
  DocumentRead isolated = ReadDocument(Doc("text.pdf"), options);
  options.isolate = false;
  DocumentRead direct = ReadDocument(Doc("text.pdf"), options);
  ASSERT_EQ(isolated.pages.size(), direct.pages.size());
  for (size_t i = 0; i < direct.pages.size(); ++i) {
    EXPECT_EQ(isolated.pages[i].text, direct.pages[i].text);
    EXPECT_EQ(isolated.pages[i].label, direct.pages[i].label);
    EXPECT_EQ(isolated.pages[i].image.pixels, direct.pages[i].image.pixels);
  }
}

// Reading a PDF must not depend on what this process's other threads hold. A reader forked
// from a process with threads inherited their locks: one holding glibc's time-zone lock (taken
// by gmtime_r, as Reel stamps its times) at the fork left the reader waiting for it forever,
// since Little CMS takes it when Poppler draws a page (a `reel run` hung so in CI).
TEST_F(DocumentsTest, PdfsAreReadWhileAnotherThreadHoldsLibcsTimeLock) {
  // Stops and joins the thread however the test ends (an ASSERT returns early).
  struct Stamper {
    std::atomic<bool> stop{false};
    std::thread thread{[this] {
      const std::time_t now = std::time(nullptr);
      std::tm parts{};
      while (!stop.load(std::memory_order_relaxed)) gmtime_r(&now, &parts);
    }};
    ~Stamper() {
      stop = true;
      thread.join();
    }
  } stamper;
  DocumentOptions options;
  options.ocr.enabled = false;
  options.limits.time_limit_s = 30;  // a reader that waits forever fails here, not at 600 s
  for (int i = 0; i < 12; ++i) {
    DocumentRead read = ReadDocument(Doc("text.pdf"), options);
    ASSERT_TRUE(read.status.ok()) << "read " << i << ": " << read.status.ToString();
    ASSERT_EQ(read.pages.size(), 3u) << i;
    EXPECT_EQ(read.pages[2].image.width % 28, 0);
    for (const std::string& note : read.report.notes) {
      EXPECT_EQ(note.find("in this process"), std::string::npos) << note;
    }
  }
}

TEST_F(DocumentsTest, ScannedPageIsReadByOcrWithASmallErrorRate) {
  DocumentRead read = ReadDocument(Doc("scanned.pdf"), TextOnly());
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  ASSERT_EQ(read.pages.size(), 1u);
  EXPECT_EQ(read.pages[0].source, TextSource::kOcr);
  EXPECT_EQ(read.report.pages_ocr, 1);
  EXPECT_GT(read.pages[0].ocr_confidence, 80);
  const double cer = testing::CharacterErrorRate(read.pages[0].text, Expected("scanned.pdf")[0]);
  std::printf("OCR character error rate on scanned.pdf: %.4f\n", cer);
  EXPECT_LT(cer, 0.02) << read.pages[0].text;

  DocumentOptions off = TextOnly();
  off.ocr.enabled = false;
  DocumentRead no_ocr = ReadDocument(Doc("scanned.pdf"), off);
  ASSERT_EQ(no_ocr.pages.size(), 1u);
  EXPECT_EQ(no_ocr.pages[0].source, TextSource::kNone);
  EXPECT_EQ(no_ocr.pages[0].text, "");

  DocumentOptions missing = TextOnly();
  missing.ocr.languages = {"xyz"};
  DocumentRead bad = ReadDocument(Doc("scanned.pdf"), missing);
  EXPECT_EQ(bad.status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("tesseract-ocr-xyz"), std::string::npos)
      << bad.status.message();
}

TEST_F(DocumentsTest, EncryptedDamagedAndTruncatedPdfsFailClearly) {
  DocumentRead encrypted = ReadDocument(Doc("encrypted.pdf"), TextOnly());
  EXPECT_EQ(encrypted.status.code(), ErrorCode::kUnsupported);
  EXPECT_NE(encrypted.status.message().find("encrypted.pdf"), std::string::npos);
  EXPECT_NE(encrypted.status.message().find("encrypted and needs a password"), std::string::npos)
      << encrypted.status.message();

  DocumentRead garbage = ReadDocument(Doc("not-a.pdf"), TextOnly());
  EXPECT_EQ(garbage.status.code(), ErrorCode::kCorruptData);
  EXPECT_NE(garbage.status.message().find("not-a.pdf: not a readable PDF"), std::string::npos)
      << garbage.status.message();

  // Cut to a third: Poppler rebuilds what it can; whatever it finds, the result says the file
  // is cut short, either as the error or as a partial result.
  DocumentRead truncated = ReadDocument(Doc("truncated.pdf"), TextOnly());
  if (truncated.status.ok()) {
    EXPECT_TRUE(truncated.report.truncated);
    EXPECT_TRUE(truncated.report.partial());
  } else {
    EXPECT_NE(truncated.status.message().find("truncated.pdf"), std::string::npos);
    EXPECT_NE(truncated.status.message().find("cut short"), std::string::npos)
        << truncated.status.message();
  }
}

TEST_F(DocumentsTest, PageTreeLoopEnds) {
  DocumentRead read = ReadDocument(Doc("loop.pdf"), TextOnly());
  // Poppler drops the looping kid: one page, or an error naming the file; never a hang.
  if (read.status.ok()) {
    ASSERT_GE(read.pages.size(), 1u);
    EXPECT_EQ(NormalizeSpace(read.pages[0].text), "Hello page");
  } else {
    EXPECT_NE(read.status.message().find("loop.pdf"), std::string::npos);
  }
}

TEST_F(DocumentsTest, FontBombFailsItsPageWithinTheMemoryLimit) {
  // The 1 GiB font is read when the page is drawn (text extraction needs no glyphs).
  if (testing::kUnderAddressSanitizer) {
    GTEST_SKIP() << "the memory limit (RLIMIT_AS) is not set under AddressSanitizer";
  }
  DocumentOptions options;
  options.ocr.enabled = false;
  options.limits.memory_bytes = 256LL << 20;
  DocumentRead read = ReadDocument(Doc("font-bomb.pdf"), options);
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  ASSERT_EQ(read.pages.size(), 2u);
  EXPECT_FALSE(read.pages[0].error.ok());
  EXPECT_NE(read.pages[0].error.message().find("memory limit is 256 MiB"), std::string::npos)
      << read.pages[0].error.message();
  // The page after the bomb is read by a new child.
  EXPECT_TRUE(read.pages[1].error.ok()) << read.pages[1].error.message();
  EXPECT_EQ(NormalizeSpace(read.pages[1].text), "After the bomb");
  EXPECT_EQ(read.report.pages_failed, 1);
  EXPECT_TRUE(read.report.partial());
  EXPECT_LT(ChildrenPeakMib(), 256 + 200);  // the 1 GiB font never came in
}

TEST_F(DocumentsTest, TenThousandPagesStopAtMaxPages) {
  DocumentOptions options = TextOnly();
  options.ocr.enabled = false;  // "Hello page" is short enough to count as a scan
  options.limits.max_pages = 500;
  DocumentRead read = ReadDocument(Doc("pages-10000.pdf"), options);
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  EXPECT_EQ(read.report.page_count, 10000);
  EXPECT_EQ(read.pages.size(), 500u);
  EXPECT_EQ(read.pages.back().number, 500);
  EXPECT_TRUE(read.report.left_out);
  EXPECT_TRUE(read.report.partial());
  ASSERT_FALSE(read.report.notes.empty());
  EXPECT_NE(read.report.notes.back().find("10000 pages"), std::string::npos);

  options.limits.time_limit_s = 0.001;
  DocumentRead slow = ReadDocument(Doc("pages-10000.pdf"), options);
  EXPECT_EQ(slow.status.code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(slow.status.message().find("time limit"), std::string::npos);
}

TEST_F(DocumentsTest, HundredMegapixelPageIsRenderedAtTheModelSizeInBoundedMemory) {
  DocumentOptions options;
  options.ocr.enabled = false;
  DocumentRead read = ReadDocument(Doc("big-picture.pdf"), options);
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  ASSERT_EQ(read.pages.size(), 1u);
  ASSERT_TRUE(read.pages[0].error.ok()) << read.pages[0].error.message();
  EXPECT_LE(int64_t{read.pages[0].image.width} * read.pages[0].image.height, kImageMaxPixels);
  EXPECT_EQ(read.pages[0].image.width, read.pages[0].image.height);
  EXPECT_LT(ChildrenPeakMib(), 600);
  // The picture's top bar is black, its bottom white.
  const Image& image = read.pages[0].image;
  EXPECT_LT(image.row(2)[3 * (image.width / 2)], 40);
  EXPECT_GT(image.row(image.height - 3)[3 * (image.width / 2)], 215);
}

TEST_F(DocumentsTest, HtmlKeepsStructureAndDropsBoilerplate) {
  DocumentRead read = ReadDocument(Doc("page.html"), TextOnly());
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  EXPECT_EQ(read.report.format, DocumentFormat::kHtml);
  EXPECT_EQ(read.report.title, "Sample page");
  ASSERT_EQ(read.pages.size(), 1u);
  EXPECT_EQ(read.pages[0].text, Expected("page.html")[0]);
  EXPECT_EQ(read.pages[0].source, TextSource::kMarkup);
  // Only the local image is listed, resolved against the page's folder.
  ASSERT_EQ(read.pages[0].images.size(), 1u);
  EXPECT_EQ(read.pages[0].images[0].path, Doc("pic.png"));
  EXPECT_EQ(read.pages[0].images[0].alt, "A red square");
  EXPECT_TRUE(read.pages[0].images[0].image.empty());
}

TEST_F(DocumentsTest, HtmlImagesAreDecodedWhenAsked) {
  const std::string scratch = testing::ScratchDir("doc_html_images");
  fs::copy_file(Doc("page.html"), scratch + "/page.html");
  Image red = MakeImage(8, 6);
  for (size_t i = 0; i < red.pixels.size(); i += 3) red.pixels[i] = 255;
  ASSERT_TRUE(WriteImageFile(scratch + "/pic.png", red).ok());
  DocumentOptions options = TextOnly();
  options.keep_images = true;
  DocumentRead read = ReadDocument(scratch + "/page.html", options);
  ASSERT_EQ(read.pages.size(), 1u);
  ASSERT_EQ(read.pages[0].images.size(), 1u);
  EXPECT_EQ(read.pages[0].images[0].image.width, 8);
  EXPECT_EQ(read.pages[0].images[0].image.pixels, red.pixels);
}

TEST_F(DocumentsTest, EpubChaptersInSpineOrderWithTitles) {
  DocumentRead read = ReadDocument(Doc("book.epub"), TextOnly());
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  EXPECT_EQ(read.report.format, DocumentFormat::kEpub);
  EXPECT_EQ(read.report.title, "Test Book");
  const std::vector<std::string> expected = Expected("book.epub");
  ASSERT_EQ(read.pages.size(), 2u);
  EXPECT_EQ(read.pages[0].title, "Chapter One: Beginnings");
  EXPECT_EQ(read.pages[1].title, "Chapter Two: 日本語の章");
  EXPECT_EQ(read.pages[0].text, expected[0]);
  EXPECT_EQ(read.pages[1].text, expected[1]);
}

TEST_F(DocumentsTest, EncryptedEpubFailsClearly) {
  DocumentRead read = ReadDocument(Doc("drm.epub"), TextOnly());
  EXPECT_EQ(read.status.code(), ErrorCode::kUnsupported);
  EXPECT_NE(read.status.message().find("drm.epub: the EPUB is encrypted (DRM)"), std::string::npos)
      << read.status.message();
}

TEST_F(DocumentsTest, OfficeFilesInDocumentOrder) {
  struct Case {
    const char* name;
    DocumentFormat format;
    const char* title;
    std::vector<std::string> page_titles;
  };
  const Case cases[] = {
      {"doc.docx", DocumentFormat::kDocx, "Word title", {"", ""}},
      {"doc.odt", DocumentFormat::kOdt, "", {""}},
      {"deck.pptx", DocumentFormat::kPptx, "", {"First title", "Later title"}},
      {"deck.odp", DocumentFormat::kOdp, "", {"Opening slide", ""}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DocumentRead read = ReadDocument(Doc(c.name), TextOnly());
    ASSERT_TRUE(read.status.ok()) << read.status.ToString();
    EXPECT_EQ(read.report.format, c.format);
    EXPECT_EQ(read.report.title, c.title);
    const std::vector<std::string> expected = Expected(c.name);
    ASSERT_EQ(read.pages.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(read.pages[i].text, expected[i]);
      EXPECT_EQ(read.pages[i].title, c.page_titles[i]);
    }
  }
}

// An office package without its main part is not a document of its format: kCorruptData naming
// the file, the format and the part.
TEST_F(DocumentsTest, OfficePackagesWithoutTheirMainPartFailClearly) {
  const std::pair<const char*, const char*> cases[] = {
      {"partless.docx", "partless.docx: not a Word document (no word/document.xml)"},
      {"partless.pptx", "partless.pptx: not a PowerPoint deck (no ppt/presentation.xml)"},
      {"partless.odt", "partless.odt: not an OpenDocument file (no content.xml)"},
  };
  for (const auto& [name, message] : cases) {
    SCOPED_TRACE(name);
    DocumentRead read = ReadDocument(Doc(name), TextOnly());
    EXPECT_EQ(read.status.code(), ErrorCode::kCorruptData);
    EXPECT_NE(read.status.message().find(message), std::string::npos) << read.status.message();
  }
}

TEST_F(DocumentsTest, OfficeRenderWithoutLibreOfficeSaysTextOnly) {
  DocumentOptions options = TextOnly();
  options.office_render = true;
  options.soffice = "reel-no-such-soffice";
  DocumentRead read = ReadDocument(Doc("doc.docx"), options);
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  ASSERT_EQ(read.pages.size(), 2u);
  ASSERT_FALSE(read.report.notes.empty());
  EXPECT_NE(read.report.notes[0].find("text only"), std::string::npos);
}

TEST_F(DocumentsTest, ZipAndXmlBombsAreLimited) {
  DocumentRead bomb = ReadDocument(Doc("bomb.docx"), TextOnly());
  EXPECT_EQ(bomb.status.code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(
      bomb.status.message().find("bomb.docx: word/document.xml: decompresses to more than 64 MiB"),
      std::string::npos)
      << bomb.status.message();

  DocumentRead laughs = ReadDocument(Doc("laughs.odt"), TextOnly());
  ASSERT_TRUE(laughs.status.ok()) << laughs.status.ToString();
  ASSERT_EQ(laughs.pages.size(), 1u);
  EXPECT_LT(laughs.pages[0].text.size(), 100u);  // the entities stay unexpanded
  EXPECT_NE(laughs.pages[0].text.find("Before"), std::string::npos);
}

TEST_F(DocumentsTest, UnknownAndMissingFilesNameTheFile) {
  DocumentRead missing = ReadDocument(Doc("nothing-here.pdf"), TextOnly());
  EXPECT_EQ(missing.status.code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status.message().find("nothing-here.pdf"), std::string::npos);
  DocumentRead unknown = ReadDocument(Doc("ps.ps"), TextOnly());
  EXPECT_EQ(unknown.status.code(), ErrorCode::kUnsupported);
  EXPECT_NE(unknown.status.message().find("ps.ps: not a document Reel reads"), std::string::npos);
  DocumentRead not_zip = ReadDocument(Doc("text.pdf.expected.txt"), TextOnly());
  EXPECT_EQ(not_zip.status.code(), ErrorCode::kUnsupported);
}

// --- real documents from Debian packages ------------------------------------------------------

struct RealPdf {
  const char* package;
  const char* path;
  const char* name;
};

const RealPdf kRealPdfs[] = {
    {"maint-guide", "usr/share/doc/maint-guide/maint-guide.en.pdf", "maint-guide.en.pdf"},
    {"debian-reference-ja", "usr/share/debian-reference/debian-reference.ja.pdf",
     "debian-reference.ja.pdf"},
    {"debian-reference-zh-cn", "usr/share/debian-reference/debian-reference.zh-cn.pdf",
     "debian-reference.zh-cn.pdf"},
    {"developers-reference-ru", "usr/share/developers-reference/ru/developers-reference.pdf",
     "developers-reference.ru.pdf"},
};

TEST(RealDocumentsTest, DebianPdfsMatchPdfinfoPdftotextAndPdftoppm) {
  int checked = 0;
  for (const RealPdf& real : kRealPdfs) {
    SCOPED_TRACE(real.name);
    const std::string pdf = testing::DebianPackageFile(real.package, real.path, real.name);
    if (pdf.empty()) continue;
    ++checked;
    DocumentRead read = ReadDocument(pdf, TextOnly());
    ASSERT_TRUE(read.status.ok()) << read.status.ToString();
    ASSERT_EQ(read.report.page_count, PdfinfoPages(pdf));
    ASSERT_EQ(static_cast<int>(read.pages.size()), read.report.page_count);
    const std::vector<std::string> reference = PdftotextPages(pdf);
    ASSERT_EQ(reference.size(), read.pages.size());
    int differing = 0;
    for (size_t i = 0; i < read.pages.size(); ++i) {
      if (NormalizeSpace(read.pages[i].text) != NormalizeSpace(reference[i])) {
        if (++differing <= 3) {
          ADD_FAILURE() << "page " << i + 1 << " differs:\n"
                        << read.pages[i].text << "\n--- pdftotext:\n"
                        << reference[i];
        }
      }
    }
    EXPECT_EQ(differing, 0);
    // Pictures of the first pages, as pdftoppm draws them.
    DocumentOptions pictures;
    pictures.text = false;
    pictures.pages = {1, 3};
    DocumentRead drawn = ReadDocument(pdf, pictures);
    ASSERT_TRUE(drawn.status.ok()) << drawn.status.ToString();
    ExpectPicturesMatchPdftoppm(pdf, drawn.pages, testing::ScratchDir("doc_real_pictures"));
  }
  if (checked == 0) GTEST_SKIP() << "no Debian documentation package could be fetched";
}

TEST(RealDocumentsTest, RenderedRealPagesReadBackByOcr) {
  const std::string pdf = testing::DebianPackageFile(
      "maint-guide", "usr/share/doc/maint-guide/maint-guide.en.pdf", "maint-guide.en.pdf");
  if (pdf.empty()) GTEST_SKIP() << "maint-guide could not be fetched";
  const std::string scratch = testing::ScratchDir("doc_real_ocr");
  // Pages 7-8 rendered to pictures at 300 dpi and put back into a PDF with no text layer.
  auto r = RunCommand("pdftoppm -r 300 -gray -png -f 7 -l 8 " + ShellQuote(pdf) + " " +
                      ShellQuote(scratch + "/p") + " && img2pdf -o " +
                      ShellQuote(scratch + "/scan.pdf") + " " + ShellQuote(scratch) + "/p-*.png");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  DocumentRead scan = ReadDocument(scratch + "/scan.pdf", TextOnly());
  ASSERT_TRUE(scan.status.ok()) << scan.status.ToString();
  ASSERT_EQ(scan.pages.size(), 2u);
  DocumentOptions original = TextOnly();
  original.pages = {7, 8};
  DocumentRead text = ReadDocument(pdf, original);
  ASSERT_EQ(text.pages.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(scan.pages[i].source, TextSource::kOcr);
    const double cer = testing::CharacterErrorRate(scan.pages[i].text, text.pages[i].text);
    std::printf("OCR character error rate, maint-guide page %zu: %.4f (confidence %.0f)\n", i + 7,
                cer, scan.pages[i].ocr_confidence);
    EXPECT_LT(cer, 0.05);
  }
}

TEST(RealDocumentsTest, DebianEpubChapters) {
  const std::string epub = testing::DebianPackageFile(
      "debian-policy", "usr/share/doc/debian-policy/policy.epub", "policy.epub");
  if (epub.empty()) GTEST_SKIP() << "debian-policy could not be fetched";
  DocumentRead read = ReadDocument(epub, TextOnly());
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  EXPECT_EQ(read.report.format, DocumentFormat::kEpub);
  EXPECT_GT(read.pages.size(), 10u);
  int titled = 0;
  size_t characters = 0;
  bool found = false;
  for (const DocumentPage& page : read.pages) {
    titled += !page.title.empty();
    characters += page.text.size();
    found = found || page.text.find("Debian Policy Manual") != std::string::npos;
  }
  EXPECT_EQ(titled, static_cast<int>(read.pages.size()));
  EXPECT_GT(characters, 300000u);
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace reel::pipeline
