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

#include "llm/tokenizer/tokenizer.h"
#include "tests/support/test_environment.h"
#include "tests/support/tokenizer_reference.h"

namespace reel::llm {
namespace {

using nlohmann::json;
using testing::Docs;
using testing::IdLists;

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
  const char* contexts[] = {"{}",    "x{}y",   " {} ",    "{}{}",    "word{}word", "\n{} \n",
                            "a {}b", "  {}  ", "{} tail", "head {}", "éé{}日本",   "{}\t{}"};
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
    if (file_.empty())
      REEL_SKIP_WITHOUT_REFERENCE(kNpm) << "the reference tokenizer library is not available";
    corpus_ = testing::TokenizerCorpusDir();
  }
  std::string file_, corpus_;
};
using TokenizerParitySlowTest = TokenizerParityTest;

void ExpectDecodeParity(const std::string& file, const Docs& docs) {
  const Tokenizer& tok = Ours(file);
  IdLists ids;
  for (const std::string& d : docs) ids.push_back(tok.Encode(d));
  // Arbitrary id sequences too: pieces of characters, ids out of order, unknown ids.
  std::mt19937 rng(3);
  for (int k = 0; k < 100; ++k) {
    std::vector<uint32_t> l;
    for (int j = 0; j < 20; ++j) l.push_back(rng() % 50000);
    ids.push_back(l);
  }
  ids.push_back({0xFFFFFFF0u, 1, 2});
  for (bool skip : {false, true}) {
    std::string error;
    auto ref = testing::ReferenceDecode(file, ids, skip, &error);
    ASSERT_TRUE(ref.has_value()) << error;
    ASSERT_EQ(ref->size(), ids.size());
    size_t same = 0;
    int reported = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      std::string ours = tok.Decode(ids[i], skip);
      if (ours == (*ref)[i]) {
        ++same;
      } else if (reported++ < 5) {
        ADD_FAILURE() << "decode " << i << (skip ? " (skip special)" : "") << ": ours \""
                      << Escape(ours) << "\" theirs \"" << Escape((*ref)[i]) << "\"";
      }
    }
    EXPECT_EQ(same, ids.size());
  }
}

// One test per file (the file is loaded once): the generated hard cases, a sample of the real
// text, every added token in context, special tokens added, and decoding.
TEST_P(TokenizerParityTest, IdsAndDecoding) {
  if (corpus_.empty()) REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "corpus unavailable";
  Docs synthetic = testing::ReadDocs(corpus_ + "/synthetic.docs");
  ASSERT_GT(synthetic.size(), 1000u);
  ExpectParity(file_, synthetic, false, GetParam() + " generated");
  Docs all = testing::ReadDocs(corpus_ + "/real.docs");
  Docs sample;
  for (size_t i = 0; i < all.size(); i += 12) sample.push_back(all[i]);
  if (!sample.empty()) ExpectParity(file_, sample, false, GetParam() + " real sample");
  Docs added = AddedTokenDocs(file_);
  ExpectParity(file_, added, false, GetParam() + " added tokens");
  Docs special = {"", "Hello world", " leading space", "日本語", "<|endoftext|>", "a\nb"};
  ExpectParity(file_, special, true, GetParam() + " special tokens added");
  Docs decode;
  for (size_t i = 0; i < synthetic.size(); i += 7) decode.push_back(synthetic[i]);
  decode.insert(decode.end(), added.begin(),
                added.begin() + static_cast<long>(std::min<size_t>(50, added.size())));
  ExpectDecodeParity(file_, decode);
}

