// reel tokenize --tokenizer FILE [--ids | --count | --tokens] [--add-special-tokens] [TEXTFILE]
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "jobs/cli/commands.h"
#include "llm/tokenizer/tokenizer.h"

namespace reel::cli {

void AddTokenizeCommand(CLI::App& app, int& exit_code) {
  struct Options {
    std::string tokenizer;
    std::string text_file;
    bool ids = false;
    bool count = false;
    bool tokens = false;
    bool add_special_tokens = false;
    bool describe = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize",
      "Tokenize text with a Hugging Face tokenizer.json (byte-level and other BPE models), giving "
      "the ids the Hugging Face tokenizers library gives");
  cmd->add_option("--tokenizer", options->tokenizer, "The tokenizer.json file")->required();
  cmd->add_option("TEXTFILE", options->text_file,
                  "Text to tokenize (UTF-8; invalid bytes count as U+FFFD); standard input when "
                  "absent");
  auto* ids = cmd->add_flag("--ids", options->ids,
                            "Print the token ids on one line, separated by spaces (the default)");
  auto* count = cmd->add_flag("--count", options->count, "Print the number of tokens");
  auto* tokens = cmd->add_flag(
      "--tokens", options->tokens,
      "Print one token per line as a JSON string of its vocabulary form (e.g. \"\\u0120world\")");
  ids->excludes(count)->excludes(tokens);
  count->excludes(tokens);
  cmd->add_flag("--add-special-tokens", options->add_special_tokens,
                "Add the tokens of the file's post-processor (e.g. a BOS token), as "
                "encode(text, add_special_tokens=True) does; off by default");
  cmd->add_flag("--describe", options->describe,
                "Print how each component of the file is handled, then exit");
  cmd->callback([options, &exit_code] {
    Result<llm::Tokenizer> tokenizer = llm::Tokenizer::Load(options->tokenizer);
    if (!tokenizer.ok()) {
      std::fprintf(stderr, "reel tokenize: %s\n", tokenizer.status().message().c_str());
      exit_code = kExitFailed;
      return;
    }
    if (options->describe) {
      std::printf("%s\n", tokenizer->Description().c_str());
      return;
    }
    std::string text;
    if (options->text_file.empty() || options->text_file == "-") {
      std::ios::sync_with_stdio(false);
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      Result<std::string> read = ReadFileToString(options->text_file);
      if (!read.ok()) {
        std::fprintf(stderr, "reel tokenize: %s: %s\n", options->text_file.c_str(),
                     read.status().message().c_str());
        exit_code = kExitFailed;
        return;
      }
      text = std::move(read).value();
    }
    std::vector<uint32_t> result = tokenizer->Encode(text, options->add_special_tokens);
    std::string out;
    if (options->count) {
      out = std::to_string(result.size()) + "\n";
    } else if (options->tokens) {
      for (uint32_t id : result) {
        std::optional<std::string> token = tokenizer->IdToToken(id);
        out += nlohmann::json(token.value_or(""))
                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        out += "\n";
      }
    } else {
      for (size_t i = 0; i < result.size(); ++i) {
        if (i > 0) out += ' ';
        out += std::to_string(result[i]);
      }
      out += "\n";
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  });
}

}  // namespace reel::cli
