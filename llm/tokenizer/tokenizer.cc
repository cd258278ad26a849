#include "llm/tokenizer/tokenizer.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "llm/tokenizer/added_vocabulary.h"
#include "llm/tokenizer/bpe_model.h"
#include "llm/tokenizer/char_words.h"
#include "llm/tokenizer/decoder.h"
#include "llm/tokenizer/normalizer.h"
#include "llm/tokenizer/post_processor.h"
#include "llm/tokenizer/pre_tokenizer.h"
#include "llm/tokenizer/split_pattern.h"
#include "llm/tokenizer/tokenizer_json.h"
#include "llm/tokenizer/utf8.h"

namespace reel::llm {

using internal::AddedPiece;
using nlohmann::json;

struct Tokenizer::Impl {
  std::unique_ptr<internal::Normalizer> normalizer;
  std::unique_ptr<internal::PreTokenizer> pre_tokenizer;
  std::unique_ptr<internal::BpeModel> model;
  std::unique_ptr<internal::AddedVocabulary> added;
  std::unique_ptr<internal::PostProcessor> post_processor;
  std::unique_ptr<internal::Decoder> decoder;
  std::string description;
  internal::FusedSplit fused;  // the pre-tokenizer as one pattern, when it is one
  bool has_fused = false;
  // SentencePiece-style: the normalizer a character substitution, the pre-tokenizer leaving
  // text whole, no normalized added tokens; the model cuts raw text into words
  // (tokenizer/char_words.h).
  bool char_words = false;