TEST_P(TokenizerParitySlowTest, AllRealText) {
  if (corpus_.empty()) REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "corpus unavailable";
  Docs docs = testing::ReadDocs(corpus_ + "/real.docs");
  if (docs.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "no Debian package could be fetched";
  Docs synthetic = testing::ReadDocs(corpus_ + "/synthetic.docs");
  docs.insert(docs.end(), synthetic.begin(), synthetic.end());
  Agreement a = ExpectParity(file_, docs, false, GetParam() + " all text");
  EXPECT_GT(a.bytes, 5u << 20);
}

// Variants of the real files that exercise the components and options the real files do not:
// added-token flags, other normalizers and pre-tokenizers, the general regex engine on the
// patterns that have hand-written matchers, SentencePiece-style BPE without pre-tokenizer.
struct Variant {
  const char* name;
  const char* base;
  void (*edit)(json& root);
};

json AddedToken(const std::string& content, bool special, bool lstrip, bool rstrip, bool normalized,
                bool single_word) {
  return {{"id", 0},           {"content", content}, {"single_word", single_word},
          {"lstrip", lstrip},  {"rstrip", rstrip},   {"normalized", normalized},
          {"special", special}};
}

json SplitRegex(const std::string& re, const char* behavior, bool invert) {
  return {
      {"type", "Split"}, {"pattern", {{"Regex", re}}}, {"behavior", behavior}, {"invert", invert}};
}

json ByteLevelPre(bool prefix, bool regex) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", prefix},
          {"trim_offsets", true},
          {"use_regex", regex}};
}

