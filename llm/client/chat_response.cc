#include "llm/client/chat_response.h"

#include <nlohmann/json.hpp>

#include "llm/client/server_error.h"
#include "llm/client/utf8_text.h"

namespace reel::llm {
namespace {

using nlohmann::json;

constexpr size_t kMaxEventBytes = size_t{16} << 20;

std::string Preview(std::string_view text) {
  std::string out = SanitizedUtf8(text.substr(0, 120));
  for (char& c : out) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  if (text.size() > 120) out += "...";
  return out;
}

std::optional<int64_t> IntField(const json& obj, const char* name) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(name);
  if (it == obj.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_float()) return static_cast<int64_t>(it->get<double>());
  return std::nullopt;
}

std::string StringField(const json& obj, const char* name) {
  if (!obj.is_object()) return "";
  auto it = obj.find(name);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// Text of a `content` value: a string, or a list of parts whose text parts are joined.
std::string ContentText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  if (v.is_array()) {
    for (const auto& part : v) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        out += part["text"].get<std::string>();
      }
    }
  }
  return out;
}

// The reasoning in a message or delta, from the first of the dialect's fields that has any.
std::string ReasoningText(const json& msg, const Dialect& dialect) {
  if (!msg.is_object()) return "";
  for (const std::string& field : dialect.reasoning_fields) {
    auto it = msg.find(field);
    if (it == msg.end()) continue;
    if (it->is_string() && !it->get_ref<const std::string&>().empty())
      return it->get<std::string>();
    if (it->is_array()) {  // reasoning_details: [{"type": "reasoning.text", "text": ...}]
      std::string out;
      for (const auto& d : *it) {
        if (!d.is_object()) continue;
        for (const char* key : {"text", "summary"}) {
          if (d.contains(key) && d[key].is_string()) {
            out += d[key].get<std::string>();
            break;
          }
        }
      }
      if (!out.empty()) return out;
    }
  }
  return "";
}

void ReadUsage(const json& usage, ChatAnswer* a) {
  if (!usage.is_object()) return;
  if (auto v = IntField(usage, "prompt_tokens")) a->prompt_tokens = v;
  if (auto v = IntField(usage, "completion_tokens")) a->completion_tokens = v;
  if (auto it = usage.find("prompt_tokens_details"); it != usage.end()) {
    if (auto v = IntField(*it, "cached_tokens")) a->cached_tokens = v;
  }
  if (auto it = usage.find("completion_tokens_details"); it != usage.end()) {
    if (auto v = IntField(*it, "reasoning_tokens")) a->reasoning_tokens = v;
  }
  if (!a->reasoning_tokens) {
    if (auto v = IntField(usage, "reasoning_tokens"); v && *v > 0) a->reasoning_tokens = v;
  }
}

// An error object where an answer should be: {"error": ...}, or MiniMax's base_resp.
std::optional<std::string> EmbeddedError(const json& doc, std::string_view text) {
  if (!doc.is_object()) return std::nullopt;
  if (auto it = doc.find("error"); it != doc.end() && !it->is_null()) {
    return ParseServerError(0, text).message;
  }
  if (StringField(doc, "object") == "error") return ParseServerError(0, text).message;
  if (auto it = doc.find("base_resp"); it != doc.end() && it->is_object()) {
    auto code = IntField(*it, "status_code");
    if (code && *code != 0) {
      std::string msg = StringField(*it, "status_msg");
      return "error " + std::to_string(*code) + (msg.empty() ? "" : ": " + msg);
    }
  }
  return std::nullopt;
}

std::string_view TrimLeadingSpace(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\n' || s.front() == '\r' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  return s;
}

