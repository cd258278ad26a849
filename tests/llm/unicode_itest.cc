// Every Unicode code point, Reel's tables against the Hugging Face tokenizers library: the
// classes of the regular expressions (Oniguruma: \p{...}, \s, \w, \d), Rust's char properties
// (is_whitespace, is_numeric, to_lowercase, the regex crate's \w) and the four normalization
// forms. Skipped when node, npm or the registry is unavailable.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "llm/tokenizer/pre_tokenizer.h"
#include "llm/tokenizer/tokenizer.h"
#include "llm/tokenizer/unicode.h"
#include "llm/tokenizer/utf8.h"
#include "tests/support/test_environment.h"
#include "tests/support/tokenizer_reference.h"

namespace reel::llm::internal {
namespace {

using nlohmann::json;
using testing::Docs;

// Whether a code point is in the planes with assigned characters (0 to 3 and 14's tags and
// variation selectors), or one of every 4096th of the rest (planes 4 to 13, unassigned; 15 and
// 16, private use).
bool InAssignedPlanes(uint32_t cp) {
  return cp <= 0x323AF || (cp >= 0xE0000 && cp <= 0xE0FFF) || cp % 4096 == 0;
}

// All Unicode scalar values in order, in documents of 4096 code points.
Docs AllCodePoints(const std::string& before = "", const std::string& after = "") {
  Docs docs;
  std::string doc;
  int n = 0;
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    doc += before;
    AppendUtf8(doc, cp);
    doc += after;
    if (++n == 4096) {
      docs.push_back(doc);
      doc.clear();
      n = 0;
    }
  }
  if (!doc.empty()) docs.push_back(doc);
  return docs;
}

// Compares the pieces a pre-tokenizer makes of every code point with the library's.
void ExpectSamePieces(const json& config, const Docs& docs) {
  std::string error;
  auto ref = testing::ReferencePreTokenize(config.dump(), docs, &error);
  ASSERT_TRUE(ref.has_value()) << error;
  ASSERT_EQ(ref->size(), docs.size());
  auto pre = MakePreTokenizer(config);
  ASSERT_TRUE(pre.ok()) << pre.status().ToString();
  int failures = 0;
  for (size_t d = 0; d < docs.size() && failures < 3; ++d) {
    SplitList list;
    list.buffer = docs[d];
    list.splits.push_back({0, static_cast<uint32_t>(docs[d].size()), false});
    (*pre)->Apply(list);
    Docs ours;
    for (const Split& s : list.splits) ours.push_back(std::string(list.Text(list.Materialize(s))));
    if (ours == (*ref)[d]) continue;
    ++failures;
    // The code points kept by one side and not the other.
    auto kept = [](const Docs& pieces) {
      std::vector<uint32_t> cps;
      for (const std::string& p : pieces) {
        size_t i = 0;
        while (i < p.size()) cps.push_back(NextCodePoint(p, i));
      }
      return cps;
    };
    std::vector<uint32_t> a = kept(ours), b = kept((*ref)[d]), only_ours, only_theirs;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_ours));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_theirs));
    auto show = [](const std::vector<uint32_t>& v) {
      std::string out;
      for (size_t i = 0; i < v.size() && i < 24; ++i) {
        char buf[12];
        std::snprintf(buf, sizeof buf, "%04X ", v[i]);
        out += buf;
      }
      return out + (v.size() > 24 ? "..." : "");
    };
    ADD_FAILURE() << config.dump() << ": document " << d
                  << ": kept only by Reel: " << show(only_ours)
                  << "; kept only by the library: " << show(only_theirs)
                  << (only_ours.empty() && only_theirs.empty() ? " (same characters, other cuts)"
                                                               : "");
  }
}

class UnicodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::TokenizerReferenceDir().empty()) {
      REEL_SKIP_WITHOUT_REFERENCE(kNpm) << "the reference tokenizer library is not available";
    }
  }
};

// A regular-expression class over the code points: the same pieces as the library's.
void ExpectSameClass(const char* cls, const Docs& docs) {
  SCOPED_TRACE(cls);
  ExpectSamePieces({{"type", "Split"},
                    {"pattern", {{"Regex", cls}}},
                    {"behavior", "Removed"},
                    {"invert", false}},
                   docs);
}

