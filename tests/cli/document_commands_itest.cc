// `reel text` and `reel pages` end to end, against pdftotext and pdfinfo in the same test.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "tests/cli/cli_test_util.h"
#include "tests/support/test_documents.h"
#include "tests/support/test_environment.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

class DocumentCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    dir_ = TestDocuments(&why);
    if (dir_.empty()) GTEST_SKIP() << why;
  }
  std::string Doc(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  std::string dir_;
};

TEST_F(DocumentCommandsTest, TextPrintsPagesSeparatedByFormFeedsLikePdftotext) {
  CommandResult ours = Reel("text " + ShellQuote(Doc("text.pdf")));
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  CommandResult reference =
      RunCommand("pdftotext -enc UTF-8 " + ShellQuote(Doc("text.pdf")) + " -");
  ASSERT_EQ(reference.exit_code, 0);
  // One form feed after each page, as pdftotext writes them.
  EXPECT_EQ(std::count(ours.out.begin(), ours.out.end(), '\f'), 3);
  const std::vector<std::string> got = SplitPages(ours.out), want = SplitPages(reference.out);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(NormalizeSpace(got[i]), NormalizeSpace(want[i]));
  EXPECT_NE(ours.out.find("Ελληνικά"), std::string::npos);
  EXPECT_NE(ours.err.find("pdf, 3 of 3 pages read"), std::string::npos) << ours.err;

  CommandResult range = Reel("text --pages 2 " + ShellQuote(Doc("text.pdf")));
  ASSERT_EQ(range.exit_code, 0) << range.err;
  EXPECT_EQ(NormalizeSpace(range.out), NormalizeSpace(want[1]));
}

TEST_F(DocumentCommandsTest, TextOfMarkupFormats) {
  for (const std::string name :
       {"page.html", "book.epub", "doc.docx", "doc.odt", "deck.pptx", "deck.odp"}) {
    SCOPED_TRACE(name);
    CommandResult r = Reel("text " + ShellQuote(Doc(name)));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string expected = ReadText(Doc(name + ".expected.txt"));
    EXPECT_EQ(SplitPages(r.out), SplitPages(expected));
  }
}

TEST_F(DocumentCommandsTest, TextErrorsNameTheFileAndSetTheExitCode) {
  CommandResult encrypted = Reel("text " + ShellQuote(Doc("encrypted.pdf")));
  EXPECT_EQ(encrypted.exit_code, 1);
  EXPECT_NE(encrypted.err.find("encrypted.pdf: the PDF is encrypted"), std::string::npos)
      << encrypted.err;
  CommandResult bad_range = Reel("text --pages 3-1 " + ShellQuote(Doc("text.pdf")));
  EXPECT_EQ(bad_range.exit_code, 2);
  EXPECT_NE(bad_range.err.find("the last page is before the first"), std::string::npos);
  CommandResult limited = Reel("text --no-ocr --max-pages 7 " + ShellQuote(Doc("pages-10000.pdf")));
  EXPECT_EQ(limited.exit_code, 3) << limited.err;
  EXPECT_EQ(std::count(limited.out.begin(), limited.out.end(), '\f'), 7);
  EXPECT_NE(limited.err.find("the document has 10000 pages"), std::string::npos) << limited.err;
  // Drawing the page reads its 1 GiB font: that page fails, the next is drawn.
  if (kUnderAddressSanitizer) {
    GTEST_SKIP() << "the memory limit (RLIMIT_AS) is not set under AddressSanitizer";
  }
  const std::string out = ScratchDir("pages_bomb") + "/out";
  CommandResult bomb = Reel("pages --no-ocr --memory-limit 256 " +
                            ShellQuote(Doc("font-bomb.pdf")) + " -o " + ShellQuote(out));
  EXPECT_EQ(bomb.exit_code, 3) << bomb.err;
  EXPECT_NE(bomb.err.find("font-bomb.pdf: page 1: "), std::string::npos) << bomb.err;
  EXPECT_NE(bomb.err.find("memory limit is 256 MiB"), std::string::npos) << bomb.err;
  EXPECT_FALSE(fs::exists(out + "/page_0001.png"));
  EXPECT_TRUE(fs::exists(out + "/page_0002.png"));
}

