// Page references in answers about documents (base/page_references.h).
#include "base/page_references.h"

#include <gtest/gtest.h>

#include <string>

namespace reel {
namespace {

struct Case {
  const char* text;
  std::vector<std::pair<std::string, std::pair<int, int>>> want;  // text, (page, end or 0)
};

TEST(PageReferencesTest, FindsPagesAndRangesAndLeavesOtherNumbers) {
  const Case cases[] = {
      {"See p. 12 for the table.", {{"p. 12", {12, 0}}}},
      {"as page 12 shows", {{"page 12", {12, 0}}}},
      {"On Page 3 and pp. 3-5", {{"Page 3", {3, 0}}, {"pp. 3-5", {3, 5}}}},
      {"pages 3 to 5, pages 7", {{"pages 3 to 5", {3, 5}}, {"pages 7", {7, 0}}}},
      {"pp. 10\xE2\x80\x93"
       "12",
       {{"pp. 10\xE2\x80\x93"
         "12",
         {10, 12}}}},
      {"p12 and p 13", {{"p12", {12, 0}}, {"p 13", {13, 0}}}},
      {"Seite 4, Seiten 5 bis 6", {{"Seite 4", {4, 0}}, {"Seiten 5 bis 6", {5, 6}}}},
      {"\xE7\xAC\xAC"
       "12\xE9\xA1\xB5",
       {{"\xE7\xAC\xAC"
         "12\xE9\xA1\xB5",
         {12, 0}}}},
      // Not pages: no page word, a word that only ends in p, glued letters, page 0, a range
      // that goes backwards (the first page stays), a singular word with a range.
      {"12 apples, app. 3, pagesize 4, p12x, page 0", {}},
      {"pp. 9-3", {{"pp. 9", {9, 0}}}},
      {"page 3-5", {{"page 3", {3, 0}}}},
      {"at 01:15 on the page.", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string text = c.text;
    std::vector<PageReference> refs = FindPageReferences(text);
    ASSERT_EQ(refs.size(), c.want.size());
    for (size_t i = 0; i < refs.size(); ++i) {
      EXPECT_EQ(text.substr(refs[i].begin, refs[i].end - refs[i].begin), c.want[i].first);
      EXPECT_EQ(refs[i].page, c.want[i].second.first);
      EXPECT_EQ(refs[i].end_page.value_or(0), c.want[i].second.second);
    }
  }
}

TEST(PageReferencesTest, AnyBytesAreAccepted) {
  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes.push_back(static_cast<char>((i * 131 + 7) % 256));
  bytes += "page 99999999 \xE7\xAC\xAC";
  for (const PageReference& r : FindPageReferences(bytes)) {
    EXPECT_LE(r.end, bytes.size());
    EXPECT_LT(r.begin, r.end);
  }
}

}  // namespace
}  // namespace reel