// The classes the pre-tokenizer patterns of the tokenizers Reel knows use (GPT-2, cl100k, o200k,
// Qwen, Llama 3, DeepSeek V3, Tekken, MiniMax), on every code point. The other classes:
// UnicodeSlowTest (about 30 s more).
TEST_F(UnicodeTest, OnigurumaClassesOnEveryCodePoint) {
  const Docs docs = AllCodePoints();
  for (const char* cls : {"\\p{L}", "\\p{Lu}", "\\p{Ll}", "\\p{Lt}", "\\p{Lm}", "\\p{Lo}", "\\p{M}",
                          "\\p{N}", "\\p{P}", "\\p{S}", "\\s", "[^\\r\\n\\p{L}\\p{N}]",
                          "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"}) {
    ExpectSameClass(cls, docs);
  }
}

class UnicodeSlowTest : public UnicodeTest {};

TEST_F(UnicodeSlowTest, EveryOtherOnigurumaClassOnEveryCodePoint) {
  const Docs docs = AllCodePoints();
  for (const char* cls :
       {"\\p{Mn}", "\\p{Mc}", "\\p{Me}", "\\p{Nd}", "\\p{Nl}", "\\p{No}", "\\p{Pc}", "\\p{Pd}",
        "\\p{Ps}", "\\p{Pe}", "\\p{Pi}", "\\p{Pf}", "\\p{Po}", "\\p{Sm}", "\\p{Sc}", "\\p{Sk}",
        "\\p{So}", "\\p{Z}",  "\\p{Zs}", "\\p{Zl}", "\\p{Zp}", "\\p{C}",  "\\p{Cc}", "\\p{Cf}",
        "\\p{Co}", "\\p{Cn}", "\\w",     "\\d",     "\\h",     "."}) {
    ExpectSameClass(cls, docs);
  }
}

TEST_F(UnicodeTest, RustCharPropertiesOnEveryCodePoint) {
  Docs docs = AllCodePoints();
  // char::is_numeric (Digits) and char::is_whitespace (WhitespaceSplit).
  ExpectSamePieces({{"type", "Digits"}, {"individual_digits", false}}, docs);
  ExpectSamePieces({{"type", "WhitespaceSplit"}}, docs);
  // char::to_lowercase.
  std::string error;
  auto ref = testing::ReferenceNormalize("lowercase", docs, &error);
  ASSERT_TRUE(ref.has_value()) << error;
  for (size_t d = 0; d < docs.size(); ++d) {
    std::string ours;
    size_t i = 0;
    while (i < docs[d].size()) AppendLowercase(ours, NextCodePoint(docs[d], i));
    ASSERT_EQ(ours, (*ref)[d]) << "lowercase of document " << d;
  }
}

TEST_F(UnicodeTest, NormalizationFormsOnEveryCodePoint) {
  // Each code point after a NUL, so that neighbours never interact.
  Docs docs = AllCodePoints(std::string(1, '\0'));
  const std::pair<const char*, NormalizationForm> forms[] = {{"nfc", NormalizationForm::kNfc},
                                                             {"nfd", NormalizationForm::kNfd},
                                                             {"nfkc", NormalizationForm::kNfkc},
                                                             {"nfkd", NormalizationForm::kNfkd}};
  for (const auto& [name, form] : forms) {
    std::string error;
    auto ref = testing::ReferenceNormalize(name, docs, &error);
    ASSERT_TRUE(ref.has_value()) << error;
    int failures = 0;
    for (size_t d = 0; d < docs.size() && failures < 3; ++d) {
      std::string ours = Normalize(docs[d], form);
      if (ours != (*ref)[d]) {
        ++failures;
        ADD_FAILURE() << name << " differs in document " << d;
      }
      // The quick check may only say "unchanged" when the text is indeed unchanged.
      if (IsNormalizedQuick(docs[d], form)) {
        EXPECT_EQ(ours, docs[d]) << name << " " << d;
      }
    }
  }
}