TEST_F(DocumentCommandsTest, PagesWritesPicturesAndPagesJson) {
  const std::string out = ScratchDir("pages_command") + "/out";
  CommandResult r =
      Reel("pages " + ShellQuote(Doc("text.pdf")) + " --pages 1-2 -o " + ShellQuote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json pages = nlohmann::json::parse(ReadText(out + "/pages.json"));
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_EQ(pages[0]["page"], 1);
  EXPECT_EQ(pages[0]["label"], "i");
  EXPECT_EQ(pages[1]["label"], "ii");
  EXPECT_EQ(pages[0]["ocr"], false);
  EXPECT_EQ(pages[0]["characters"], 124);
  EXPECT_EQ(pages[0]["file"], "page_0001.png");
  EXPECT_EQ(pages[0]["width_pt"], 612);
  const int width = pages[0]["width"], height = pages[0]["height"];
  EXPECT_LE(int64_t{width} * height, 451584);
  EXPECT_EQ(width % 28, 0);
  EXPECT_EQ(height % 28, 0);
  EXPECT_TRUE(fs::exists(out + "/page_0001.png"));
  EXPECT_TRUE(fs::exists(out + "/page_0002.png"));
  EXPECT_FALSE(fs::exists(out + "/page_0003.png"));
  // The PNG's own header (IHDR: width and height, big-endian, at bytes 16 and 20).
  const std::string png = ReadText(out + "/page_0001.png");
  ASSERT_GT(png.size(), 24u);
  auto be32 = [&](size_t at) {
    return (uint32_t{static_cast<uint8_t>(png[at])} << 24) |
           (uint32_t{static_cast<uint8_t>(png[at + 1])} << 16) |
           (uint32_t{static_cast<uint8_t>(png[at + 2])} << 8) | static_cast<uint8_t>(png[at + 3]);
  };
  EXPECT_EQ(be32(16), static_cast<uint32_t>(width));
  EXPECT_EQ(be32(20), static_cast<uint32_t>(height));

  // A folder with files is refused without --overwrite, and only Reel's files are replaced.
  WriteText(out + "/keep.txt", "mine");
  CommandResult again =
      Reel("pages " + ShellQuote(Doc("text.pdf")) + " --pages 3 -o " + ShellQuote(out));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("--overwrite"), std::string::npos);
  CommandResult over =
      Reel("pages " + ShellQuote(Doc("text.pdf")) +
           " --pages 3 --max-pixels 100000 --format jpg --overwrite -o " + ShellQuote(out));
  ASSERT_EQ(over.exit_code, 0) << over.err;
  EXPECT_FALSE(fs::exists(out + "/page_0001.png"));
  EXPECT_TRUE(fs::exists(out + "/page_0003.jpg"));
  EXPECT_EQ(ReadText(out + "/keep.txt"), "mine");
  const nlohmann::json small = nlohmann::json::parse(ReadText(out + "/pages.json"));
  ASSERT_EQ(small.size(), 1u);
  EXPECT_LE(small[0]["width"].get<int64_t>() * small[0]["height"].get<int64_t>(), 100000);
}

TEST_F(DocumentCommandsTest, PagesOfAScanSaysOcr) {
  const std::string out = ScratchDir("pages_scan") + "/out";
  CommandResult r = Reel("pages " + ShellQuote(Doc("scanned.pdf")) + " -o " + ShellQuote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json pages = nlohmann::json::parse(ReadText(out + "/pages.json"));
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(pages[0]["ocr"], true);
  EXPECT_GT(pages[0]["ocr_confidence"].get<double>(), 50);
  EXPECT_GT(pages[0]["characters"].get<int>(), 100);
  EXPECT_NE(r.err.find("1 by OCR"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace reel::testing
