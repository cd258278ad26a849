#include "llm/client/server_error.h"

#include "llm/client/utf8_text.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace reel::llm {
namespace {

using nlohmann::json;

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// `text` cut to at most `max` bytes without splitting a UTF-8 sequence.
std::string CutUtf8(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + "...";
}

std::string ErrorScalarText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) return std::to_string(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return "";
}

// The integer right after `anchor` (first occurrence at or after `from`), skipping spaces and an
// opening parenthesis; thousands separators are allowed ("32,768").
std::optional<int64_t> NumberAfter(const std::string& lower, std::string_view anchor,
                                   size_t from = 0) {
  size_t pos = lower.find(anchor, from);
  if (pos == std::string::npos) return std::nullopt;
  pos += anchor.size();
  while (pos < lower.size() && (lower[pos] == ' ' || lower[pos] == '(')) ++pos;
  int64_t value = 0;
  int digits = 0;
  while (pos < lower.size()) {
    const char c = lower[pos];
    if (c >= '0' && c <= '9') {
      if (digits >= 18) return std::nullopt;
      value = value * 10 + (c - '0');
      ++digits;
    } else if (c == ',' && digits > 0 && pos + 1 < lower.size() && lower[pos + 1] >= '0' &&
               lower[pos + 1] <= '9') {
      // a thousands separator
    } else {
      break;
    }
    ++pos;
  }
  if (digits == 0) return std::nullopt;
  return value;
}

enum class Field { kPrompt, kOutput, kLimit };

struct Wording {
  std::vector<std::string_view> triggers;  // all must occur
  std::vector<std::pair<Field, std::string_view>> numbers;
};

// Most specific first: several wordings share phrases.
const std::vector<Wording>& Wordings() {
  static const auto* const kWordings = new std::vector<Wording>{
      // vLLM (current)
      {{"you passed ", "context length is only"},
       {{Field::kPrompt, "you passed "},
        {Field::kOutput, "input tokens and requested "},
        {Field::kLimit, "context length is only "}}},
      // SGLang, prompt plus output
      {{"requested token count exceeds"},
       {{Field::kLimit, "maximum context length of "},
        {Field::kPrompt, "tokens: "},
        {Field::kOutput, "tokens from the input messages and "}}},
      // SGLang, prompt alone
      {{"the input (", "longer than the model's context length"},
       {{Field::kPrompt, "the input ("}, {Field::kLimit, "context length ("}}},
      // vLLM, output too large
      {{"is too large:", "maximum context length is ", "your request has "},
       {{Field::kOutput, "is too large: "},
        {Field::kLimit, "maximum context length is "},
        {Field::kPrompt, "your request has "}}},
      // vLLM (older), prompt plus output
      {{"maximum context length is ", "however, you requested ", " in the messages"},
       {{Field::kLimit, "maximum context length is "},
        {Field::kPrompt, "tokens ("},
        {Field::kOutput, "in the messages, "}}},
      // vLLM (older), prompt alone
      {{"maximum context length is ", "your request has "},
       {{Field::kLimit, "maximum context length is "}, {Field::kPrompt, "your request has "}}},
      // vLLM engine check
      {{"prompt (length ", "longer than the maximum model length"},
       {{Field::kPrompt, "prompt (length "}, {Field::kLimit, "maximum model length of "}}},
      {{"input length (", "exceeds model's maximum context length"},
       {{Field::kPrompt, "input length ("}, {Field::kLimit, "maximum context length ("}}},
      {{"the prompt is ", "exceeds the model's maximum context length of "},
       {{Field::kPrompt, "the prompt is "}, {Field::kLimit, "maximum context length of "}}},
      // OpenAI, OpenRouter and others: a window, maybe a count.
      {{"maximum context length is "},
       {{Field::kLimit, "maximum context length is "}, {Field::kPrompt, "resulted in "}}},
      {{"context_length_exceeded"}, {}},
      {{"longer than the maximum model length"}, {{Field::kLimit, "maximum model length of "}}},
      {{"longer than the model's context length"}, {}},
      {{"exceeds the model's maximum context length"}, {}},
      {{"context window exceeds limit"}, {}},  // MiniMax's API
      {{"prompt is too long"}, {}},
  };
  return *kWordings;
}

}  // namespace

ServerError ParseServerError(int http_status, std::string_view body, size_t max_message_chars) {
  ServerError out;
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  const json* err = nullptr;
  if (doc.is_object()) {
    auto it = doc.find("error");
    if (it != doc.end() && it->is_object()) {
      err = &*it;
    } else if (it != doc.end() && it->is_string()) {
      out.message = it->get<std::string>();
    } else if (doc.contains("message")) {
      err = &doc;  // the flat shape: {"object": "error", "message", ...}
    } else if (doc.contains("detail")) {
      // FastAPI's own validation errors: {"detail": "..."} or a list of problems.
      const json& d = doc["detail"];
      out.message = d.is_string() ? d.get<std::string>() : std::string(body);
    }
  }
  if (err != nullptr) {
    if (auto m = err->find("message"); m != err->end()) {
      out.message = m->is_string() ? m->get<std::string>() : std::string(body);
    }
    if (auto t = err->find("type"); t != err->end()) out.type = ErrorScalarText(*t);
    if (auto c = err->find("code"); c != err->end()) out.code = ErrorScalarText(*c);
  }
  if (out.message.empty()) {
    std::string_view text = body;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
      text.remove_suffix(1);
    }
    out.message = text.empty() ? "HTTP " + std::to_string(http_status) : std::string(text);
  }
  out.message = CutUtf8(SanitizedUtf8(out.message), max_message_chars);
  out.type = SanitizedUtf8(out.type);
  out.code = SanitizedUtf8(out.code);
  return out;
}

std::optional<TooLongPrompt> RecognizeTooLongPrompt(int http_status, const ServerError& error) {
  if (http_status >= 200 && http_status < 300) return std::nullopt;
  const std::string lower = AsciiLower(error.message) + " " + AsciiLower(error.code);
  for (const Wording& w : Wordings()) {
    bool all = true;
    for (std::string_view t : w.triggers) all = all && lower.find(t) != std::string::npos;
    if (!all) continue;
    TooLongPrompt out;
    for (const auto& [field, anchor] : w.numbers) {
      std::optional<int64_t> n = NumberAfter(lower, anchor);
      if (field == Field::kPrompt) out.prompt_tokens = n;
      if (field == Field::kOutput) out.requested_output = n;
      if (field == Field::kLimit) out.context_length = n;
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace reel::llm
