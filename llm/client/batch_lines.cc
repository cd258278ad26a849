#include "llm/client/batch_lines.h"

#include <nlohmann/json.hpp>

#include "llm/client/json_depth.h"
#include "llm/client/json_schema.h"
#include "llm/client/server_error.h"

namespace reel::llm {
namespace {

using nlohmann::json;

std::string Quoted(std::string_view text) { return json(std::string(text)).dump(); }

std::string ScalarText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  return "";
}

Result<json> ParseLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (JsonNestingDepth(line) > kMaxJsonDepth) {
    return CorruptData("the line is nested deeper than " + std::to_string(kMaxJsonDepth) +
                       " levels");
  }
  json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return CorruptData("the line is not JSON");
  if (!doc.is_object()) return CorruptData("the line is not a JSON object");
  return doc;
}

}  // namespace

std::unique_ptr<BodySource> BatchInputLine(std::string_view custom_id,
                                           std::shared_ptr<const BodySource> body,
                                           std::string_view url) {
  auto line = std::make_unique<ComposedBody>();
  line->AddText("{\"custom_id\":" + Quoted(custom_id) +
                ",\"method\":\"POST\",\"url\":" + Quoted(url) + ",\"body\":");
  line->AddSource(std::move(body));
  line->AddText("}\n");
  return line;
}

Status WriteBatchInputLine(std::string_view custom_id, std::shared_ptr<const BodySource> body,
                           std::ostream& out, std::string_view url) {
  std::unique_ptr<BodySource> line = BatchInputLine(custom_id, std::move(body), url);
  std::unique_ptr<BodyReader> reader = line->Open();
  char buffer[64 * 1024];
  while (true) {
    REEL_ASSIGN_OR_RETURN(size_t n, reader->Read(buffer, sizeof(buffer)));
    if (n == 0) break;
    out.write(buffer, static_cast<std::streamsize>(n));
    if (!out) return IoError("cannot write the batch line for '" + std::string(custom_id) + "'");
  }
  return Status::Ok();
}

Result<BatchInput> ParseBatchInputLine(std::string_view line) {
  REEL_ASSIGN_OR_RETURN(json doc, ParseLine(line));
  BatchInput in;
  auto text = [&](const char* key) -> std::string {
    auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : "";
  };
  in.custom_id = text("custom_id");
  in.method = text("method");
  in.url = text("url");
  if (in.custom_id.empty()) return CorruptData("no custom_id");
  if (in.url.empty()) return CorruptData("no url");
  auto body = doc.find("body");
  if (body == doc.end() || !body->is_object()) return CorruptData("no body object");
  in.body = body->dump();
  return in;
}

Result<BatchOutput> ParseBatchOutputLine(std::string_view line) {
  REEL_ASSIGN_OR_RETURN(json doc, ParseLine(line));
  BatchOutput out;
  auto custom = doc.find("custom_id");
  if (custom == doc.end() || !custom->is_string() || custom->get<std::string>().empty()) {
    return CorruptData("no custom_id");
  }
  out.custom_id = custom->get<std::string>();
  if (auto id = doc.find("id"); id != doc.end()) out.id = ScalarText(*id);
  if (auto r = doc.find("response"); r != doc.end() && !r->is_null()) {
    if (!r->is_object()) return CorruptData("response is not an object");
    out.has_response = true;
    if (auto s = r->find("status_code"); s != r->end() && s->is_number_integer()) {
      out.status_code = s->get<int>();
    }
    if (auto id = r->find("request_id"); id != r->end()) out.request_id = ScalarText(*id);
    if (auto b = r->find("body"); b != r->end() && !b->is_null()) out.body = b->dump();
  }
  if (auto e = doc.find("error"); e != doc.end() && !e->is_null()) {
    out.has_error = true;
    if (e->is_string()) {
      out.error_message = e->get<std::string>();
    } else if (e->is_object()) {
      const json* inner = &*e;
      if (auto nested = e->find("error"); nested != e->end() && nested->is_object()) {
        inner = &*nested;
      }
      if (auto m = inner->find("message"); m != inner->end()) out.error_message = ScalarText(*m);
      if (auto c = inner->find("code"); c != inner->end()) out.error_code = ScalarText(*c);
      if (out.error_message.empty()) out.error_message = e->dump();
    } else {
      out.error_message = e->dump();
    }
  }
  if (!out.has_response && !out.has_error) {
    return CorruptData("neither a response nor an error");
  }
  return out;
}

ChatResult ChatResultFromBatchOutput(const BatchOutput& output, const Dialect& dialect,
                                     const std::string& json_schema) {
  ChatResult result;
  result.attempts = 1;
  result.http_status = output.status_code;
  result.server_request_id = output.request_id;
  const bool ok_status = output.has_response && output.status_code >= 200 &&
                         output.status_code < 300 && !output.body.empty();
  if (ok_status && !output.has_error) {
    ParsedAnswer parsed = ParseChatCompletion(output.body, dialect);
    result.answer = parsed.answer;
    if (result.server_request_id.empty()) result.server_request_id = parsed.answer.response_id;
    switch (parsed.problem) {
      case AnswerProblem::kNone: {
        std::optional<JsonSchema> schema;
        if (!json_schema.empty()) {
          Result<JsonSchema> s = JsonSchema::Parse(json_schema);
          if (!s.ok()) {
            result.outcome = ChatOutcome::kBadRequest;
            result.error = s.status().message();
            return result;
          }
          schema = std::move(s).value();
        }
        FinishAnswer(parsed.answer, schema ? &*schema : nullptr, &result);
        return result;
      }
      case AnswerProblem::kEmptyChoices:
        result.outcome = ChatOutcome::kEmptyChoices;
        result.error = parsed.problem_message;
        return result;
      case AnswerProblem::kServerError:
        result.outcome = ChatOutcome::kServerError;
        result.error = "server error: " + parsed.problem_message;
        return result;
      case AnswerProblem::kMalformed:
      case AnswerProblem::kIncomplete:
        result.outcome = ChatOutcome::kMalformed;
        result.error = "malformed response: " + parsed.problem_message;
        return result;
    }
  }
  // A failure: the message from `error`, else from an error document in the body.
  ServerError se;
  if (!output.error_message.empty()) {
    se.message = output.error_message;
    se.code = output.error_code;
  } else {
    se = ParseServerError(output.status_code, output.body);
  }
  const int status = output.status_code != 0 ? output.status_code : 400;
  if (auto too_long = RecognizeTooLongPrompt(status, se)) {
    result.outcome = ChatOutcome::kTooLong;
    result.too_long = too_long;
    result.error = "prompt too long: " + se.message;
    return result;
  }
  result.outcome = output.status_code >= 500 || output.status_code == 0 ? ChatOutcome::kServerError
                                                                        : ChatOutcome::kRejected;
  result.error =
      (output.status_code ? "HTTP " + std::to_string(output.status_code) + ": " : "") + se.message;
  return result;
}

}  // namespace reel::llm
