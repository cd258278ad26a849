// The document readers' small parts: page ranges, text tidying, zip member paths, text building.
#include <gtest/gtest.h>

#include "pipeline/documents/document.h"
#include "pipeline/documents/internal/text_builder.h"
#include "pipeline/documents/internal/text_util.h"
#include "pipeline/documents/internal/zip_archive.h"

namespace reel::pipeline {
namespace {

TEST(PageRangeTest, ParsesTheThreeForms) {
  struct Case {
    const char* text;
    int first, last;
  };
  for (const Case& c : {Case{"3", 3, 3}, Case{"1-5", 1, 5}, Case{"7-", 7, 0}, Case{"2-2", 2, 2}}) {
    Result<PageRange> range = ParsePageRange(c.text);
    ASSERT_TRUE(range.ok()) << c.text;
    EXPECT_EQ(range->first, c.first) << c.text;
    EXPECT_EQ(range->last, c.last) << c.text;
  }
  for (const char* bad : {"", "0", "-3", "a", "1-b", "5-2", "1,2", "1--2", "99999999999"}) {
    Result<PageRange> range = ParsePageRange(bad);
    EXPECT_FALSE(range.ok()) << bad;
    EXPECT_EQ(range.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  PageRange open{4, 0};
  EXPECT_FALSE(open.Contains(3));
  EXPECT_TRUE(open.Contains(4000));
}

TEST(DocumentTextTest, NormalizePageText) {
  using documents::NormalizePageText;
  EXPECT_EQ(NormalizePageText(""), "");
  EXPECT_EQ(NormalizePageText("\n\n  \n"), "");
  EXPECT_EQ(NormalizePageText("a  \r\nb\f"), "a\nb\n");
  EXPECT_EQ(NormalizePageText("\n\na\n\n\n\nb"), "a\n\nb\n");
  EXPECT_EQ(NormalizePageText("bad \xff byte"), "bad \xEF\xBF\xBD byte\n");
  EXPECT_EQ(documents::CountNonSpace("a b\nΓ\tδ"), 4);
}

TEST(DocumentTextTest, ResolveMember) {
  using documents::ResolveMember;
  EXPECT_EQ(ResolveMember("OEBPS/content.opf", "text/one.xhtml"), "OEBPS/text/one.xhtml");
  EXPECT_EQ(ResolveMember("OEBPS/text/one.xhtml", "../images/a%20b.png#x"), "OEBPS/images/a b.png");
  EXPECT_EQ(ResolveMember("a/b.xml", "/top.xml"), "top.xml");
  EXPECT_EQ(ResolveMember("a.xml", "../../etc/passwd"), "");
  EXPECT_EQ(ResolveMember("", "./x//y.xml"), "x/y.xml");
}

TEST(DocumentTextTest, TextBuilderLinesParagraphsAndPrefixes) {
  documents::TextBuilder b;
  b.Text("  Hello \n  world ");
  b.ParagraphBreak();
  b.LinePrefix("# ");
  b.Text("Title");
  b.ParagraphBreak();
  b.LinePrefix("- ");
  b.Text("one");
  b.LinePrefix("- ");
  b.Text("two");
  b.LineBreak();
  b.Text("a");
  b.Separator(" | ");
  b.Text("b");
  b.ParagraphBreak();
  b.Preformatted("x  y\n\nz");
  EXPECT_EQ(b.Take(), "Hello world\n\n# Title\n\n- one\n- two\na | b\n\nx  y\n\nz\n");
}

TEST(DocumentTextTest, ExtensionsAndNames) {
  for (const char* e :
       {".pdf", ".html", ".htm", ".xhtml", ".epub", ".docx", ".odt", ".pptx", ".odp"}) {
    EXPECT_TRUE(IsDocumentExtension(e)) << e;
  }
  EXPECT_TRUE(IsDocumentExtension(".PDF"));
  EXPECT_FALSE(IsDocumentExtension(".txt"));
  EXPECT_FALSE(IsDocumentExtension(".doc"));
  EXPECT_STREQ(DocumentFormatName(DocumentFormat::kPptx), "pptx");
  EXPECT_STREQ(TextSourceName(TextSource::kOcr), "ocr");
}

}  // namespace
}  // namespace reel::pipeline