TEST_F(UnicodeTest, CompositionOfEveryDecomposedCharacter) {
  // Every character's canonical decomposition, composed again (NFC), and with a second mark.
  Docs docs;
  std::string doc;
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string one;
    AppendUtf8(one, cp);
    std::string d = Normalize(one, NormalizationForm::kNfd);
    if (d == one) continue;
    doc += d + " " + d + "\xcc\x81 " + d + "\xcc\xa3\xcc\x81 ";
    if (doc.size() > 8000) {
      docs.push_back(doc);
      doc.clear();
    }
  }
  docs.push_back(doc);
  for (const char* name : {"nfc", "nfkc"}) {
    std::string error;
    auto ref = testing::ReferenceNormalize(name, docs, &error);
    ASSERT_TRUE(ref.has_value()) << error;
    NormalizationForm form =
        std::string(name) == "nfc" ? NormalizationForm::kNfc : NormalizationForm::kNfkc;
    for (size_t d = 0; d < docs.size(); ++d) {
      ASSERT_EQ(Normalize(docs[d], form), (*ref)[d]) << name << " document " << d;
    }
  }
}

// An added single_word token next to each code point: it is a token only when neither
// neighbour is a word character of the regex crate (\w).
void ExpectSingleWordTokensAsTheLibrary(bool assigned_only) {
  std::string base = testing::ReferenceTokenizerFile("gpt2");
  if (base.empty()) REEL_SKIP_WITHOUT_REFERENCE(kNpm) << "gpt2 tokenizer unavailable";
  json root = json::parse(testing::ReadFile(base));
  root["added_tokens"].push_back({{"id", 0},
                                  {"content", "\xe2\x81\x82"},  // U+2042
                                  {"single_word", true},
                                  {"lstrip", false},
                                  {"rstrip", false},
                                  {"normalized", false},
                                  {"special", true}});
  std::string file = testing::TokenizerScratchDir() + "/single-word.json";
  {
    std::string text = root.dump();
    std::FILE* f = std::fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  Docs docs;
  std::string doc;
  int n = 0;
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    if (assigned_only && !InAssignedPlanes(cp)) continue;
    std::string c;
    AppendUtf8(c, cp);
    doc += c + "\xe2\x81\x82 \xe2\x81\x82" + c + " ";
    if (++n == 2048) {
      docs.push_back(doc);
      doc.clear();
      n = 0;
    }
  }
  docs.push_back(doc);
  std::string error;
  auto ref = testing::ReferenceIds(file, docs, false, &error);
  ASSERT_TRUE(ref.has_value()) << error;
  auto tok = Tokenizer::Load(file);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  int failures = 0;
  for (size_t d = 0; d < docs.size() && failures < 3; ++d) {
    if (tok->Encode(docs[d]) == (*ref)[d]) continue;
    ++failures;
    // Find the code points concerned: encode each entry of the document on its own.
    const std::string& doc = docs[d];
    Docs entries;
    std::vector<uint32_t> cps;
    size_t i = 0;
    while (i < doc.size()) {
      size_t start = i;
      cps.push_back(NextCodePoint(doc, i));
      size_t end = doc.find(' ', doc.find(' ', i) + 1);
      entries.push_back(doc.substr(start, end + 1 - start));
      i = end + 1;
    }
    std::string err;
    auto r = testing::ReferenceIds(file, entries, false, &err);
    ASSERT_TRUE(r.has_value()) << err;
    std::string bad;
    for (size_t k = 0, found = 0; k < entries.size() && found < 24; ++k) {
      if (tok->Encode(entries[k]) != (*r)[k]) {
        char buf[12];
        std::snprintf(buf, sizeof buf, "%04X ", cps[k]);
        bad += buf;
        ++found;
      }
    }
    ADD_FAILURE() << "single_word token next to: " << bad;
  }
}

// The planes with assigned characters, and a sample of the rest (InAssignedPlanes).
TEST_F(UnicodeTest, RegexCrateWordForSingleWordTokensOnEveryAssignedCodePoint) {
  ExpectSingleWordTokensAsTheLibrary(/*assigned_only=*/true);
}

// Every code point (about 35 s).
TEST_F(UnicodeSlowTest, RegexCrateWordForSingleWordTokensOnEveryCodePoint) {
  ExpectSingleWordTokensAsTheLibrary(/*assigned_only=*/false);
}

}  // namespace
}  // namespace reel::llm::internal
