// Checking a structured answer against the prompt's JSON schema on our side, with a documented
// subset of JSON Schema. Keywords outside it do not fail a check; those that would constrain the
// answer are listed by unchecked_keywords().
// The subset, and why not a library: llm/README.md, "JSON schema".
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace reel::llm {

class JsonSchema {
 public:
  // Parses a schema (JSON text). kInvalidArgument when it is not JSON or not a schema object, or
  // has a $ref that does not resolve.
  static Result<JsonSchema> Parse(std::string_view schema_text);

  JsonSchema(JsonSchema&&) noexcept;
  JsonSchema& operator=(JsonSchema&&) noexcept;
  ~JsonSchema();

  // OK when `instance_text` is JSON that matches. Otherwise kInvalidArgument with the first
  // problem and where it is, e.g. "$.items[2].name: expected string, got number".
  Status Validate(std::string_view instance_text) const;

  // The schema's own text, compact (as sent in `response_format`).
  const std::string& compact_text() const;

  // Constraining keywords present in the schema that Validate does not check ("pattern", ...).
  const std::vector<std::string>& unchecked_keywords() const;

  struct Impl;

 private:
  explicit JsonSchema(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The answer text as JSON: the whole content, or failing that the content inside a ```json
// fence (some services wrap it). Returns the compact JSON text, or kInvalidArgument.
Result<std::string> ExtractJsonAnswer(std::string_view content);

}  // namespace reel::llm
