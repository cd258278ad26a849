// Reel's tokenizer against the Hugging Face tokenizers library without the library: golden files
// the library wrote (tests/llm/golden/, scripts/make-tokenizer-goldens), so parity is checked
// offline too. Per real tokenizer file, cut down to what a fixed corpus needs: the ids of every
// document (with and without special tokens) and their decoding. NFC and NFKC of every code point
// either form changes, and of composed sequences; every other code point unchanged.
// tokenizer_parity_itest checks the same against the library itself on far more text (when the
// npm reference is there), and CI checks the golden files still match the library.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "llm/tokenizer/tokenizer.h"
#include "llm/tokenizer/unicode.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm {
namespace {

using nlohmann::json;

const std::string kGolden = std::string(REEL_SOURCE_DIR) + "/tests/llm/golden/";

std::string ReadGolden(const std::string& name) {
  std::ifstream in(kGolden + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Ids(const std::vector<uint32_t>& ids) {
  std::string out;
  for (uint32_t id : ids) out += std::to_string(id) + " ";
  return out;
}

class TokenizerGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerGoldenTest, IdsAndDecodingAreTheLibrarys) {
  const std::string name = GetParam();
  Result<Tokenizer> tok = Tokenizer::Load(kGolden + name + ".tokenizer.json");
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  const json docs = json::parse(ReadGolden("corpus.json"))["documents"];
  const json golden = json::parse(ReadGolden(name + ".ids.json"));
  ASSERT_EQ(golden["ids"].size(), docs.size());
  ASSERT_EQ(golden["ids_with_special_tokens"].size(), docs.size());
  ASSERT_EQ(golden["decoded"].size(), docs.size());
  size_t tokens = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string text = docs[i].get<std::string>();
    const auto ids = golden["ids"][i].get<std::vector<uint32_t>>();
    const auto special = golden["ids_with_special_tokens"][i].get<std::vector<uint32_t>>();
    tokens += ids.size();
    EXPECT_EQ(Ids(tok->Encode(text)), Ids(ids)) << name << " document " << i << ": " << text;
    EXPECT_EQ(Ids(tok->Encode(text, /*add_special_tokens=*/true)), Ids(special))
        << name << " document " << i << " with special tokens";
    EXPECT_EQ(tok->Decode(ids), golden["decoded"][i].get<std::string>())
        << name << " document " << i;
  }
  EXPECT_GT(tokens, 500u) << "the corpus must give the tokenizer something to do";
}

INSTANTIATE_TEST_SUITE_P(Files, TokenizerGoldenTest,
                         ::testing::Values("gpt2", "llama3", "qwen3", "deepseek_v3", "gemma3",
                                           "gpt4o", "gptoss", "mistral_nemo"));

std::string FromHex(const std::string& field) {
  std::string out;
  std::istringstream in(field);
  for (std::string cp; in >> cp;) internal::AppendUtf8(out, std::stoul(cp, nullptr, 16));
  return out;
}

TEST(NormalizationGoldenTest, NfcAndNfkcAreTheLibrarys) {
  std::istringstream lines(ReadGolden("normalization.txt"));
  std::vector<bool> listed(0x110000, false);
  int checked = 0, failures = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t a = line.find(" ; "), b = line.find(" ; ", a + 3);
    ASSERT_NE(b, std::string::npos) << line;
    const std::string input = FromHex(line.substr(0, a));
    const std::string nfc_field = line.substr(a + 3, b - a - 3);
    const std::string nfkc_field = line.substr(b + 3);
    const std::string nfc = nfc_field == "=" ? input : FromHex(nfc_field);
    const std::string nfkc = nfkc_field == "=" ? input : FromHex(nfkc_field);
    if (line.find(' ') == a) listed[std::stoul(line.substr(0, a), nullptr, 16)] = true;
    const bool same = internal::Normalize(input, internal::NormalizationForm::kNfc) == nfc &&
                      internal::Normalize(input, internal::NormalizationForm::kNfkc) == nfkc;
    if (!same && failures++ < 10) ADD_FAILURE() << "differs from the library: " << line;
    ++checked;
  }
  EXPECT_GT(checked, 5000);
  // Every code point not listed alone: unchanged by both forms.
  for (uint32_t cp = 1; cp < 0x110000; ++cp) {
    if (listed[cp] || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
    std::string c;
    internal::AppendUtf8(c, cp);
    if (internal::Normalize(c, internal::NormalizationForm::kNfc) != c ||
        internal::Normalize(c, internal::NormalizationForm::kNfkc) != c) {
      if (failures++ < 10) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "%04X", cp);
        ADD_FAILURE() << "U+" << hex << " is changed; the library leaves it";
      }
    }
  }
}

}  // namespace
}  // namespace reel::llm
