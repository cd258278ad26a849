// Reel's tokenizer against the Hugging Face tokenizers library (npm package, run with node) on
// real tokenizer.json files from npm and on variants of them that exercise every component:
// the ids of every document must be identical. The default run covers the generated hard cases,
// a sample of the real text and every added token in context; the slow run
// (TokenizerParitySlowTest) covers all of the real text (over 6 MB in ~60 languages).
// Skipped when node, npm or the registry is unavailable.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "llm/tokenizer.h"
#include "tests/support/tokenizer_reference.h"

namespace reel::llm {
namespace {

using testing::Docs;
using testing::IdLists;
using nlohmann::json;

const Tokenizer& Ours(const std::string& path) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded;
  auto it = loaded.find(path);
  if (it == loaded.end()) {
    Result<Tokenizer> t = Tokenizer::Load(path);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (!t.ok()) std::abort();
    it = loaded.emplace(path, std::make_unique<Tokenizer>(std::move(t).value())).first;
  }
  return *it->second;
}

std::string Escape(const std::string& s, size_t limit = 160) {
  std::string out;
  for (unsigned char c : s.substr(0, limit)) {
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > limit) out += "...";
  return out;
}

std::string IdsAround(const std::vector<uint32_t>& ids, size_t at) {
  std::string out;
  size_t from = at >= 3 ? at - 3 : 0;
  for (size_t i = from; i < std::min(ids.size(), at + 5); ++i) {
    out += (i == at ? "[" : "") + std::to_string(ids[i]) + (i == at ? "] " : " ");
  }
  return out;
}

struct Agreement {
  size_t docs = 0, same = 0, bytes = 0, tokens = 0;
};

Agreement ExpectParity(const std::string& file, const Docs& docs, bool add_special,
                       const std::string& label) {
  Agreement a;
  std::string error;
  auto ref = testing::ReferenceIds(file, docs, add_special, &error);
  EXPECT_TRUE(ref.has_value()) << error;
  if (!ref) return a;
  EXPECT_EQ(ref->size(), docs.size());
  const Tokenizer& tok = Ours(file);
  int reported = 0;
  for (size_t i = 0; i < docs.size() && i < ref->size(); ++i) {
    std::vector<uint32_t> ours = tok.Encode(docs[i], add_special);
    ++a.docs;
    a.bytes += docs[i].size();
    a.tokens += ours.size();
    if (ours == (*ref)[i]) {
      ++a.same;
      continue;
    }
    if (reported++ < 5) {
      const auto& theirs = (*ref)[i];
      size_t k = 0;
      while (k < ours.size() && k < theirs.size() && ours[k] == theirs[k]) ++k;
      ADD_FAILURE() << label << ": document " << i << " (" << docs[i].size()
                    << " bytes) differs at token " << k << "\n  text: \"" << Escape(docs[i])
                    << "\"\n  ours:   " << IdsAround(ours, k) << " \""
                    << Escape(tok.Decode(std::vector<uint32_t>(
                           ours.begin() + static_cast<long>(std::min(k, ours.size())),
                           ours.begin() + static_cast<long>(std::min(k + 4, ours.size())))))
                    << "\"\n  theirs: " << IdsAround(theirs, k) << " \""
                    << Escape(tok.Decode(std::vector<uint32_t>(
                           theirs.begin() + static_cast<long>(std::min(k, theirs.size())),
                           theirs.begin() + static_cast<long>(std::min(k + 4, theirs.size())))))
                    << "\"";
    }
  }
  EXPECT_EQ(a.same, a.docs) << label;
  std::printf("[ parity ] %s: %zu of %zu documents identical (%zu bytes, %zu tokens)\n",
              label.c_str(), a.same, a.docs, a.bytes, a.tokens);
  return a;
}

// Every added token of the file in contexts that test its flags.
Docs AddedTokenDocs(const std::string& file) {
  json root = json::parse(testing::ReadFile(file));
  Docs docs;
  std::mt19937 rng(7);
  std::vector<std::string> tokens;
  for (const json& t : root["added_tokens"]) tokens.push_back(t["content"].get<std::string>());
  // Files with thousands of added tokens: every one of the first 400 and a sample of the rest.
  std::vector<std::string> picked;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i < 400 || rng() % 16 == 0) picked.push_back(tokens[i]);
  }
  const char* contexts[] = {"{}",         "x{}y",        " {} ",   "{}{}",        "word{}word",
                            "\n{} \n",    "a {}b",      "  {}  ", "{} tail",     "head {}",
                            "éé{}日本",   "{}\t{}"};
  for (const std::string& t : picked) {
    std::string doc;
    for (const char* c : contexts) {
      std::string s = c;
      size_t p;
      while ((p = s.find("{}")) != std::string::npos) s.replace(p, 2, t);
      doc += s + "|";
    }
    if (t.size() > 2) doc += t.substr(0, t.size() / 2) + " " + t.substr(1) + " ";
    docs.push_back(doc);
  }
  // Several tokens in one text, next to each other and to ordinary words.
  for (int k = 0; k < 200 && !picked.empty(); ++k) {
    std::string doc;
    for (int j = 0; j < 8; ++j) {
      doc += picked[rng() % picked.size()];
      doc += (rng() % 3 == 0) ? " text " : (rng() % 2 ? "" : "\n");
    }
    docs.push_back(doc);
  }
  return docs;
}

class TokenizerParityTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    file_ = testing::ReferenceTokenizerFile(GetParam());
    if (file_.empty()) GTEST_SKIP() << "the reference tokenizer library is not available";
    corpus_ = testing::TokenizerCorpusDir();
  }
  std::string file_, corpus_;
};
using TokenizerParitySlowTest = TokenizerParityTest;

TEST_P(TokenizerParityTest, GeneratedHardCases) {
  if (corpus_.empty()) GTEST_SKIP() << "corpus unavailable";
  Docs docs = testing::ReadDocs(corpus_ + "/synthetic.docs");
  ASSERT_GT(docs.size(), 1000u);
  ExpectParity(file_, docs, false, GetParam() + " synthetic");
}

TEST_P(TokenizerParityTest, SampleOfRealText) {
  if (corpus_.empty()) GTEST_SKIP() << "corpus unavailable";
  Docs all = testing::ReadDocs(corpus_ + "/real.docs");
  if (all.empty()) GTEST_SKIP() << "no Debian package could be fetched";
  Docs sample;
  for (size_t i = 0; i < all.size(); i += 12) sample.push_back(all[i]);
  ExpectParity(file_, sample, false, GetParam() + " real sample");
}

TEST_P(TokenizerParityTest, AddedTokensInText) {
  ExpectParity(file_, AddedTokenDocs(file_), false, GetParam() + " added tokens");
}

TEST_P(TokenizerParityTest, AddSpecialTokens) {
  Docs docs = {"", "Hello world", " leading space", "日本語", "<|endoftext|>", "a\nb"};
  ExpectParity(file_, docs, true, GetParam() + " with special tokens");
}

TEST_P(TokenizerParityTest, DecodeMatches) {
  if (corpus_.empty()) GTEST_SKIP() << "corpus unavailable";
  Docs docs = testing::ReadDocs(corpus_ + "/synthetic.docs");
  Docs sample;
  for (size_t i = 0; i < docs.size(); i += 7) sample.push_back(docs[i]);
  Docs added = AddedTokenDocs(file_);
  sample.insert(sample.end(), added.begin(), added.begin() + std::min<long>(50, added.size()));
  const Tokenizer& tok = Ours(file_);
  IdLists ids;
  for (const std::string& d : sample) ids.push_back(tok.Encode(d));
  // Arbitrary id sequences too: pieces of tokens, ids out of order.
  std::mt19937 rng(3);
  for (int k = 0; k < 100; ++k) {
    std::vector<uint32_t> l;
    for (int j = 0; j < 20; ++j) l.push_back(rng() % 50000);
    ids.push_back(l);
  }
  for (bool skip : {false, true}) {
    std::string error;
    auto ref = testing::ReferenceDecode(file_, ids, skip, &error);
    ASSERT_TRUE(ref.has_value()) << error;
    ASSERT_EQ(ref->size(), ids.size());
    size_t same = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      std::string ours = tok.Decode(ids[i], skip);
      if (ours == (*ref)[i]) {
        ++same;
      } else if (same + 5 > i) {
        ADD_FAILURE() << "decode " << i << (skip ? " (skip special)" : "") << ": ours \""
                      << Escape(ours) << "\" theirs \"" << Escape((*ref)[i]) << "\"";
      }
    }
    EXPECT_EQ(same, ids.size());
  }
}

TEST_P(TokenizerParitySlowTest, AllRealText) {
  if (corpus_.empty()) GTEST_SKIP() << "corpus unavailable";
  Docs docs = testing::ReadDocs(corpus_ + "/real.docs");
  if (docs.empty()) GTEST_SKIP() << "no Debian package could be fetched";
  Docs synthetic = testing::ReadDocs(corpus_ + "/synthetic.docs");
  docs.insert(docs.end(), synthetic.begin(), synthetic.end());
  Agreement a = ExpectParity(file_, docs, false, GetParam() + " all text");
  EXPECT_GT(a.bytes, 5u << 20);
}

INSTANTIATE_TEST_SUITE_P(Files, TokenizerParityTest,
                         ::testing::ValuesIn(testing::ReferenceTokenizerNames()));
INSTANTIATE_TEST_SUITE_P(Files, TokenizerParitySlowTest,
                         ::testing::ValuesIn(testing::ReferenceTokenizerNames()));

}  // namespace
}  // namespace reel::llm
