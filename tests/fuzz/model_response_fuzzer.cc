// libFuzzer target: everything Reel reads from a model server. One input is read as a chat
// completion body (every dialect), as a server-sent-event stream fed in pieces whose sizes come
// from the input, as an error body (both shapes, too-long wordings), as a Batch output line, as a
// model list, and as a JSON schema plus an answer to check against it.
//
// Properties: nothing crashes, hangs or throws; every message Reel would record is valid UTF-8;
// a stream read in one piece and in many pieces gives the same answer; a "stream" that is one
// JSON document (a server that ignored `stream`) gives what the whole-body parser gives.
//
// Build and run (clang-14, ASan + UBSan), bounded, from the seed corpus:
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I. \
//     tests/fuzz/model_response_fuzzer.cc llm/client/*.cc base/status.cc -lcurl \
//     -o /tmp/model_response_fuzzer
//   cp -r tests/fuzz/corpus/model_response /tmp/corpus
//   /tmp/model_response_fuzzer -max_total_time=300 -max_len=16384 /tmp/corpus
// or configure with -DREEL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ (target model_response_fuzzer).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "llm/client/batch_lines.h"
#include "llm/client/chat_response.h"
#include "llm/client/dialect.h"
#include "llm/client/json_schema.h"
#include "llm/client/server_error.h"
#include "llm/client/utf8_text.h"

namespace {

using namespace reel::llm;

// Aborts on ill-formed UTF-8 (RFC 3629: no overlongs, surrogates, or code points past U+10FFFF).
void CheckUtf8(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    size_t len = c < 0x80                 ? 1
                 : c >= 0xC2 && c <= 0xDF ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    if (len == 0 || i + len > n) std::abort();
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char b = s[i + k];
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) std::abort();
    }
    i += len;
  }
}

ParsedAnswer Stream(const Dialect& d, std::string_view data, std::string_view steps) {
  ChatStreamParser parser(d);
  size_t i = 0, k = 0;
  while (i < data.size()) {
    size_t step =
        steps.empty() ? data.size() : 1 + static_cast<unsigned char>(steps[k++ % steps.size()]);
    parser.Feed(data.substr(i, step));
    i += step;
  }
  return parser.Finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string_view data(reinterpret_cast<const char*>(bytes), size);
  for (const Dialect* d : {&VllmDialect(), &SglangDialect(), &OpenAiDialect()}) {
    ParsedAnswer a = ParseChatCompletion(data, *d);
    CheckUtf8(a.problem_message);
    CheckUtf8(a.answer.content);
    CheckUtf8(a.answer.reasoning);
  }
  // The same stream whole and in pieces.
  const std::string_view steps = data.substr(0, std::min<size_t>(data.size(), 16));
  ParsedAnswer whole = Stream(VllmDialect(), data, "");
  ParsedAnswer pieces = Stream(VllmDialect(), data, steps);
  if (whole.problem != pieces.problem || whole.answer.content != pieces.answer.content ||
      whole.answer.reasoning != pieces.answer.reasoning ||
      whole.answer.finish_reason != pieces.answer.finish_reason) {
    std::abort();
  }
  CheckUtf8(whole.problem_message);
  const size_t first = data.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && data[first] == '{') {
    ParsedAnswer json = ParseChatCompletion(data, VllmDialect());
    if (json.problem != whole.problem || json.answer.content != whole.answer.content ||
        json.answer.reasoning != whole.answer.reasoning) {
      std::abort();
    }
  }

  for (int status : {400, 413, 500}) {
    ServerError e = ParseServerError(status, data);
    CheckUtf8(e.message);
    (void)RecognizeTooLongPrompt(status, e);
  }
  if (auto out = ParseBatchOutputLine(data); out.ok()) {
    ChatResult r = ChatResultFromBatchOutput(*out, VllmDialect(), "");
    CheckUtf8(r.error);
  }
  (void)ParseBatchInputLine(data);
  (void)DetectDialect(data);
  (void)ExtractJsonAnswer(data);

  // A schema and an answer, split at the first newline.
  const size_t nl = data.find('\n');
  if (nl != std::string_view::npos) {
    if (auto schema = JsonSchema::Parse(data.substr(0, nl)); schema.ok()) {
      (void)schema->Validate(data.substr(nl + 1));
    }
  }
  return 0;
}
