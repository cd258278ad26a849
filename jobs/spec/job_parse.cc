// Parser's reading of the text (job_parser.h): decoding, YAML syntax errors with what
// yaml-cpp's messages leave out, one document, depth and size limits, and the diagnostics in
// file order.
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <tuple>

#include "jobs/spec/job_parser.h"

namespace reel::jobs::parser {
namespace {

// Counts the documents of a YAML stream and notes where the second one starts; builds nothing.
class DocumentCounter final : public YAML::EventHandler {
 public:
  int documents() const { return documents_; }
  const YAML::Mark& second_start() const { return second_start_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ == 2) second_start_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  int documents_ = 0;
  YAML::Mark second_start_;
};

}  // namespace

Result<JobSpec> Parser::TooBig(std::string_view prefix, const std::string& size) {
  ReportTooBig(prefix, size);
  return Finish();
}

Result<JobSpec> Parser::Run(std::string_view text) {
  if (text.size() > options_.max_file_bytes) {
    ReportTooBig(text, std::to_string(text.size()) + " bytes");
    return Finish();
  }
  // YAML is Unicode text. A job file saved in a legacy encoding is read like a subtitle file
  // (base/text_encoding.h; UTF-16 with a byte-order mark too) rather than passed on with bytes
  // no YAML scalar can write back (RenderResolvedJob must parse back to the same job).
  std::string decoded;
  if (!IsValidUtf8(text)) {
    Result<DecodedText> read = DecodeText(text);
    if (read.ok()) {
      if (read->info.basis != EncodingBasis::kByteOrderMark) {
        Warn(YAML::Mark::null_mark(),
             "the job file is " + read->info.Describe() +
                 "; save it as UTF-8 (to name a file whose name is not UTF-8, use a glob)");
      }
      decoded = std::move(read->text);
      text = decoded;
    }
  }
  text_ = text;
  YAML::Node root;
  std::optional<YAML::Mark> second_document;
  try {
    const std::string copy(text);
    root = YAML::Load(copy);
    // YAML::LoadAll never returns on some inputs (a lone ',': yaml-cpp issue #1040, fixed
    // upstream after 0.7): the documents are counted here, and only up to the second.
    std::istringstream stream(copy);
    YAML::Parser parser(stream);
    DocumentCounter counter;
    for (int n = 0; n < 2 && parser.HandleNextDocument(counter); ++n) {
    }
    if (counter.documents() > 1) second_document = counter.second_start();
  } catch (const YAML::DeepRecursion& e) {
    Error(e.mark, "nesting is deeper than " + std::to_string(options_.max_depth) + " levels");
    return Finish();
  } catch (const YAML::ParserException& e) {
    ReportSyntaxError(text, e.mark, e.msg);
    return Finish();
  } catch (const YAML::Exception& e) {
    Error(e.mark, std::string("YAML error: ") + e.what());
    return Finish();
  }
  if (!root.IsDefined() || root.IsNull()) {
    // yaml-cpp 0.7 reads some stray tokens (a lone ',') as an empty document: name them.
    if (std::optional<size_t> stray = FirstContent(text)) {
      TextPosition at = PositionOfOffset(text, *stray);
      errors_.push_back({at.line, at.column,
                         "YAML syntax error: unexpected '" + std::string(1, text[*stray]) +
                             "' (the job file holds no settings)"});
      return Finish();
    }
    Error(YAML::Mark(), "the job file is empty; it needs at least 'name' and 'inputs'");
    return Finish();
  }
  if (second_document) {
    Error(*second_document, "more than one YAML document ('---'); a job file holds one job");
  }
  try {
    Shape shape;
    if (!CheckShape(root, 0, &shape)) return Finish();
    text_bytes_ = shape.bytes;
    ReadJob(root);
  } catch (const YAML::Exception& e) {
    Error(e.mark, std::string("YAML error: ") + e.what());
  }
  return Finish();
}

void Parser::Error(const YAML::Mark& mark, std::string message) {
  errors_.push_back({mark.line + 1, mark.column + 1, std::move(message)});
}

void Parser::Warn(const YAML::Mark& mark, std::string message) {
  warnings_.push_back({mark.line + 1, mark.column + 1, std::move(message)});
}

std::string Parser::Format(const Diagnostic& d) const {
  if (d.line <= 0) return source_ + ": " + d.message;
  return source_ + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message;
}

Result<JobSpec> Parser::Finish() {
  auto by_position = [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  };
  std::stable_sort(errors_.begin(), errors_.end(), by_position);
  std::stable_sort(warnings_.begin(), warnings_.end(), by_position);
  if (!errors_.empty()) {
    std::string message;
    for (const Diagnostic& d : errors_) message += (message.empty() ? "" : "\n") + Format(d);
    return InvalidArgument(message);
  }
  for (const Diagnostic& d : warnings_) job_.warnings.push_back(Format(d));
  return std::move(job_);
}

std::optional<size_t> Parser::FirstContent(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find('\n', i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(i, end - i);
    size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#' && line[first] != '%' &&
        !(first == 0 && (line.starts_with("---") || line.starts_with("...")))) {
      return i + first;
    }
    i = end + 1;
  }
  return std::nullopt;
}

