// Checking a structured answer against the prompt's JSON schema, on our side.
//
// vLLM and SGLang constrain decoding to the schema, but an answer cut by the token limit, a
// server without guided decoding, or a hosted service that ignores `response_format` can still
// return something else; Reel stores an answer as JSON only after checking it.
//
// Debian's validator (libvalijson-dev) pulls in Qt, Poco and MariaDB development packages, so this
// is a documented subset of JSON Schema (draft 2020-12 / draft 7 wording), the keywords that
// structured-output schemas use:
//   type (a name or a list; "integer" accepts whole numbers such as 2.0), enum, const,
//   properties, required, additionalProperties (true, false or a schema),
//   items (a schema), prefixItems, minItems, maxItems, uniqueItems,
//   minLength, maxLength (in code points), pattern is NOT checked (see unchecked_keywords),
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers), multipleOf,
//   minProperties, maxProperties, anyOf, oneOf, allOf, not,
//   $ref to a local definition ("#/$defs/Name", "#/definitions/Name", "#").
// Keywords outside the subset do not fail a check; the ones that would constrain the answer are
// listed by unchecked_keywords() so the caller can say the check was partial.
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
