// Gemma 3's tokenizer.json (from npm, see tests/support/tokenizer_reference.h) through the
// word-cutting fast path (llm/tokenizer/char_words.h) against the general path (the same file
// with its pre-tokenizer's String " " given as a Regex: the same ids, but not recognized as
// leaving the text whole) and against the Hugging Face library, on texts made to be hard for
// it: runs of spaces, leading and trailing spaces, tabs and newlines (added tokens), the one
// token with a character before '▁' (">▁</"), raw '▁', added tokens, characters without a token
// (byte fallback), invalid UTF-8, long words, and a sample of the real corpus.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "llm/tokenizer/tokenizer.h"
#include "tests/support/test_environment.h"
#include "tests/support/tokenizer_reference.h"

namespace reel::llm {
namespace {

using nlohmann::json;

std::vector<std::string> HardTexts() {
  std::vector<std::string> texts = {
      "",
      " ",
      "  ",
      "        ",
      " leading",
      "trailing ",
      "two  spaces   three    four",
      "a\tb\t\tc \t d",
      "line\nline\n\n\nline \n indented\n\tTabbed",
      "\xe2\x96\x81raw\xe2\x96\x81\xe2\x96\x81marks \xe2\x96\x81 mixed",
      "<b>bold</b> <i>x</i> > </ >  </ a> </div>",
      "x> </y",
      "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
      "<bos><pad> <unused0>[multimodal] <image_soft_token><start_of_image>",
      "emoji \xf0\x9f\xa4\x96\xf0\x9f\xa6\x80 and rare \xf0\x90\x8c\xb0\xf0\x90\x8c\xb1 "
      "\xee\x80\x80\xef\xbf\xbf \xf4\x8f\xbf\xbf",
      "control \x01\x02\x1f\x7f and NUL",
      std::string("nul \0 inside", 12),
      "invalid \xff\xfe utf-8 \xc3 \xe2\x82 end",
      "combining e\xcc\x81\xcc\x82 \xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 "
      "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87",
      "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe6\x96\x87\xe7\xab\xa0 "
      "\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4",
  };
  // Words longer than the batched merge (64 ids) and the cache (256 bytes) take.
  std::string long_word;
  for (int i = 0; i < 40; ++i) long_word += "abc\xe6\x97\xa5";
  texts.push_back(long_word + " " + long_word);
  texts.push_back(std::string(300, 'x') + "  " + std::string(70, '-'));
  // Random mixes of the pieces above.
  const char* parts[] = {" ",
                         "  ",
                         "\t",
                         "\n",
                         "word",
                         "\xe2\x96\x81",
                         ">",
                         "</",
                         "<b>",
                         "\xc3",
                         "\xf0\x9f\xa4\x96",
                         "\xe6\x97\xa5",
                         "x",
                         "<eos>",
                         "\xe2\x80\x94",
                         "\x01",
                         "99"};
  std::mt19937 rng(11);
  for (int i = 0; i < 300; ++i) {
    std::string t;
    const int n = static_cast<int>(rng() % 30);
    for (int k = 0; k < n; ++k) t += parts[rng() % std::size(parts)];
    texts.push_back(t);
  }
  return texts;
}

TEST(CharWordsGemmaTest, FastPathMatchesTheGeneralPathAndTheLibrary) {
  const std::string file = testing::ReferenceTokenizerFile("gemma3");
  if (file.empty())
    REEL_SKIP_WITHOUT_REFERENCE(kNpm) << "the reference tokenizer library is not available";
  Result<Tokenizer> fast = Tokenizer::Load(file);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  ASSERT_NE(fast->Description().find("fast path: SentencePiece words"), std::string::npos)
      << fast->Description();
  json root = json::parse(testing::ReadFile(file));
  ASSERT_EQ(root["pre_tokenizer"]["pattern"]["String"], " ");
  root["pre_tokenizer"]["pattern"] = {{"Regex", " "}};
  Result<Tokenizer> general = Tokenizer::FromJson(root.dump(), "gemma3-general.json");
  ASSERT_TRUE(general.ok()) << general.status().ToString();
  ASSERT_EQ(general->Description().find("fast path"), std::string::npos);

  std::vector<std::string> texts = HardTexts();
  const std::string corpus = testing::TokenizerCorpusDir();
  if (!corpus.empty()) {
    testing::Docs real = testing::ReadDocs(corpus + "/real.docs");
    for (size_t i = 3; i < real.size(); i += 25) texts.push_back(real[i]);
  }
  std::string error;
  auto library = testing::ReferenceIds(file, texts, false, &error);
  ASSERT_TRUE(library.has_value()) << error;
  ASSERT_EQ(library->size(), texts.size());
  for (int pass = 0; pass < 2; ++pass) {  // the second with the words cached
    for (size_t i = 0; i < texts.size(); ++i) {
      std::vector<uint32_t> ids = fast->Encode(texts[i]);
      ASSERT_EQ(ids, general->Encode(texts[i])) << "text " << i << ": \"" << texts[i] << "\"";
      ASSERT_EQ(ids, (*library)[i]) << "text " << i << ": \"" << texts[i] << "\"";
    }
  }
}

}  // namespace
}  // namespace reel::llm