const Variant kVariants[] = {
    {"added-token-flags", "qwen3",
     [](json& r) {
       json& a = r["added_tokens"];
       a.push_back(AddedToken("<L>", true, true, false, false, false));
       a.push_back(AddedToken("<R>", true, false, true, false, false));
       a.push_back(AddedToken("<LR>", false, true, true, false, false));
       a.push_back(AddedToken("word", false, false, false, true, true));
       a.push_back(AddedToken("ab", false, false, false, false, true));
       a.push_back(AddedToken("cafe\xcc\x81", false, false, false, true, false));  // NFC: café
       a.push_back(AddedToken("<a>", true, false, false, false, false));
       a.push_back(AddedToken("<a><b>", true, false, false, false, false));
       a.push_back(AddedToken(" spaced ", false, false, false, false, false));
       a.push_back(AddedToken("Ⅻ", true, false, false, true, false));
       a.push_back(AddedToken("<L>", true, false, true, false, false));  // same content again
       a.push_back(AddedToken("日本", false, true, true, true, true));
       a.push_back(AddedToken("", true, false, false, false, false));  // ignored
     }},
    {"m3-like", "gpt4o",
     [](json& r) {
       // MiniMax-M3's setup on an o200k vocabulary: NFC, the o200k split, M3's added tokens.
       r["normalizer"] = {{"type", "NFC"}};
       for (const char* t :
            {"]~b]", "[e~[", "]~!b[", "]<]image[>[", "]<]video[>[", "]<]start of image[>[",
             "]<]end of image[>[", "<mm:think>", "</mm:think>", "]<]minimax[>["}) {
         r["added_tokens"].push_back(AddedToken(t, true, false, false, false, false));
       }
     }},
    {"general-engine-o200k", "gpt4o",
     [](json& r) {
       json& split = r["pre_tokenizer"]["pretokenizers"][0];
       split["pattern"]["Regex"] = "(?:" + split["pattern"]["Regex"].get<std::string>() + ")";
     }},
    {"general-engine-cl100k", "llama3",
     [](json& r) {
       json& split = r["pre_tokenizer"]["pretokenizers"][0];
       split["pattern"]["Regex"] = "(?:" + split["pattern"]["Regex"].get<std::string>() + ")";
     }},
    {"general-engine-gpt2", "gpt2",
     [](json& r) {
       r["pre_tokenizer"] = {
           {"type", "Sequence"},
           {"pretokenizers",
            {SplitRegex(
                 R"((?:'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+))",
                 "Isolated", false),
             ByteLevelPre(false, false)}}};
     }},
    {"normalizers", "gpt2",
     [](json& r) {
       r["normalizer"] = {
           {"type", "Sequence"},
           {"normalizers",
            {{{"type", "NFKC"}},
             {{"type", "Lowercase"}},
             {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}},
             {{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}},
             {{"type", "Prepend"}, {"prepend", "\xe2\x96\x81"}}}}};
       r["pre_tokenizer"] = ByteLevelPre(true, true);
     }},
    {"digits-nfd", "gpt2",
     [](json& r) {
       r["normalizer"] = {{"type", "NFD"}};
       r["pre_tokenizer"] = {{"type", "Sequence"},
                             {"pretokenizers",
                              {{{"type", "Digits"}, {"individual_digits", true}},
                               {{"type", "WhitespaceSplit"}},
                               ByteLevelPre(false, false)}}};
     }},
    {"split-behaviors", "llama3",
     [](json& r) {
       r["normalizer"] = {{"type", "NFKD"}};
       r["pre_tokenizer"] = {{"type", "Sequence"},
                             {"pretokenizers",
                              {{{"type", "Split"},
                                {"pattern", {{"String", " "}}},
                                {"behavior", "MergedWithNext"},
                                {"invert", false}},
                               SplitRegex(R"(\p{P}+)", "Contiguous", false),
                               SplitRegex(R"([0-9]{2})", "MergedWithPrevious", false),
                               SplitRegex(R"((?<=[a-z])(?=[A-Z])|x+?y|\bthe\b)", "Removed", false),
                               {{"type", "Digits"}, {"individual_digits", false}},
                               ByteLevelPre(false, false)}}};
     }},
    {"sentencepiece-style", "gemma3",
     [](json& r) {
       r["normalizer"] = {
           {"type", "Sequence"},
           {"normalizers",
            {{{"type", "Prepend"}, {"prepend", "\xe2\x96\x81"}},
             {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xe2\x96\x81"}}}}};
       r["pre_tokenizer"] = nullptr;
     }},
};

class TokenizerVariantParityTest : public ::testing::TestWithParam<Variant> {};

TEST_P(TokenizerVariantParityTest, IdsAndDecoding) {
  const Variant& v = GetParam();
  std::string base = testing::ReferenceTokenizerFile(v.base);
  if (base.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kNpm) << "the reference tokenizer library is not available";
  std::string corpus = testing::TokenizerCorpusDir();
  if (corpus.empty()) REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << "corpus unavailable";
  json root = json::parse(testing::ReadFile(base));
  v.edit(root);
  std::string file = testing::TokenizerScratchDir() + "/variant-" + v.name + ".json";
  {
    std::string text = root.dump();
    if (testing::ReadFile(file) != text) {
      std::FILE* f = std::fopen(file.c_str(), "wb");
      ASSERT_NE(f, nullptr);
      std::fwrite(text.data(), 1, text.size(), f);
      std::fclose(f);
    }
  }
  Docs synthetic = testing::ReadDocs(corpus + "/synthetic.docs");
  Docs docs;
  for (size_t i = 0; i < synthetic.size(); i += 2) docs.push_back(synthetic[i]);
  Docs real = testing::ReadDocs(corpus + "/real.docs");
  for (size_t i = 5; i < real.size(); i += 40) docs.push_back(real[i]);
  Docs added = AddedTokenDocs(file);
  docs.insert(docs.end(), added.begin(), added.end());
  ExpectParity(file, docs, false, std::string(v.name));
  Docs decode;
  for (size_t i = 0; i < docs.size(); i += 11) decode.push_back(docs[i]);
  ExpectDecodeParity(file, decode);
}

INSTANTIATE_TEST_SUITE_P(Variants, TokenizerVariantParityTest, ::testing::ValuesIn(kVariants),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           std::string n = info.param.name;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

INSTANTIATE_TEST_SUITE_P(Files, TokenizerParityTest,
                         ::testing::ValuesIn(testing::ReferenceTokenizerNames()));
INSTANTIATE_TEST_SUITE_P(Files, TokenizerParitySlowTest,
                         ::testing::ValuesIn(testing::ReferenceTokenizerNames()));

}  // namespace
}  // namespace reel::llm