  void EncodeText(std::string_view text, std::vector<uint32_t>& ids) const;
  void EncodeNormalized(std::string_view text, std::vector<uint32_t>& ids) const;
  void ModelPieces(std::string_view text, std::vector<uint32_t>& ids) const;
};

namespace {

// Per-thread scratch space, reused between calls.
struct Scratch {
  std::vector<AddedPiece> raw_pieces;
  std::vector<AddedPiece> normalized_pieces;
  std::string normalized;
  internal::SplitList splits;
};
Scratch& GetScratch(int depth) {
  static thread_local Scratch scratch[2];
  return scratch[depth];
}

void Describe(const json& config, std::string& out) {
  if (config.is_null()) {
    out += "none";
    return;
  }
  if (!config.is_object() || !config.contains("type")) {
    out += "?";
    return;
  }
  std::string type = config["type"].is_string() ? config["type"].get<std::string>() : "?";
  out += type;
  for (const char* list : {"normalizers", "pretokenizers", "decoders", "processors"}) {
    if (config.contains(list) && config[list].is_array()) {
      out += "[";
      bool first = true;
      for (const json& part : config[list]) {
        if (!first) out += ", ";
        first = false;
        Describe(part, out);
      }
      out += "]";
    }
  }
  if (type == "Split" && config.contains("pattern") && config["pattern"].is_object()) {
    const json& p = config["pattern"];
    if (p.contains("Regex") && p["Regex"].is_string()) {
      auto fast = internal::MakeFastPattern(p["Regex"].get<std::string>());
      out += std::string("(regex, ") +
             (fast ? std::string(fast->Name()) + " hand-written" : "general engine") + ")";
    } else {
      out += "(string)";
    }
  }
  if (type == "ByteLevel" && config.contains("use_regex") && config["use_regex"].is_boolean()) {
    out += config["use_regex"].get<bool>() ? "(gpt2 regex)" : "(no regex)";
  }
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::Load(const std::string& path) {
  Result<std::string> text = ReadFileToString(path, 1ull << 30);
  if (!text.ok()) return text.status().WithPrefix(path);
  return FromJson(*text, path);
}

Result<Tokenizer> Tokenizer::FromJson(std::string_view text, const std::string& name) {
  Result<internal::ParsedTokenizerJson> parsed = internal::ParseTokenizerJson(text);
  if (!parsed.ok()) return parsed.status().WithPrefix(name);
  const json& root = parsed->root;
  if (!root.is_object()) return CorruptData(name + ": not a tokenizer.json (not an object)");
  auto fail = [&](const Status& s) { return s.WithPrefix(name); };
  if (auto v = root.find("version"); v != root.end()) {
    if (!v->is_string() || v->get<std::string>() != "1.0") {
      return fail(Unsupported("tokenizer.json version is not \"1.0\""));
    }
  }
  auto impl = std::make_unique<Impl>();

  auto model = root.find("model");
  if (model == root.end() || !model->is_object()) {
    return fail(Unsupported("no \"model\" object"));
  }
  std::string model_type;
  if (auto t = model->find("type"); t != model->end() && t->is_string()) {
    model_type = t->get<std::string>();
  } else if (model->contains("merges")) {
    model_type = "BPE";
  }
  if (model_type != "BPE") {
    return fail(Unsupported("model " +
                            (model_type.empty() ? std::string("without a type") : model_type) +
                            " is not supported (only BPE models)"));
  }
  auto bpe = internal::BpeModel::Make(*model, parsed->model_tables);
  if (!bpe.ok()) return fail(bpe.status());
  impl->model = std::move(bpe).value();

  if (auto n = root.find("normalizer"); n != root.end() && !n->is_null()) {
    auto normalizer = internal::MakeNormalizer(*n);
    if (!normalizer.ok()) return fail(normalizer.status());
    impl->normalizer = std::move(normalizer).value();
  }
  if (auto p = root.find("pre_tokenizer"); p != root.end() && !p->is_null()) {
    auto pre = internal::MakePreTokenizer(*p);
    if (!pre.ok()) return fail(pre.status());
    impl->pre_tokenizer = std::move(pre).value();
    impl->has_fused = impl->pre_tokenizer->Fused(impl->fused);
  }
  if (auto p = root.find("post_processor"); p != root.end() && !p->is_null()) {
    auto post = internal::MakePostProcessor(*p);
    if (!post.ok()) return fail(post.status());
    impl->post_processor = std::move(post).value();
  }
  if (auto d = root.find("decoder"); d != root.end() && !d->is_null()) {
    auto decoder = internal::MakeDecoder(*d);
    if (!decoder.ok()) return fail(decoder.status());
    impl->decoder = std::move(decoder).value();
  }
  json no_tokens;
  auto added_list = root.find("added_tokens");
  auto added = internal::AddedVocabulary::Make(added_list == root.end() ? no_tokens : *added_list,
                                               *impl->model, impl->normalizer.get());
  if (!added.ok()) return fail(added.status());
  impl->added = std::move(added).value();

  internal::CharSubstitution substitution;
  if (impl->normalizer != nullptr && impl->normalizer->Substitution(substitution) &&
      (impl->pre_tokenizer == nullptr || impl->pre_tokenizer->KeepsWhole(substitution.from)) &&
      !impl->added->HasTokens(true)) {
    impl->char_words = impl->model->EnableCharWords(substitution);
  }

  std::string& d = impl->description;
  d += "normalizer: ";
  Describe(root.value("normalizer", json()), d);
  d += "\npre_tokenizer: ";
  Describe(root.value("pre_tokenizer", json()), d);
  d += "\nmodel: BPE, " + std::to_string(impl->model->VocabSize()) + " tokens, " +
       std::to_string(impl->model->MergeCount()) + " merges";
  d += "\nadded_tokens: " + std::to_string(impl->added->size());
  d += "\npost_processor: ";
  Describe(root.value("post_processor", json()), d);
  d += "\ndecoder: ";
  Describe(root.value("decoder", json()), d);
  if (impl->char_words) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", substitution.to);
    d += std::string("\nfast path: SentencePiece words, cut before ") + code + " except after " +
         std::to_string(impl->model->char_words()->Joiners().size()) + " characters";
  }
  return Tokenizer(std::move(impl));
}

// Raw text -> added tokens split out -> each other piece normalized -> normalized added tokens
// split out -> pre-tokenized -> model.
void Tokenizer::Impl::EncodeText(std::string_view text, std::vector<uint32_t>& ids) const {
  if (text.empty()) return;
  if (char_words) {
    // (The same pieces, normalized and tokenized whole by the model.)
    Scratch& scratch = GetScratch(0);
    std::vector<AddedPiece>& pieces = scratch.raw_pieces;
    pieces.clear();
    if (added->HasTokens(false)) {
      added->Split(text, false, pieces);
    } else {
      pieces.push_back({0, static_cast<uint32_t>(text.size()), -1});
    }
    model->TokenizeCharWords(text, pieces, ids);
    return;
  }
  if (!added->HasTokens(false)) {
    EncodeNormalized(text, ids);
    return;
  }
  Scratch& scratch = GetScratch(0);
  std::vector<AddedPiece>& pieces = scratch.raw_pieces;
  pieces.clear();
  added->Split(text, false, pieces);
  for (const AddedPiece& p : pieces) {
    if (p.end == p.start) continue;
    if (p.id >= 0) {
      ids.push_back(static_cast<uint32_t>(p.id));
    } else {
      EncodeNormalized(text.substr(p.start, p.end - p.start), ids);
    }
  }
}

void Tokenizer::Impl::EncodeNormalized(std::string_view raw, std::vector<uint32_t>& ids) const {
  Scratch& scratch = GetScratch(1);
  std::string_view text = raw;
  if (normalizer != nullptr && normalizer->Normalize(raw, scratch.normalized)) {
    text = scratch.normalized;
  }
  if (text.empty()) return;
  if (!added->HasTokens(true)) {
    ModelPieces(text, ids);
    return;
  }
  std::vector<AddedPiece>& pieces = scratch.normalized_pieces;
  pieces.clear();
  added->Split(text, true, pieces);
  for (const AddedPiece& p : pieces) {  // (ModelPieces uses other scratch space)
    if (p.end == p.start) continue;
    if (p.id >= 0) {
      ids.push_back(static_cast<uint32_t>(p.id));
    } else {
      ModelPieces(text.substr(p.start, p.end - p.start), ids);
    }
  }
}

void Tokenizer::Impl::ModelPieces(std::string_view text, std::vector<uint32_t>& ids) const {
  if (pre_tokenizer == nullptr) {
    model->Tokenize(text, false, ids);
    return;
  }
  if (has_fused) {
    static thread_local std::vector<internal::PatternMatch> matches;
    static thread_local std::vector<internal::PieceSpan> pieces;
    matches.clear();
    fused.pattern->FindMatches(text, matches);
    pieces.clear();
    for (const internal::PatternMatch& m : matches) {
      if (m.is_match ? fused.keep_matches : fused.keep_gaps) pieces.push_back({m.start, m.end});
    }
    model->TokenizePieces(text, pieces, fused.byte_level, ids);
    return;
  }
  internal::SplitList& list = GetScratch(1).splits;
  list.Reset();
  list.buffer.assign(text);
  list.splits.push_back({0, static_cast<uint32_t>(text.size()), false});
  pre_tokenizer->Apply(list);
  for (const internal::Split& s : list.splits) model->Tokenize(list.Text(s), s.byte_level, ids);
}

void Tokenizer::EncodeAppend(std::string_view text, std::vector<uint32_t>& ids) const {
  size_t valid = internal::ValidUtf8Prefix(text);
  if (valid == text.size()) {
    impl_->EncodeText(text, ids);
  } else {
    std::string repaired = internal::ToValidUtf8(text);
    impl_->EncodeText(repaired, ids);
  }
}

std::vector<uint32_t> Tokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  std::vector<uint32_t> ids;
  // About one id per 3-4 bytes of text (no reallocation copies for most texts; pages not
  // written are not taken).
  ids.reserve(text.size() / 3 + 16);
  EncodeAppend(text, ids);
  if (add_special_tokens && impl_->post_processor != nullptr) impl_->post_processor->Process(ids);
  return ids;
}

size_t Tokenizer::Count(std::string_view text, bool add_special_tokens) const {
  return Encode(text, add_special_tokens).size();
}

std::string Tokenizer::Decode(std::span<const uint32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (uint32_t id : ids) {
    std::optional<std::string> token = IdToToken(id);
    if (!token) continue;
    if (skip_special_tokens && impl_->added->IsSpecial(*token)) continue;
    tokens.push_back(std::move(*token));
  }
  if (impl_->decoder == nullptr) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) out += ' ';
      out += tokens[i];
    }
    return out;
  }
  impl_->decoder->DecodeChain(tokens);
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

std::optional<std::string> Tokenizer::IdToToken(uint32_t id) const {
  if (const std::string* t = impl_->added->IdToToken(id)) return *t;
  if (auto t = impl_->model->IdToToken(id)) return std::string(*t);
  return std::nullopt;
}

std::optional<uint32_t> Tokenizer::TokenToId(std::string_view token) const {
  if (auto id = impl_->added->TokenToId(token)) return id;
  return impl_->model->TokenToId(token);
}

bool Tokenizer::IsSpecial(uint32_t id) const {
  const std::string* t = impl_->added->IdToToken(id);
  return t != nullptr && impl_->added->IsSpecial(*t);
}

size_t Tokenizer::VocabSize() const {
  size_t overlap = 0;
  for (const auto& t : impl_->added->tokens()) {
    if (impl_->model->TokenToId(t.content)) ++overlap;
  }
  return impl_->model->VocabSize() + impl_->added->size() - overlap;
}

size_t Tokenizer::AddedTokenCount() const { return impl_->added->size(); }

const std::string& Tokenizer::Description() const { return impl_->description; }

}  // namespace reel::llm