std::string_view TrimSpace(std::string_view s) {
  s = TrimLeadingSpace(s);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

const char* AnswerProblemName(AnswerProblem problem) {
  switch (problem) {
    case AnswerProblem::kNone:
      return "none";
    case AnswerProblem::kMalformed:
      return "malformed response";
    case AnswerProblem::kEmptyChoices:
      return "empty choices";
    case AnswerProblem::kServerError:
      return "server error";
    case AnswerProblem::kIncomplete:
      return "incomplete stream";
  }
  return "malformed response";
}

void SplitInlineReasoning(const Dialect& dialect, ChatAnswer* a) {
  if (!a->reasoning.empty()) return;
  for (const std::string& end : dialect.reasoning_end_markers) {
    const size_t pos = a->content.find(end);
    if (pos == std::string::npos) continue;
    std::string_view before = std::string_view(a->content).substr(0, pos);
    before = TrimLeadingSpace(before);
    for (const std::string& start : dialect.reasoning_start_markers) {
      if (before.substr(0, start.size()) == start) {
        before.remove_prefix(start.size());
        break;
      }
    }
    std::string reasoning(TrimSpace(before));
    std::string content(TrimLeadingSpace(std::string_view(a->content).substr(pos + end.size())));
    a->reasoning = std::move(reasoning);
    a->content = std::move(content);
    return;
  }
}

ParsedAnswer ParseChatCompletion(std::string_view body, const Dialect& dialect) {
  ParsedAnswer out;
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    out.problem = AnswerProblem::kMalformed;
    out.problem_message =
        body.empty() ? "empty response body" : "response is not a JSON object: " + Preview(body);
    return out;
  }
  if (auto err = EmbeddedError(doc, body)) {
    out.problem = AnswerProblem::kServerError;
    out.problem_message = *err;
    return out;
  }
  ChatAnswer& a = out.answer;
  a.response_id = StringField(doc, "id");
  a.model = StringField(doc, "model");
  if (auto it = doc.find("usage"); it != doc.end()) ReadUsage(*it, &a);
  auto choices = doc.find("choices");
  if (choices == doc.end() || !choices->is_array() || choices->empty()) {
    out.problem = AnswerProblem::kEmptyChoices;
    out.problem_message = choices == doc.end() ? "the response has no choices"
                                               : "the response has an empty choice list";
    return out;
  }
  const json& choice = (*choices)[0];
  if (!choice.is_object()) {
    out.problem = AnswerProblem::kMalformed;
    out.problem_message = "choices[0] is not an object";
    return out;
  }
  const json* message = nullptr;
  if (auto m = choice.find("message"); m != choice.end() && m->is_object()) message = &*m;
  if (message == nullptr) {
    out.problem = AnswerProblem::kMalformed;
    out.problem_message = "choices[0] has no message";
    return out;
  }
  if (auto c = message->find("content"); c != message->end()) a.content = ContentText(*c);
  a.reasoning = ReasoningText(*message, dialect);
  a.finish_reason = StringField(choice, "finish_reason");
  SplitInlineReasoning(dialect, &a);
  return out;
}

struct ChatStreamParser::State {
  const Dialect* dialect = nullptr;
  Observer* observer = nullptr;
  ParsedAnswer parsed;
  bool failed = false;  // a problem was found; the rest is ignored
  bool done = false;    // "data: [DONE]" seen
  bool saw_choices = false;
  bool got_first_token = false;
  std::string line;  // the current, unfinished line
  std::string data;  // the current event's data lines
  bool has_data = false;
  bool after_cr = false;  // the last byte was '\r' (a following '\n' belongs to it)
  // Events, or one JSON completion (a server that ignored `stream`): decided by the first byte
  // that is not white space; the bytes before it wait in `body`.
  enum class Form { kUndecided, kEvents, kJson } form = Form::kUndecided;
  std::string body;  // kJson: the whole body; kUndecided: the white space so far

  void Fail(AnswerProblem problem, std::string message) {
    if (failed) return;
    failed = true;
    parsed.problem = problem;
    parsed.problem_message = std::move(message);
  }

  void Dispatch() {
    if (!has_data) return;
    has_data = false;
    std::string payload;
    payload.swap(data);
    if (!payload.empty() && payload.back() == '\n') payload.pop_back();
    OnEvent(payload);
  }

