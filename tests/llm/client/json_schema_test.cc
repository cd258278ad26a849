#include "llm/client/json_schema.h"

#include <gtest/gtest.h>

namespace reel::llm {
namespace {

const char* kSceneSchema = R"({
  "type": "object",
  "properties": {
    "summary": {"type": "string", "minLength": 1, "maxLength": 10},
    "people": {"type": "integer", "minimum": 0},
    "mood": {"enum": ["calm", "tense"]},
    "events": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/event"}},
    "note": {"type": ["string", "null"]}
  },
  "required": ["summary", "people", "events"],
  "additionalProperties": false,
  "$defs": {
    "event": {"type": "object",
              "properties": {"t": {"type": "number", "exclusiveMinimum": 0},
                             "what": {"type": "string"}},
              "required": ["t", "what"]}
  }
})";

TEST(JsonSchemaTest, AcceptsMatchingAnswers) {
  Result<JsonSchema> schema = JsonSchema::Parse(kSceneSchema);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_TRUE(schema->unchecked_keywords().empty());
  for (const char* answer : {
           R"({"summary":"a cat","people":0,"events":[{"t":1.5,"what":"jumps"}]})",
           R"({"summary":"猫猫猫","people":2.0,"mood":"calm","note":null,
               "events":[{"t":1,"what":"x"},{"t":2,"what":"y"}]})",
       }) {
    Status s = schema->Validate(answer);
    EXPECT_TRUE(s.ok()) << answer << ": " << s.message();
  }
}

TEST(JsonSchemaTest, RejectsWithThePathAndReason) {
  Result<JsonSchema> schema = JsonSchema::Parse(kSceneSchema);
  ASSERT_TRUE(schema.ok());
  struct Case {
    const char* answer;
    const char* message;
  };
  const Case cases[] = {
      {R"({"people":1,"events":[{"t":1,"what":"x"}]})", "$: missing required property 'summary'"},
      {R"({"summary":"s","people":"2","events":[{"t":1,"what":"x"}]})",
       "$.people: expected integer, got string"},
      {R"({"summary":"s","people":1.5,"events":[{"t":1,"what":"x"}]})",
       "$.people: expected integer, got number"},
      {R"({"summary":"s","people":-1,"events":[{"t":1,"what":"x"}]})", "below the minimum"},
      {R"({"summary":"","people":1,"events":[{"t":1,"what":"x"}]})", "shorter than 1"},
      {R"({"summary":"12345678901","people":1,"events":[{"t":1,"what":"x"}]})", "longer than 10"},
      {R"({"summary":"s","people":1,"mood":"happy","events":[{"t":1,"what":"x"}]})",
       "$.mood: \"happy\" is not one of"},
      {R"({"summary":"s","people":1,"events":[]})", "$.events: fewer than 1 items"},
      {R"({"summary":"s","people":1,"events":[{"t":1,"what":"x"},{"t":0,"what":"y"}]})",
       "$.events[1].t: 0 is not above 0"},
      {R"({"summary":"s","people":1,"events":[{"t":1}]})",
       "$.events[0]: missing required property 'what'"},
      {R"({"summary":"s","people":1,"events":[{"t":1,"what":"x"}],"extra":1})",
       "property 'extra' is not allowed"},
      {R"(["not an object"])", "$: expected object, got array"},
      {R"({"summary": "unterminated)", "not valid JSON"},
  };
  for (const Case& c : cases) {
    Status s = schema->Validate(c.answer);
    ASSERT_FALSE(s.ok()) << c.answer;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.answer << " -> " << s.message();
  }
}

TEST(JsonSchemaTest, CombinatorsAndTuples) {
  Result<JsonSchema> schema = JsonSchema::Parse(R"({
    "anyOf": [{"type": "string"}, {"type": "array", "prefixItems": [{"type": "integer"},
              {"type": "string"}], "items": false, "uniqueItems": true}],
    "not": {"const": "forbidden"}
  })");
  ASSERT_TRUE(schema.ok());
  EXPECT_TRUE(schema->Validate(R"("ok")").ok());
  EXPECT_TRUE(schema->Validate(R"([1, "a"])").ok());
  EXPECT_FALSE(schema->Validate(R"("forbidden")").ok());
  EXPECT_FALSE(schema->Validate(R"([1, "a", 3])").ok());
  EXPECT_FALSE(schema->Validate(R"(["a", 1])").ok());
  EXPECT_FALSE(schema->Validate("42").ok());
  Result<JsonSchema> one = JsonSchema::Parse(R"({"oneOf": [{"type": "integer"},
                                                          {"type": "number"}]})");
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->Validate("1.5").ok());
  EXPECT_FALSE(one->Validate("1").ok());  // both match
}

TEST(JsonSchemaTest, UncheckedKeywordsAreListed) {
  Result<JsonSchema> schema = JsonSchema::Parse(
      R"({"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$"}},
          "patternProperties":{"^x-":{}},"additionalProperties":false})");
  ASSERT_TRUE(schema.ok());
  EXPECT_EQ(schema->unchecked_keywords(),
            (std::vector<std::string>{"pattern", "patternProperties"}));
  // With patternProperties, extra keys are not refused (they might match a pattern).
  EXPECT_TRUE(schema->Validate(R"({"id":"abc","x-y":1})").ok());
}

TEST(JsonSchemaTest, BadSchemas) {
  EXPECT_FALSE(JsonSchema::Parse("not json").ok());
  EXPECT_FALSE(JsonSchema::Parse("[1]").ok());
  EXPECT_FALSE(JsonSchema::Parse(R"({"$ref": "#/$defs/missing"})").ok());
  EXPECT_FALSE(JsonSchema::Parse(R"({"$ref": "https://example.com/s.json"})").ok());
  EXPECT_FALSE(JsonSchema::Parse(std::string(1000, '[') + std::string(1000, ']')).ok());
  // A schema that refers to itself terminates.
  Result<JsonSchema> self = JsonSchema::Parse(R"({"type":"array","items":{"$ref":"#"}})");
  ASSERT_TRUE(self.ok());
  EXPECT_TRUE(self->Validate("[[[]],[]]").ok());
  EXPECT_FALSE(self->Validate("[[1]]").ok());
  Result<JsonSchema> loop = JsonSchema::Parse(R"({"$ref":"#"})");
  ASSERT_TRUE(loop.ok());
  EXPECT_FALSE(loop->Validate("1").ok());  // endless reference: refused, not a crash
}

TEST(JsonSchemaTest, DeepAnswersAreRefusedNotCrashes) {
  Result<JsonSchema> schema = JsonSchema::Parse("{}");
  ASSERT_TRUE(schema.ok());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(schema->Validate(deep).ok());
  EXPECT_FALSE(ExtractJsonAnswer(deep).ok());
}

TEST(JsonSchemaTest, ExtractJsonAnswer) {
  EXPECT_EQ(*ExtractJsonAnswer(R"( {"a": 1} )"), R"({"a":1})");
  EXPECT_EQ(*ExtractJsonAnswer("Here it is:\n```json\n{\"a\": [1, 2]}\n```\n"), R"({"a":[1,2]})");
  EXPECT_FALSE(ExtractJsonAnswer("no json here").ok());
  EXPECT_FALSE(ExtractJsonAnswer("").ok());
}

}  // namespace
}  // namespace reel::llm