void Parser::ReportTooBig(std::string_view text, const std::string& size) {
  TextPosition at = PositionOfOffset(text, options_.max_file_bytes);
  errors_.push_back({at.line, at.column,
                     "the job file is " + size + ", over the limit of " +
                         Bytes(options_.max_file_bytes) + "; the limit falls here"});
}

void Parser::ReportSyntaxError(std::string_view text, const YAML::Mark& mark,
                               const std::string& msg) {
  std::string message = "YAML syntax error: " + msg;
  const size_t at = mark.pos >= 0 ? static_cast<size_t>(mark.pos) : text.size();
  if (msg.find("flow not found") != std::string::npos) {
    if (std::optional<OpenBracket> open = FindUnclosedFlow(text, at)) {
      const char close = open->bracket == '[' ? ']' : '}';
      errors_.push_back({open->position.line, open->position.column,
                         "YAML syntax error: this '" + std::string(1, open->bracket) +
                             "' is never closed by a '" + std::string(1, close) +
                             "' (the parser gave up at " + Position(mark) + ": " + msg + ")"});
      return;
    }
  }
  if (msg.find("illegal flow end") != std::string::npos && at < text.size()) {
    const char close = text[at];
    std::optional<OpenBracket> open = FindUnclosedFlow(text, at);
    if (open && (close == ']' || close == '}')) {
      message += " (this '" + std::string(1, close) + "' does not close the '" +
                 std::string(1, open->bracket) + "' at " + std::to_string(open->position.line) +
                 ":" + std::to_string(open->position.column) + ")";
    }
  }
  const int line = mark.is_null() ? PositionOfOffset(text, text.size()).line : mark.line + 1;
  if (std::optional<int> tab = LastTabIndentedLine(text, line)) {
    message += " (line " + std::to_string(*tab) +
               " is indented with a tab; YAML indentation must use spaces)";
  }
  Error(mark, message);
}

bool Parser::CheckShape(const YAML::Node& node, int depth, Shape* shape) {
  if (++shape->nodes > options_.max_nodes) {
    Error(node.Mark(), "the job file has more than " + std::to_string(options_.max_nodes) +
                           " values (after expanding aliases)");
    return false;
  }
  if (node.IsScalar()) {
    if (!CheckQuoteClosed(node)) return false;
    shape->bytes += node.Scalar().size();
    if (shape->bytes > options_.max_expanded_bytes) {
      Error(node.Mark(), "the job file's text is more than " + Bytes(options_.max_expanded_bytes) +
                             " after expanding aliases; this value passes the limit");
      return false;
    }
  }
  if (!node.IsMap() && !node.IsSequence()) return true;
  if (depth >= options_.max_depth) {
    Error(node.Mark(), "nesting is deeper than " + std::to_string(options_.max_depth) + " levels");
    return false;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (node.IsMap()) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      if (!CheckShape(key, depth + 1, shape) || !CheckShape(value, depth + 1, shape)) {
        return false;
      }
    } else {
      const YAML::Node item = *it;
      if (!CheckShape(item, depth + 1, shape)) return false;
    }
  }
  return true;
}

bool Parser::CheckQuoteClosed(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (node.Tag() != "!" || mark.is_null() || mark.pos < 0 ||
      static_cast<size_t>(mark.pos) >= text_.size()) {
    return true;
  }
  const char quote = text_[static_cast<size_t>(mark.pos)];
  if (quote != '"' && quote != '\'') return true;
  for (size_t i = static_cast<size_t>(mark.pos) + 1; i < text_.size(); ++i) {
    if (quote == '"' && text_[i] == '\\') {
      ++i;
    } else if (text_[i] == quote) {
      if (quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
        ++i;  // '' is a quote inside a single-quoted scalar
      } else {
        return true;
      }
    }
  }
  Error(mark, std::string("YAML syntax error: the ") + (quote == '"' ? "double" : "single") +
                  "-quoted text starting here is never closed (it runs to the end of the file); "
                  "add the closing " +
                  quote);
  return false;
}

}  // namespace reel::jobs::parser