  void OnLine(std::string_view l) {
    if (l.empty()) {
      Dispatch();
      return;
    }
    if (l.front() == ':') return;  // a comment (keep-alive)
    const size_t colon = l.find(':');
    std::string_view field = l.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field != "data") return;  // event, id, retry: not used by chat streams
    if (data.size() + value.size() + 1 > kMaxEventBytes) {
      Fail(AnswerProblem::kMalformed, "a stream event is larger than 16 MiB");
      return;
    }
    data.append(value);
    data.push_back('\n');
    has_data = true;
  }

  void OnEvent(std::string_view payload) {
    if (failed) return;
    if (TrimSpace(payload) == "[DONE]") {
      done = true;
      return;
    }
    const json chunk = json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (chunk.is_discarded() || !chunk.is_object()) {
      Fail(AnswerProblem::kMalformed, "stream chunk is not a JSON object: " + Preview(payload));
      return;
    }
    if (auto err = EmbeddedError(chunk, payload)) {
      Fail(AnswerProblem::kServerError, *err);
      return;
    }
    ChatAnswer& a = parsed.answer;
    if (a.response_id.empty()) a.response_id = StringField(chunk, "id");
    if (a.model.empty()) a.model = StringField(chunk, "model");
    if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) ReadUsage(*u, &a);
    auto choices = chunk.find("choices");
    if (choices == chunk.end() || !choices->is_array()) return;
    for (const auto& choice : *choices) {
      if (!choice.is_object()) continue;
      if (choice.contains("index") && choice["index"].is_number_integer() &&
          choice["index"].get<int64_t>() != 0) {
        continue;  // we ask for one choice; ignore any other
      }
      saw_choices = true;
      if (auto d = choice.find("delta"); d != choice.end() && d->is_object()) {
        std::string reasoning = ReasoningText(*d, *dialect);
        if (!reasoning.empty()) {
          got_first_token = true;
          a.reasoning += reasoning;
          if (observer) observer->OnReasoning(reasoning);
        }
        if (auto c = d->find("content"); c != d->end()) {
          std::string text = ContentText(*c);
          if (!text.empty()) {
            got_first_token = true;
            a.content += text;
            if (observer) observer->OnContent(text);
          }
        }
      }
      std::string finish = StringField(choice, "finish_reason");
      if (!finish.empty()) a.finish_reason = finish;
    }
  }
};

ChatStreamParser::ChatStreamParser(const Dialect& dialect, Observer* observer)
    : state_(std::make_unique<State>()) {
  state_->dialect = &dialect;
  state_->observer = observer;
}

ChatStreamParser::~ChatStreamParser() = default;

bool ChatStreamParser::got_first_token() const { return state_->got_first_token; }

bool ChatStreamParser::Feed(std::string_view bytes) {
  State& s = *state_;
  if (s.form == State::Form::kUndecided) {
    const size_t first = bytes.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
      s.body.append(bytes);
      return true;
    }
    if (bytes[first] == '{') {
      s.form = State::Form::kJson;
    } else {
      s.form = State::Form::kEvents;
      std::string before;
      before.swap(s.body);
      if (!before.empty() && !Feed(before)) return false;
    }
  }
  if (s.form == State::Form::kJson) {
    s.body.append(bytes);
    return true;
  }
  for (char c : bytes) {
    if (s.failed) return false;
    if (c == '\n') {
      if (s.after_cr) {
        s.after_cr = false;  // the second half of "\r\n"
        continue;
      }
      s.OnLine(s.line);
      s.line.clear();
    } else if (c == '\r') {
      s.after_cr = true;
      s.OnLine(s.line);
      s.line.clear();
    } else {
      s.after_cr = false;
      if (s.line.size() >= kMaxEventBytes) {
        s.Fail(AnswerProblem::kMalformed, "a stream line is longer than 16 MiB");
        return false;
      }
      s.line.push_back(c);
    }
  }
  return !s.failed;
}

ParsedAnswer ChatStreamParser::Finish() {
  State& s = *state_;
  if (s.form == State::Form::kJson) {
    ParsedAnswer out = ParseChatCompletion(s.body, *s.dialect);
    if (out.ok()) {
      const ChatAnswer& a = out.answer;
      s.got_first_token = !a.reasoning.empty() || !a.content.empty();
      if (s.observer != nullptr && !a.reasoning.empty()) s.observer->OnReasoning(a.reasoning);
      if (s.observer != nullptr && !a.content.empty()) s.observer->OnContent(a.content);
    }
    return out;
  }
  // An event not followed by a blank line is complete enough when the stream ends here.
  if (!s.failed && !s.line.empty()) {
    s.OnLine(s.line);
    s.line.clear();
  }
  if (!s.failed) s.Dispatch();
  ParsedAnswer out = std::move(s.parsed);
  if (out.problem != AnswerProblem::kNone) return out;
  if (!s.saw_choices) {
    out.problem = s.done ? AnswerProblem::kEmptyChoices : AnswerProblem::kIncomplete;
    out.problem_message = s.done ? "the stream had no choices" : "the stream ended without data";
    return out;
  }
  if (!s.done && out.answer.finish_reason.empty()) {
    out.problem = AnswerProblem::kIncomplete;
    out.problem_message = "the stream ended before its last chunk";
    return out;
  }
  SplitInlineReasoning(*s.dialect, &out.answer);
  return out;
}

}  // namespace reel::llm
