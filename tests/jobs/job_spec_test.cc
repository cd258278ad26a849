#include "jobs/spec/job_spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/file_util.h"
#include "jobs/spec/job_values.h"
#include "jobs/stages/stages.h"
#include "tests/support/test_media.h"

namespace reel::jobs {
namespace {

namespace fs = std::filesystem;

// A fixed environment, so tests never depend on the caller's.
ParseOptions TestOptions() {
  ParseOptions options;
  options.lookup_env = [](const std::string& name) -> std::optional<std::string> {
    static const std::map<std::string, std::string> kEnv = {
        {"CLIP_DIR", "clips"}, {"FPS", "2"}, {"EMPTY", ""}, {"KEY_VAR", "x"}};
    auto it = kEnv.find(name);
    if (it == kEnv.end()) return std::nullopt;
    return it->second;
  };
  return options;
}

Result<JobSpec> Parse(const std::string& text, const ParseOptions& options = TestOptions()) {
  return ParseJobText(text, "job.yaml", "/jobs", options);
}

const std::string kHead = "name: demo\ninputs: [a.mp4]\n";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

struct BrokenCase {
  std::string label;
  std::string text;
  std::string position;  // "line:column", or "" for a whole-file error
  std::string fragment;
};

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::vector<BrokenCase> BrokenCases() {
  return {
      {"unknown top key", kHead + "sampeling:\n  fps: 2\n", "3:1",
       "unknown key 'sampeling' (did you mean 'sampling'?)"},
      {"unknown nested key", kHead + "sampling:\n  fsp: 2\n", "4:3",
       "unknown key 'fsp' in 'sampling' (did you mean 'fps'?)"},
      {"unknown key without a near name", kHead + "model:\n  colour: red\n", "4:3",
       "unknown key 'colour' in 'model' (valid keys: endpoint, name,"},
      {"api key in the file", kHead + "model:\n  api_key: sk-123\n", "4:3",
       "the key itself never goes in a job file"},
      {"api_key_env holding a key", kHead + "model:\n  api_key_env: sk-abc-123\n", "4:16",
       "'model.api_key_env' must be the NAME of an environment variable"},
      {"number expected", kHead + "sampling:\n  fps: fast\n", "4:8",
       "'sampling.fps' must be a number, got 'fast'"},
      {"scalar expected", "name: [a, b]\ninputs: [a.mp4]\n", "1:7",
       "'name' must be a single value, got a list"},
      {"section not a map", kHead + "sampling: 5\n", "3:11",
       "'sampling' must be a map of settings, got '5'"},
      {"integer expected", kHead + "sampling:\n  count: 2.5\n", "4:10",
       "'sampling.count' must be a whole number, got '2.5'"},
      {"bool expected", kHead + "vision:\n  enabled: maybe\n", "4:12",
       "'vision.enabled' must be true or false, got 'maybe'"},
      {"bad enum", kHead + "sampling:\n  policy: sceen\n", "4:11",
       "'sampling.policy' must be one of fps, count, keyframes, scene, timestamps; got 'sceen' "
       "(did you mean 'scene'?)"},
      {"max below the default min", kHead + "resize:\n  max_pixels: 1000\n", "4:15",
       "'resize.max_pixels' (1000) is smaller than the default 'resize.min_pixels' (3136): set "
       "'resize.min_pixels' too"},
      {"min above the default max", kHead + "resize:\n  min_pixels: 700000\n", "4:15",
       "'resize.min_pixels' (700000) is larger than the default 'resize.max_pixels' (602112): set "
       "'resize.max_pixels' too"},
      {"bad shape", kHead + "resize:\n  shape: stored\n", "4:10",
       "'resize.shape' must be one of display, storage; got 'stored'"},
      {"bad input kind", "name: demo\ninputs:\n  - {path: a.mp4, kind: movie}\n", "3:25",
       "'inputs[0].kind' must be one of auto, video, image, document, subtitle, audio; got "
       "'movie'"},
      {"negative fps", kHead + "sampling:\n  fps: -1\n", "4:8",
       "'sampling.fps' must be greater than 0, got -1"},
      {"count zero", kHead + "sampling:\n  policy: count\n  count: 0\n", "5:10",
       "'sampling.count' must be at least 1, got 0"},
      {"start after end", kHead + "sampling:\n  start: 20\n  end: \"0:10\"\n", "5:8",
       "'sampling.end' (10 s) must be after 'sampling.start' (20 s)"},
      {"timestamps policy without times", kHead + "sampling:\n  policy: timestamps\n", "4:11",
       "lists no times"},
      {"bad timestamp", kHead + "sampling:\n  policy: timestamps\n  timestamps: [1, soon]\n",
       "5:19", "'sampling.timestamps[1]' must be a time in seconds, got 'soon'"},
      {"temperature out of range", kHead + "model:\n  temperature: 3\n", "4:16",
       "'model.temperature' must be at most 2, got 3"},
      {"top_k zero", kHead + "model:\n  top_k: 0\n", "4:10", "'model.top_k' must be -1"},
      {"endpoint not a URL", kHead + "model:\n  endpoint: localhost:8000\n", "4:13",
       "'model.endpoint' must be an http:// or https:// URL"},
      {"endpoint naming a route",
       kHead + "model:\n  endpoint: http://gpu:8000/v1/chat/completions\n", "4:13",
       "drop /chat/completions: the endpoint is the API base, http://gpu:8000/v1"},
      {"request timeout not positive", kHead + "model:\n  request_timeout: 0\n", "4:20",
       "'model.request_timeout' must be greater than 0"},
      {"reserve below max output",
       kHead + "model:\n  max_output_tokens: 4096\ncontext:\n  reserve_output_tokens: 100\n",
       "6:26", "'context.reserve_output_tokens' (100) is less than 'model.max_output_tokens'"},
      {"min above max pixels", kHead + "resize:\n  min_pixels: 10000\n  max_pixels: 5000\n", "4:15",
       "'resize.min_pixels' (10000) is larger than 'resize.max_pixels' (5000)"},
      {"vision without weights", kHead + "vision:\n  enabled: true\n", "4:12",
       "'vision.weights' is not set"},
      {"bad byte size", kHead + "limits:\n  max_file_size: lots\n", "4:18",
       "'limits.max_file_size' must be a size in bytes"},
      {"duplicate prompt id",
       kHead + "prompts:\n  - id: q\n    question: A?\n  - id: q\n    question: B?\n", "6:9",
       "duplicate prompt id 'q' (first at 4:9)"},
      {"prompt without question", kHead + "prompts:\n  - id: q\n", "4:5",
       "'prompts[0]': missing required key 'question'"},
      {"bad prompt id", kHead + "prompts:\n  - id: a b\n    question: A?\n", "4:9",
       "'prompts[0].id' may use only letters, digits"},
      {"duplicate key", kHead + "name: again\n", "3:1", "duplicate key 'name' (first at 1:1)"},
      {"bad merge key", kHead + "sampling:\n  <<: 5\n", "4:7",
       "'<<' merges a map or a list of maps, got '5'"},
      {"missing name", "inputs: [a.mp4]\n", "1:1", "missing required key 'name'"},
      {"missing inputs", "name: demo\n", "1:1", "missing required key 'inputs'"},
      {"empty inputs", "name: demo\ninputs: []\n", "2:9", "'inputs' is empty"},
      {"name with a slash", "name: a/b\ninputs: [a.mp4]\n", "1:7", "'name' may not contain '/'"},
      {"bad glob", "name: demo\ninputs: [\"a**.mp4\"]\n", "2:10",
       "'**' must be a whole path component"},
      {"unsupported version", "version: 2\n" + kHead, "1:10", "'version' 2 is not supported"},
      {"not a map", "- a\n- b\n", "1:1", "'' must be a map"},
      {"empty file", "", "1:1", "the job file is empty"},
      // yaml-cpp stops at the end of the file; the message points at the bracket.
      {"unclosed bracket", "name: demo\ninputs: [a.mp4\n", "2:9",
       "YAML syntax error: this '[' is never closed by a ']' (the parser gave up at 3:1: end of "
       "sequence flow not found)"},
      {"unclosed brace before more keys",
       kHead + "sampling: {fps: 2, count: 3\nmodel:\n  name: x\n", "3:11",
       "YAML syntax error: this '{' is never closed by a '}'"},
      {"mismatched bracket", kHead + "x-a: {b: [1, 2}, c: 'it''s ['}\n", "3:15",
       "YAML syntax error: illegal flow end (this '}' does not close the '[' at 3:10)"},
      // yaml-cpp 0.7's LoadAll never returned on this (issue #1040), growing without bound.
      {"a lone comma", ",", "1:1", "YAML syntax error: unexpected ','"},
      {"a comma after comments", "# job\n\n  ,\n", "3:3", "YAML syntax error: unexpected ','"},
      {"two documents", kHead + "---\nname: b\n", "3:1", "more than one YAML document"},
      {"tab indentation", "name: demo\ninputs:\n\t- a.mp4\n", "3:2",
       "YAML syntax error: illegal block entry (line 3 is indented with a tab; YAML indentation "
       "must use spaces)"},
      {"yaml bad indentation", "name: demo\ninputs:\n  - a.mp4\n bad: 1\n", "4:2",
       "YAML syntax error:"},
      {"undefined alias", "name: *nope\ninputs: [a.mp4]\n", "1:7",
       "YAML syntax error: the referenced anchor is not defined"},
      {"unset variable", "name: demo\ninputs: [\"${VIDEO_DIR}/a.mp4\"]\n", "2:10",
       "'inputs[0]': environment variable 'VIDEO_DIR' is not set"},
      {"unterminated variable", "name: \"${NAME\"\ninputs: [a.mp4]\n", "1:7",
       "'name': unterminated '${'"},
      {"too deep", kHead + "x-deep: " + Nested(40) + "\n", "3:40",
       "nesting is deeper than 32 levels"},
      {"far too deep for the YAML parser", kHead + "x-deep: " + Nested(3000) + "\n", "",
       "nesting is deeper than 32 levels"},
      // The position is where the limit falls: line 3 holds the long description.
      {"oversize file", kHead + "description: " + std::string(1 << 20, 'x') + "\n",
       "3:" + std::to_string((1 << 20) - kHead.size() + 1),
       "the job file is " + std::to_string(kHead.size() + 14 + (1 << 20)) +
           " bytes, over the limit of 1048576 bytes (1 MiB); the limit falls here"},
  };
}

TEST(JobSpecTest, BrokenFilesReportPositionAndMessage) {
  for (const BrokenCase& c : BrokenCases()) {
    SCOPED_TRACE(c.label);
    Result<JobSpec> job = Parse(c.text);
    ASSERT_FALSE(job.ok());
    EXPECT_EQ(job.status().code(), ErrorCode::kInvalidArgument);
    const std::string& message = job.status().message();
    std::string prefix = c.position.empty() ? "job.yaml:" : "job.yaml:" + c.position + ": ";
    bool found = false;
    for (const std::string& line : Lines(message)) {
      if (line.starts_with(prefix) && line.find(c.fragment) != std::string::npos) found = true;
    }
    EXPECT_TRUE(found) << "expected a line starting '" << prefix << "' containing '" << c.fragment
                       << "'; got:\n"
                       << message;
  }
}

// yaml-cpp reads `question: "hi` (never closed) as "hi "; YAML (PyYAML) refuses it: so does Reel,
// naming the line and column where the quote opens. Closed quotes, multi-line ones, escaped
// quotes and '' inside single quotes are fine.
TEST(JobSpecTest, AnUnclosedQuoteIsAnErrorAtItsLine) {
  for (const std::string quote : {"\"", "'"}) {
    SCOPED_TRACE(quote);
    Result<JobSpec> job = Parse(kHead + "prompts:\n  - id: q\n    question: " + quote + "hi\n");
    ASSERT_FALSE(job.ok()) << "accepted as '" << (job.ok() ? job->prompts[0].question : "") << "'";
    EXPECT_NE(job.status().message().find("job.yaml:5:15: YAML syntax error: the " +
                                          std::string(quote == "'" ? "single" : "double") +
                                          "-quoted text starting here is never closed"),
              std::string::npos)
        << job.status().message();
  }
  Result<JobSpec> fine =
      Parse(kHead +
            "prompts:\n  - id: q\n    question: \"say \\\"hi\\\"\n      twice\"\n"
            "  - id: r\n    question: 'it''s'\n");
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  EXPECT_EQ(fine->prompts[0].question, "say \"hi\" twice");
  EXPECT_EQ(fine->prompts[1].question, "it's");
}

// A kind that is not one gets its did-you-mean, and no errors about keys that depend on the kind.
TEST(JobSpecTest, AMistypedPromptKindGetsOnlyItsDidYouMean) {
  Result<JobSpec> job = Parse(kHead + "prompts:\n  - kind: chapter\n");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(),
            "job.yaml:4:11: 'prompts[0].kind' must be one of question, chapters; got 'chapter' "
            "(did you mean 'chapters'?)");
}

TEST(JobSpecTest, ReportsEveryErrorSortedByPosition) {
  Result<JobSpec> job = Parse(
      "inputs: [a.mp4]\n"
      "sampling:\n"
      "  fps: -2\n"
      "  polcy: fps\n"
      "model:\n"
      "  top_p: 2\n"
      "prompts:\n"
      "  - {id: a, question: x}\n"
      "  - {id: a, question: y}\n");
  ASSERT_FALSE(job.ok());
  std::vector<std::string> lines = Lines(job.status().message());
  ASSERT_EQ(lines.size(), 5u) << job.status().message();
  EXPECT_TRUE(lines[0].starts_with("job.yaml:1:1: missing required key 'name'")) << lines[0];
  EXPECT_TRUE(lines[1].starts_with("job.yaml:3:8: 'sampling.fps'")) << lines[1];
  EXPECT_TRUE(
      lines[2].starts_with("job.yaml:4:3: unknown key 'polcy' in 'sampling' (did you "
                           "mean 'policy'?)"))
      << lines[2];
  EXPECT_TRUE(lines[3].starts_with("job.yaml:6:10: 'model.top_p' must be at most 1")) << lines[3];
  EXPECT_TRUE(lines[4].starts_with("job.yaml:9:10: duplicate prompt id 'a' (first at 8:10)"))
      << lines[4];
}

TEST(JobSpecTest, LimitsOnTheFileAreSettings) {
  ParseOptions options = TestOptions();
  options.max_inputs = 2;
  options.max_prompts = 1;
  Result<JobSpec> job = Parse(
      "name: demo\ninputs: [a.mp4, b.mp4, c.mp4]\nprompts:\n  - {id: a, question: x}\n"
      "  - {id: b, question: y}\n",
      options);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("job.yaml:2:9: 'inputs' has 3 entries; the limit is 2"),
            std::string::npos)
      << job.status().message();
  EXPECT_NE(job.status().message().find("job.yaml:4:3: 'prompts' has 2 entries; the limit is 1"),
            std::string::npos)
      << job.status().message();
}

TEST(JobSpecTest, AliasExpansionIsBounded) {
  // Each level doubles the values reached through aliases: 2^20 in all.
  std::string text = kHead + "x-a0: &a0 [1, 1]\n";
  for (int i = 1; i <= 20; ++i) {
    text += "x-a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" +
            std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  }
  Result<JobSpec> job = Parse(text);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("values (after expanding aliases)"), std::string::npos)
      << job.status().message();
}

// A small file that aliases one long string many times: the text after expansion is what is
// limited, not only the count of values (a 1 MB file aliasing a 990,000-character string 2,000
// times took 5.8 GB and 50 s).
TEST(JobSpecTest, AliasedTextIsBoundedAfterExpansion) {
  ParseOptions options = TestOptions();
  options.max_expanded_bytes = 100000;
  std::string text = kHead + "x-long: &long \"" + std::string(10000, 'q') + "\"\nprompts:\n";
  for (int i = 0; i < 12; ++i) {
    text += "  - {id: p" + std::to_string(i) + ", system: *long, question: *long}\n";
  }
  ASSERT_LT(text.size(), 20000u);
  Result<JobSpec> job = Parse(text, options);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find(
                "job.yaml:3:9: the job file's text is more than 100000 bytes after expanding "
                "aliases; this value passes the limit"),
            std::string::npos)
      << job.status().message();
  // Under the limit, the same aliases are fine.
  options.max_expanded_bytes = 300000;
  EXPECT_TRUE(Parse(text, options).ok());
  // Variables count too.
  ParseOptions env = TestOptions();
  env.max_expanded_bytes = 1000;
  env.lookup_env = [](const std::string&) -> std::optional<std::string> {
    return std::string(600, 'v');
  };
  Result<JobSpec> vars =
      Parse(kHead + "description: ${A}\nx-b: 1\nprompts:\n  - {id: a, question: \"${B}\"}\n", env);
  ASSERT_FALSE(vars.ok());
  EXPECT_NE(vars.status().message().find("after expanding aliases and variables"),
            std::string::npos)
      << vars.status().message();
  // The documented default.
  EXPECT_EQ(ParseOptions().max_expanded_bytes, 16u << 20);
}

TEST(JobValuesTest, SyntaxErrorHints) {
  EXPECT_EQ(PositionOfOffset("ab\ncd", 4), (TextPosition{2, 2}));
  EXPECT_EQ(PositionOfOffset("ab", 99), (TextPosition{1, 3}));
  EXPECT_EQ(LastTabIndentedLine("a:\n\t- b\n  c\n\t\n", 9), 2);
  EXPECT_EQ(LastTabIndentedLine("a:\n  b\tc\n", 9), std::nullopt);  // a tab, not indentation
  EXPECT_EQ(LastTabIndentedLine("a:\n\t- b\n", 1), std::nullopt);
  auto open = [](std::string_view text) {
    std::optional<OpenBracket> found = FindUnclosedFlow(text, text.size());
    return found ? std::string(1, found->bracket) + "@" + std::to_string(found->position.line) +
                       ":" + std::to_string(found->position.column)
                 : std::string("none");
  };
  EXPECT_EQ(open("a: [1, 2]\nb: {c: [d]}\n"), "none");
  EXPECT_EQ(open("a: [1, 2\nb: 3\n"), "[@1:4");
  EXPECT_EQ(open("a: {b: [1, 2}\n"), "[@1:8");
  EXPECT_EQ(open("a: \"[\"\nb: '['\nc: x[1]\n# [\nd: [\n"), "[@5:4");
  EXPECT_EQ(open("a: it's [\n"), "none");  // a plain scalar, not a flow collection
  EXPECT_EQ(open("a: |\n  [ literal\nb: &x [1\n"), "[@3:7");
  EXPECT_EQ(open("- [a, 'b]', \"c\\\"]\"\n"), "[@1:3");
}

const char* kCompleteJob = R"(# A job with every section.
version: 1
name: lectures
description: Weekly lectures
inputs:
  - "${CLIP_DIR}/**/*.mp4"
  - path: notes/week1.txt
    kind: document
  - slides/*.png
sampling:
  policy: fps
  fps: ${FPS}
  keep_last: false
  start: "0:30"
  end: 1h
  max_frames: 256
resize:
  mode: smart
  min_pixels: 6272
  max_pixels: 401408
  image_max_pixels: 301056
  shape: storage
vision:
  enabled: yes
  weights: /models/m3
  batch_size: 4
  dtype: f16
context:
  token_budget: 524288
  reserve_output_tokens: 9000
  fit_strategy: lower_resolution
model:
  endpoint: http://localhost:8000/v1/
  name: MiniMaxAI/MiniMax-M3
  api_key_env: KEY_VAR
  thinking_mode: disabled
  temperature: 0.7
  top_p: 0.9
  top_k: -1
  seed: 1234
  max_output_tokens: 8192
  concurrency: 8
  connect_timeout: 5s
  read_timeout: 30m
  request_timeout: 3h
  retries: 3
x-system: &sys You are a careful teaching assistant.
prompts:
  - id: summary
    system: *sys
    question: Summarise the lecture.
  - id: topics
    system: *sys
    question: |
      List the topics.
      One per line; cost: $${PRICE}.
storage:
  database: out/lectures.sqlite
limits:
  item_time_limit: 20m
  max_file_size: 2GiB
  retries: 0
  max_decode_error_rate: 0.1
  decoder_threads: 2
)";

TEST(JobSpecTest, CompleteFileParsesIntoTheStruct) {
  Result<JobSpec> parsed = Parse(kCompleteJob);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const JobSpec& job = *parsed;
  EXPECT_EQ(job.name, "lectures");
  EXPECT_EQ(job.description, "Weekly lectures");
  EXPECT_EQ(job.base_dir, "/jobs");
  ASSERT_EQ(job.inputs.size(), 3u);
  EXPECT_EQ(job.inputs[0].path, "clips/**/*.mp4");
  EXPECT_EQ(job.inputs[0].kind, InputKind::kAuto);
  EXPECT_EQ(job.inputs[0].where, "job.yaml:6:5");
  EXPECT_EQ(job.inputs[1].path, "notes/week1.txt");
  EXPECT_EQ(job.inputs[1].kind, InputKind::kDocument);
  EXPECT_EQ(job.inputs[2].path, "slides/*.png");

  EXPECT_EQ(job.sampling.policy, pipeline::SamplingPolicy::kFps);
  EXPECT_EQ(job.sampling.fps, 2.0);
  EXPECT_FALSE(job.sampling.fps_keep_last);
  EXPECT_EQ(job.sampling.start_s, 30.0);
  EXPECT_EQ(job.sampling.end_s, 3600.0);
  EXPECT_EQ(job.sampling.max_frames, 256);

  EXPECT_EQ(job.resize.frames.mode, pipeline::ResizeMode::kSmart);
  EXPECT_EQ(job.resize.frames.smart.min_pixels, 6272);
  EXPECT_EQ(job.resize.frames.smart.max_pixels, 401408);
  EXPECT_EQ(job.resize.image_max_pixels, 301056);
  EXPECT_EQ(job.resize.frames.shape, pipeline::FrameShape::kStorage);

  EXPECT_TRUE(job.vision.enabled);
  EXPECT_EQ(job.vision.weights, "/models/m3");
  EXPECT_EQ(job.vision.batch_size, 4);
  EXPECT_EQ(job.vision.dtype, VisionDType::kF16);

  EXPECT_EQ(job.context.token_budget, 524288);
  EXPECT_EQ(job.context.reserve_output_tokens, 9000);
  EXPECT_EQ(job.context.fit_strategy, FitStrategy::kLowerResolution);

  EXPECT_EQ(job.model.endpoint, "http://localhost:8000/v1");  // trailing '/' dropped
  EXPECT_EQ(job.model.name, "MiniMaxAI/MiniMax-M3");
  EXPECT_EQ(job.model.api_key_env, "KEY_VAR");
  EXPECT_EQ(job.model.thinking_mode, ThinkingMode::kDisabled);
  EXPECT_EQ(job.model.temperature, 0.7);
  EXPECT_EQ(job.model.top_p, 0.9);
  EXPECT_EQ(job.model.top_k, -1);
  EXPECT_EQ(job.model.seed, 1234);
  EXPECT_EQ(job.model.max_output_tokens, 8192);
  EXPECT_EQ(job.model.concurrency, 8);
  EXPECT_EQ(job.model.connect_timeout_s, 5.0);
  EXPECT_EQ(job.model.read_timeout_s, 1800.0);
  EXPECT_EQ(job.model.request_timeout_s, 3 * 3600.0);
  EXPECT_EQ(job.model.retries, 3);

  ASSERT_EQ(job.prompts.size(), 2u);
  EXPECT_EQ(job.prompts[0].id, "summary");
  EXPECT_EQ(job.prompts[0].system, "You are a careful teaching assistant.");
  EXPECT_EQ(job.prompts[0].question, "Summarise the lecture.");
  EXPECT_EQ(job.prompts[1].question, "List the topics.\nOne per line; cost: ${PRICE}.\n");

  EXPECT_EQ(job.storage.database, "out/lectures.sqlite");
  EXPECT_EQ(ResolveJobPath(job.base_dir, job.storage.database), "/jobs/out/lectures.sqlite");
  EXPECT_EQ(job.limits.media.time_limit_s, 1200.0);
  EXPECT_EQ(job.limits.max_file_bytes, int64_t{2} << 30);
  EXPECT_EQ(job.limits.item_retries, 0);
  EXPECT_EQ(job.limits.media.max_error_rate, 0.1);
  EXPECT_EQ(job.limits.media.decoder_threads, 2);
  EXPECT_TRUE(job.warnings.empty()) << job.warnings[0];
}

TEST(JobSpecTest, DefaultsAreFilledIn) {
  Result<JobSpec> parsed = Parse(kHead);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const JobSpec& job = *parsed;
  EXPECT_EQ(job.version, 1);
  EXPECT_EQ(job.sampling.policy, pipeline::SamplingPolicy::kFps);
  EXPECT_EQ(job.sampling.fps, 1.0);
  EXPECT_TRUE(job.sampling.fps_keep_last);
  EXPECT_FALSE(job.sampling.start_s.has_value());
  EXPECT_FALSE(job.sampling.max_frames.has_value());
  EXPECT_EQ(job.resize.frames.mode, pipeline::ResizeMode::kSmart);
  EXPECT_EQ(job.resize.frames.smart.factor, 28);
  EXPECT_EQ(job.resize.frames.smart.min_pixels, 3136);
  EXPECT_EQ(job.resize.frames.smart.max_pixels, 602112);
  EXPECT_EQ(job.resize.image_max_pixels, 451584);
  EXPECT_EQ(job.resize.frames.long_side.max_long_side, 672);
  EXPECT_EQ(job.resize.frames.shape, pipeline::FrameShape::kDisplay);
  EXPECT_FALSE(job.vision.enabled);
  EXPECT_EQ(job.context.token_budget, 1048576);
  EXPECT_EQ(job.context.reserve_output_tokens, job.model.max_output_tokens);
  EXPECT_EQ(job.context.fit_strategy, FitStrategy::kThinFrames);
  EXPECT_FALSE(job.model.endpoint.has_value());
  EXPECT_EQ(job.model.name, "MiniMax-M3");
  EXPECT_EQ(job.model.thinking_mode, ThinkingMode::kAdaptive);
  EXPECT_EQ(job.model.temperature, 1.0);
  EXPECT_EQ(job.model.top_p, 0.95);
  EXPECT_EQ(job.model.top_k, 40);
  EXPECT_FALSE(job.model.seed.has_value());
  EXPECT_EQ(job.model.retries, 2);
  EXPECT_TRUE(job.prompts.empty());
  EXPECT_EQ(job.storage.database, "demo.db");
  EXPECT_EQ(job.limits.media.time_limit_s, 600.0);
  EXPECT_EQ(job.limits.media.max_error_rate, 0.5);

  std::string rendered = RenderResolvedJob(job);
  for (const char* line :
       {"  fps: 1\n", "  max_pixels: 602112\n", "  token_budget: 1048576\n", "  temperature: 1\n",
        "  top_p: 0.95\n", "  top_k: 40\n", "  thinking_mode: adaptive\n",
        "  database: \"demo.db\"", "  endpoint: null", "  start: null\n", "  shape: display\n"}) {
    EXPECT_NE(rendered.find(line), std::string::npos) << line << "\n" << rendered;
  }
}

// A stored (resolved) spec names where its relative paths start; reading it back gives that
// directory, so a job parsed from the database resolves paths as the run did.
TEST(JobSpecTest, ResolvedSpecNamesItsBaseDirectory) {
  for (const std::string& dir :
       {std::string("/data/jobs"), std::string("/a \"quoted\" ${HOME} dir"),
        std::string("/caf\xc3\xa9/x.")}) {
    Result<JobSpec> job = ParseJobText("name: j\ninputs: [a.mp4]\n", "job.yaml", dir);
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    const std::string spec = RenderResolvedJob(*job);
    EXPECT_EQ(ResolvedJobBaseDir(spec), dir) << spec.substr(0, 200);
    Result<JobSpec> again = ParseJobText(spec, "stored", ResolvedJobBaseDir(spec));
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->base_dir, dir);
  }
  Result<JobSpec> here = ParseJobText("name: j\ninputs: [a.mp4]\n", "job.yaml", "");
  ASSERT_TRUE(here.ok());
  EXPECT_EQ(ResolvedJobBaseDir(RenderResolvedJob(*here)), "");
  EXPECT_EQ(ResolvedJobBaseDir("name: j\n# Relative paths start at \"/x\".\n"), "")
      << "only the comment lines at the top count";
}

TEST(JobSpecTest, NullValuesMeanDefault) {
  Result<JobSpec> job = Parse(kHead + "sampling:\nmodel:\n  seed: ~\n  endpoint: null\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->sampling.fps, 1.0);
  EXPECT_FALSE(job->model.seed.has_value());
}

TEST(JobSpecTest, VariablesExpandWithDefaults) {
  Result<JobSpec> job = Parse(
      "name: \"${JOB_NAME:-nightly}\"\ninputs: [\"${CLIP_DIR}/*.mp4\", \"${EMPTY:-x}.mp4\"]\n"
      "sampling:\n  fps: ${FPS}\nprompts:\n  - {id: q, question: \"costs $5 or $${X}\"}\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->name, "nightly");
  EXPECT_EQ(job->inputs[0].path, "clips/*.mp4");
  EXPECT_EQ(job->inputs[1].path, "x.mp4");
  EXPECT_EQ(job->sampling.fps, 2.0);
  EXPECT_EQ(job->prompts[0].question, "costs $5 or ${X}");
}

TEST(JobSpecTest, AnchorsAliasesAndMergeKeys) {
  Result<JobSpec> job = Parse(kHead +
                              "x-common: &common {policy: count, count: 16}\n"
                              "sampling:\n  <<: *common\n  count: 4\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->sampling.policy, pipeline::SamplingPolicy::kCount);
  EXPECT_EQ(job->sampling.count, 4);  // the map's own key wins over the merged one
}

TEST(JobSpecTest, WarnsAboutSettingsThePolicyIgnores) {
  Result<JobSpec> job = Parse(kHead + "sampling:\n  policy: count\n  fps: 3\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_EQ(job->warnings.size(), 1u);
  EXPECT_EQ(job->warnings[0], "job.yaml:5:3: 'sampling.fps' has no effect with policy 'count'");
}

TEST(JobSpecTest, FpsTimeline) {
  Result<JobSpec> job = Parse(kHead);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->sampling.fps_timeline, pipeline::FpsTimeline::kAuto);
  EXPECT_NE(RenderResolvedJob(*job).find("\n  fps_timeline: auto\n"), std::string::npos);
  EXPECT_NE(FrameSettingsKey(*job).find("sampling.fps_timeline=auto\n"), std::string::npos);
  for (const char* name : {"auto", "index", "time"}) {
    job = Parse(kHead + "sampling:\n  fps_timeline: " + name + "\n");
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    EXPECT_STREQ(pipeline::FpsTimelineName(job->sampling.fps_timeline), name);
    EXPECT_TRUE(job->warnings.empty());
  }
  job = Parse(kHead + "sampling:\n  fps_timeline: tme\n");
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("'sampling.fps_timeline' must be one of auto, index, "
                                        "time; got 'tme' (did you mean 'time'?)"),
            std::string::npos)
      << job.status().message();
  job = Parse(kHead + "sampling:\n  policy: keyframes\n  fps_timeline: time\n");
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->warnings.size(), 1u);
  EXPECT_NE(job->warnings[0].find("'sampling.fps_timeline' has no effect with policy 'keyframes'"),
            std::string::npos);
  // Other policies do not hash it.
  JobSpec a = *Parse(kHead + "sampling:\n  policy: count\n");
  JobSpec b = *Parse(kHead + "sampling:\n  policy: count\n  fps_timeline: time\n");
  EXPECT_EQ(FrameSettingsKey(a), FrameSettingsKey(b));
}

// The settings of two jobs, compared through everything RenderResolvedJob shows.
void ExpectSameSettings(const JobSpec& a, const JobSpec& b) {
  EXPECT_EQ(RenderResolvedJob(a), RenderResolvedJob(b));
  EXPECT_EQ(FrameSettingsKey(a), FrameSettingsKey(b));
  EXPECT_EQ(a.sampling.fps, b.sampling.fps);
  EXPECT_EQ(a.sampling.fps_timeline, b.sampling.fps_timeline);
  EXPECT_EQ(a.sampling.start_s, b.sampling.start_s);
  EXPECT_EQ(a.sampling.end_s, b.sampling.end_s);
  EXPECT_EQ(a.sampling.timestamps, b.sampling.timestamps);
  EXPECT_EQ(a.model.temperature, b.model.temperature);
  EXPECT_EQ(a.model.endpoint, b.model.endpoint);
  EXPECT_EQ(a.model.seed, b.model.seed);
  EXPECT_EQ(a.limits.max_file_bytes, b.limits.max_file_bytes);
  ASSERT_EQ(a.prompts.size(), b.prompts.size());
  for (size_t i = 0; i < a.prompts.size(); ++i) {
    EXPECT_EQ(a.prompts[i].question, b.prompts[i].question);
    EXPECT_EQ(a.prompts[i].system, b.prompts[i].system);
  }
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    EXPECT_EQ(a.inputs[i].path, b.inputs[i].path);
    EXPECT_EQ(a.inputs[i].kind, b.inputs[i].kind);
  }
}

TEST(JobSpecTest, ResolvedRenderingRoundTrips) {
  const std::string odd_values = kHead +
                                 "sampling:\n  policy: timestamps\n  timestamps: [0.1, 2.5, "
                                 "\"1:00\"]\n  fps_epsilon: 0.00001\n  fps_timeline: time\n"
                                 "prompts:\n  - id: q\n    question: \"tab\\tquote\\\" ${"
                                 "EMPTY} $${lit} ünïcode\\nnew line\"\n";
  for (const std::string& text : {std::string(kCompleteJob), kHead, odd_values}) {
    Result<JobSpec> first = Parse(text);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    std::string rendered = RenderResolvedJob(*first);
    Result<JobSpec> second = Parse(rendered);
    ASSERT_TRUE(second.ok()) << second.status().ToString() << "\n" << rendered;
    ExpectSameSettings(*first, *second);
  }
}

// context.group (one question over several files, what `reel ask a.mp4 b.mp4 "q"` sets): rendered
// with the job, so the stored `ask` job keeps it (it was left out: `reel export --ask-db` then
// planned each file alone and wrote nothing); its entries must be files of `inputs`, not all.
TEST(JobSpecTest, AGroupOfInputsRoundTripsAndNamesOnlyInputs) {
  const std::string head = "name: demo\ninputs: [a.mp4, b.mp4, pic.png]\n";
  Result<JobSpec> job = Parse(head + "context:\n  group: [b.mp4, pic.png]\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->context.group, (std::vector<std::string>{"b.mp4", "pic.png"}));
  Result<JobSpec> again = Parse(RenderResolvedJob(*job));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->context.group, job->context.group);

  Result<JobSpec> stranger = Parse(head + "context:\n  group: [b.mp4, c.mp4]\n");
  ASSERT_FALSE(stranger.ok());
  EXPECT_NE(stranger.status().message().find("'context.group' lists 'c.mp4', which is not a file "
                                             "of 'inputs'"),
            std::string::npos)
      << stranger.status().message();
  Result<JobSpec> everyone = Parse(head + "context:\n  group: [a.mp4, b.mp4, pic.png]\n");
  ASSERT_FALSE(everyone.ok());
  EXPECT_NE(everyone.status().message().find("lists every input"), std::string::npos)
      << everyone.status().message();
}

TEST(JobSpecTest, FrameSettingsKeyFollowsOnlyFrameSettings) {
  JobSpec base = *Parse(kHead + "prompts:\n  - {id: q, question: \"A?\"}\n");
  std::string key = FrameSettingsKey(base);
  EXPECT_TRUE(key.starts_with("reel-frame-settings/1\n")) << key;

  JobSpec other_prompts = *Parse(kHead +
                                 "prompts:\n  - {id: r, question: \"B?\"}\n"
                                 "model:\n  temperature: 0.2\n  endpoint: http://x\n");
  EXPECT_EQ(FrameSettingsKey(other_prompts), key);

  JobSpec unused_count = *Parse(kHead + "sampling:\n  count: 99\n");  // policy fps ignores it
  EXPECT_EQ(FrameSettingsKey(unused_count), key);

  for (const std::string& change :
       {std::string("sampling:\n  fps: 2\n"), std::string("sampling:\n  policy: count\n"),
        std::string("sampling:\n  max_frames: 10\n"), std::string("sampling:\n  start: 5\n"),
        std::string("resize:\n  max_pixels: 401408\n"), std::string("resize:\n  mode: none\n"),
        std::string("resize:\n  shape: storage\n"),
        std::string("limits:\n  max_decode_error_rate: 0.2\n"),
        std::string("sampling:\n  fps_timeline: index\n"),
        std::string("sampling:\n  fps_timeline: time\n")}) {
    SCOPED_TRACE(change);
    Result<JobSpec> changed = Parse(kHead + change);
    ASSERT_TRUE(changed.ok()) << changed.status().ToString();
    EXPECT_NE(FrameSettingsKey(*changed), key);
  }
}

TEST(JobValuesTest, Scalars) {
  EXPECT_EQ(ParseSeconds("90"), 90.0);
  EXPECT_EQ(ParseSeconds("1.5"), 1.5);
  EXPECT_EQ(ParseSeconds("500ms"), 0.5);
  EXPECT_EQ(ParseSeconds("90s"), 90.0);
  EXPECT_EQ(ParseSeconds("5m"), 300.0);
  EXPECT_EQ(ParseSeconds("2 h"), 7200.0);
  EXPECT_EQ(ParseSeconds("1:30"), 90.0);
  EXPECT_EQ(ParseSeconds("01:02:03.5"), 3723.5);
  EXPECT_FALSE(ParseSeconds("1:75").has_value());
  EXPECT_FALSE(ParseSeconds("soon").has_value());

  EXPECT_EQ(ParseByteSize("1048576"), 1048576);
  EXPECT_EQ(ParseByteSize("2GiB"), int64_t{2} << 30);
  EXPECT_EQ(ParseByteSize("500 MB"), 500000000);
  EXPECT_EQ(ParseByteSize("1.5kib"), 1536);
  EXPECT_FALSE(ParseByteSize("2 GB/s").has_value());
  EXPECT_FALSE(ParseByteSize("99999999TiB").has_value());
  EXPECT_EQ(FormatByteSize(int64_t{8} << 30), "8 GiB");
  EXPECT_EQ(FormatByteSize(1000), "1000 B");

  EXPECT_EQ(ParseInteger("-3"), -3);
  EXPECT_FALSE(ParseInteger("3.0").has_value());
  EXPECT_FALSE(ParseNumber("nan").has_value());
  EXPECT_EQ(ParseBool("Yes"), true);
  EXPECT_EQ(FormatNumber(0.95), "0.95");
  EXPECT_EQ(FormatNumber(1), "1");
  EXPECT_EQ(ParseNumber(FormatNumber(0.1 + 0.2)), 0.1 + 0.2);
}

TEST(JobValuesTest, SuggestionsAndVariables) {
  EXPECT_EQ(EditDistance("smapling", "sampling"), 1);
  EXPECT_EQ(ClosestName("sampeling", {"name", "sampling", "resize"}), "sampling");
  EXPECT_EQ(ClosestName("Model", {"name", "model"}), "model");
  EXPECT_EQ(ClosestName("colour", {"name", "model"}), "");

  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "A") return std::string("1");
    return std::nullopt;
  };
  EXPECT_EQ(ExpandVariables("x${A}y${B:-2}z$", env).value(), "x1y2z$");
  EXPECT_EQ(ExpandVariables("$${A}", env).value(), "${A}");
  EXPECT_EQ(ExpandVariables(EscapeVariables("a ${b} $${c}"), env).value(), "a ${b} $${c}");
  Result<std::string> unset = ExpandVariables("${B}", env);
  ASSERT_FALSE(unset.ok());
  EXPECT_NE(unset.status().message().find("'B' is not set"), std::string::npos);
  EXPECT_FALSE(ExpandVariables("${1x}", env).ok());
}

void Touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "x";
}

class ExpandInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("ExpandInputsTest");
    for (const char* name :
         {"a.mp4", "b.MOV", "sub/c.mkv", "sub/deep/d.png", "sub/deep/e.mp4", "notes.txt",
          "talk.en.srt", "talk.vtt", ".hidden.mp4", ".cache/f.mp4", "data.bin", "photo.jpeg"}) {
      Touch(fs::path(dir_) / name);
    }
  }

  JobSpec Job(const std::string& inputs) {
    Result<JobSpec> job = ParseJobText("name: t\ninputs:\n" + inputs, "job.yaml", dir_);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : JobSpec{};
  }

  // Paths relative to the scratch dir, with kinds, "path:kind".
  std::vector<std::string> Expand(const std::string& inputs,
                                  std::vector<std::string>* warnings = nullptr) {
    Result<std::vector<InputFile>> files = ExpandInputs(Job(inputs), warnings);
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    std::vector<std::string> out;
    if (!files.ok()) return out;
    for (const InputFile& f : *files) {
      out.push_back(fs::path(f.path).lexically_relative(dir_).string() + ":" +
                    InputKindName(f.kind));
    }
    return out;
  }

  std::string dir_;
};

using Strings = std::vector<std::string>;

TEST_F(ExpandInputsTest, GlobsAndKinds) {
  EXPECT_EQ(Expand("  - \"*.mp4\"\n"), Strings({"a.mp4:video"}));  // hidden files skipped
  EXPECT_EQ(Expand("  - \"**/*.mp4\"\n"), Strings({"a.mp4:video", "sub/deep/e.mp4:video"}));
  EXPECT_EQ(Expand("  - \"sub/**\"\n"),
            Strings({"sub/c.mkv:video", "sub/deep/d.png:image", "sub/deep/e.mp4:video"}));
  EXPECT_EQ(Expand("  - sub\n"), Expand("  - \"sub/**\"\n"));  // a directory: all below it
  EXPECT_EQ(Expand("  - \"sub/**/d.png\"\n"), Strings({"sub/deep/d.png:image"}));
  EXPECT_EQ(Expand("  - \"s?b/*/?.*\"\n"),
            Strings({"sub/deep/d.png:image", "sub/deep/e.mp4:video"}));
  EXPECT_EQ(Expand("  - \".*/*.mp4\"\n"), Strings({".cache/f.mp4:video"}));
  EXPECT_EQ(Expand("  - \"t*\"\n  - notes.txt\n  - photo.jpeg\n  - b.MOV\n"),
            Strings({"b.MOV:video", "notes.txt:document", "photo.jpeg:image",
                     "talk.en.srt:subtitle", "talk.vtt:subtitle"}));
  EXPECT_EQ(Expand("  - " + dir_ + "/a.mp4\n"), Strings({"a.mp4:video"}));  // absolute
}

TEST_F(ExpandInputsTest, SortedDeduplicatedFirstKindWins) {
  EXPECT_EQ(Expand("  - {path: a.mp4, kind: document}\n  - \"*.mp4\"\n  - a.mp4\n"),
            Strings({"a.mp4:document"}));
  EXPECT_EQ(
      Expand("  - \"sub/**\"\n  - \"**/*.mp4\"\n  - ./sub/../a.mp4\n"),
      Strings({"a.mp4:video", "sub/c.mkv:video", "sub/deep/d.png:image", "sub/deep/e.mp4:video"}));
}

TEST_F(ExpandInputsTest, WarningsAndErrors) {
  std::vector<std::string> warnings;
  EXPECT_EQ(Expand("  - a.mp4\n  - \"*.mkv\"\n", &warnings), Strings({"a.mp4:video"}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "job.yaml:4:5: '*.mkv' matches no files");

  warnings.clear();
  EXPECT_EQ(Expand("  - \"d*\"\n", &warnings), Strings());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("skipped 1 file of unknown kind"), std::string::npos) << warnings[0];
  EXPECT_EQ(Expand("  - {path: data.bin, kind: document}\n"), Strings({"data.bin:document"}));

  Result<std::vector<InputFile>> missing =
      ExpandInputs(Job("  - a.mp4\n  - gone.mp4\n  - also/gone.mkv\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  std::vector<std::string> lines = Lines(missing.status().message());
  ASSERT_EQ(lines.size(), 2u) << missing.status().message();
  EXPECT_TRUE(lines[0].starts_with("job.yaml:4:5: input 'gone.mp4' does not exist")) << lines[0];
  EXPECT_TRUE(lines[1].starts_with("job.yaml:5:5: input 'also/gone.mkv' does not exist"))
      << lines[1];

  Result<std::vector<InputFile>> unknown = ExpandInputs(Job("  - data.bin\n"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("cannot tell the kind of 'data.bin'"),
            std::string::npos);

  Result<std::vector<InputFile>> too_many = ExpandInputs(Job("  - \"**/*.mp4\"\n"), nullptr, 1);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().code(), ErrorCode::kLimitExceeded);
}

// Consecutive `**` were tried in every split of the path between them: exponential in the
// depth. Now they are one, and each (directory, component) is visited once: the walk of a
// 30-level tree lists each directory a few times, whatever the pattern.
TEST_F(ExpandInputsTest, RepeatedDoubleStarsWalkEachDirectoryOnce) {
  std::string deep = "tree";
  for (int i = 0; i < 30; ++i) deep += "/d" + std::to_string(i);
  Touch(fs::path(dir_) / deep / "end.mp4");
  Touch(fs::path(dir_) / "tree/d0/top.mp4");
  const Strings both = {deep + "/end.mp4:video", "tree/d0/top.mp4:video"};
  for (const char* pattern : {"tree/**/*.mp4", "tree/**/**/**/**/**/*.mp4",
                              "tree/**/*/**/*/**/*.mp4", "tree/**/**/d0/**/**/*.mp4"}) {
    SCOPED_TRACE(pattern);
    std::vector<std::string> warnings;
    // 31 directories; each is listed at most once per pattern component.
    Result<std::vector<InputFile>> files =
        ExpandInputs(Job("  - \"" + std::string(pattern) + "\"\n"), &warnings, 1000, 31 * 6);
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    Strings got;
    for (const InputFile& f : *files) {
      got.push_back(fs::path(f.path).lexically_relative(dir_).string() + ":" +
                    InputKindName(f.kind));
    }
    if (std::string(pattern).find("/*/") != std::string::npos) {
      EXPECT_EQ(got, Strings({deep + "/end.mp4:video"}));  // needs two levels below tree
    } else {
      EXPECT_EQ(got, both);
    }
  }
  // The walk is bounded: past the limit, an error naming the entry, not an endless walk.
  Result<std::vector<InputFile>> bounded =
      ExpandInputs(Job("  - \"tree/**/*.mp4\"\n"), nullptr, 1000, 10);
  ASSERT_FALSE(bounded.ok());
  EXPECT_EQ(bounded.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(bounded.status().message().find(
                "job.yaml:3:5: listing 'tree/**/*.mp4' reads more than 10 directories"),
            std::string::npos)
      << bounded.status().message();
}

// A glob that finds a video and its side-car subtitles lists the video only: its item reads the
// side-cars (they were stored twice: as the video's and as an item of their own).
TEST_F(ExpandInputsTest, SidecarSubtitlesGoWithTheirVideo) {
  for (const char* name : {"cars/clip.mp4", "cars/clip.srt", "cars/clip.en.vtt", "cars/lone.srt",
                           "cars/clipper.srt", "cars/other/clip.srt"}) {
    Touch(fs::path(dir_) / name);
  }
  EXPECT_EQ(Expand("  - cars\n"),
            Strings({"cars/clip.mp4:video", "cars/clipper.srt:subtitle", "cars/lone.srt:subtitle",
                     "cars/other/clip.srt:subtitle"}));
  EXPECT_EQ(Expand("  - \"cars/clip.*\"\n"), Strings({"cars/clip.mp4:video"}));
  std::vector<std::string> warnings;
  EXPECT_EQ(Expand("  - cars/clip.srt\n  - cars/clip.mp4\n", &warnings),
            Strings({"cars/clip.mp4:video"}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cars/clip.srt: read as a side-car subtitle of '"), std::string::npos)
      << warnings[0];
  // Without the video, the subtitles are items.
  EXPECT_EQ(
      Expand("  - cars/*.srt\n"),
      Strings({"cars/clip.srt:subtitle", "cars/clipper.srt:subtitle", "cars/lone.srt:subtitle"}));
}

// The "skipped files of unknown kind" warning named files another entry took in with a kind.
TEST_F(ExpandInputsTest, UnknownKindWarningLeavesOutFilesTakenByAnotherEntry) {
  Touch(fs::path(dir_) / "mixed/anim.xyz");
  Touch(fs::path(dir_) / "mixed/v.mp4");
  std::vector<std::string> warnings;
  EXPECT_EQ(Expand("  - mixed\n  - {path: mixed/anim.xyz, kind: video}\n", &warnings),
            Strings({"mixed/anim.xyz:video", "mixed/v.mp4:video"}));
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  Touch(fs::path(dir_) / "mixed/other.xyz");
  EXPECT_EQ(Expand("  - mixed\n  - {path: mixed/anim.xyz, kind: video}\n", &warnings).size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("skipped 1 file of unknown kind under 'mixed' (e.g. '" + dir_ +
                             "/mixed/other.xyz')"),
            std::string::npos)
      << warnings[0];
}

// Audio files are items of kind audio, found by folders and globs; a side-car .srt of one is read
// with it (not an item of its own); .ogv stays a video.
TEST_F(ExpandInputsTest, AudioFilesAreItemsAndKeepTheirSideCarSubtitles) {
  for (const char* name :
       {"pod/ep1.mp3", "pod/ep1.srt", "pod/ep2.M4A", "pod/meeting.wav", "pod/lecture.flac",
        "pod/song.ogg", "pod/voice.opus", "pod/raw.aac", "pod/clip.ogv"}) {
    Touch(fs::path(dir_) / name);
  }
  std::vector<std::string> warnings;
  EXPECT_EQ(Expand("  - pod\n", &warnings),
            Strings({"pod/clip.ogv:video", "pod/ep1.mp3:audio", "pod/ep2.M4A:audio",
                     "pod/lecture.flac:audio", "pod/meeting.wav:audio", "pod/raw.aac:audio",
                     "pod/song.ogg:audio", "pod/voice.opus:audio"}));
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(Expand("  - \"pod/*.mp3\"\n  - {path: pod/raw.aac, kind: audio}\n"),
            Strings({"pod/ep1.mp3:audio", "pod/raw.aac:audio"}));
}

TEST(GuessInputKindTest, ByExtension) {
  EXPECT_EQ(GuessInputKind("a/b.MP4"), InputKind::kVideo);
  EXPECT_EQ(GuessInputKind("x.webm"), InputKind::kVideo);
  EXPECT_EQ(GuessInputKind("x.jpg"), InputKind::kImage);
  EXPECT_EQ(GuessInputKind("x.md"), InputKind::kDocument);
  EXPECT_EQ(GuessInputKind("x.txt"), InputKind::kDocument);
  EXPECT_EQ(GuessInputKind("x.srt"), InputKind::kSubtitle);
  EXPECT_EQ(GuessInputKind("x.vtt"), InputKind::kSubtitle);
  // Animated GIFs and MPEG elementary / DVD streams are videos (FFmpeg reads them all).
  for (const char* name : {"a.gif", "a.GIF", "a.mpv", "a.m1v", "a.m2v", "a.vob"}) {
    EXPECT_EQ(GuessInputKind(name), InputKind::kVideo) << name;
  }
  for (const char* name :
       {"a.mp3", "a.M4A", "a.aac", "a.wav", "a.flac", "a.ogg", "a.oga", "a.opus"}) {
    EXPECT_EQ(GuessInputKind(name), InputKind::kAudio) << name;
  }
  EXPECT_STREQ(InputKindName(InputKind::kAudio), "audio");
  EXPECT_EQ(GuessInputKind("x.bin"), InputKind::kAuto);
  EXPECT_EQ(GuessInputKind("README"), InputKind::kAuto);
}

TEST(LoadJobFileTest, ReadsFileResolvesBaseDirAndReportsMissing) {
  std::string dir = testing::ScratchDir("LoadJobFileTest");
  ASSERT_TRUE(WriteFileAtomically(dir + "/j.yaml", kHead).ok());
  Result<JobSpec> job = LoadJobFile(dir + "/j.yaml");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->base_dir, fs::path(dir).lexically_normal().string());
  EXPECT_EQ(ResolveJobPath(job->base_dir, job->storage.database), dir + "/demo.db");

  Result<JobSpec> missing = LoadJobFile(dir + "/nope.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);

  ASSERT_TRUE(WriteFileAtomically(dir + "/big.yaml", std::string((1 << 20) + 1, '#')).ok());
  Result<JobSpec> big = LoadJobFile(dir + "/big.yaml");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(big.status().message(), dir +
                                        "/big.yaml:1:1048577: the job file is 1048577 bytes, over "
                                        "the limit of 1048576 bytes (1 MiB); the limit falls here")
      << big.status().message();
  // A device or a pipe has no size: read only up to the limit (this never ended before).
  Result<JobSpec> endless = LoadJobFile("/dev/zero");
  ASSERT_FALSE(endless.ok());
  EXPECT_NE(endless.status().message().find("/dev/zero:1:1048577: the job file is more than "
                                            "1048576 bytes"),
            std::string::npos)
      << endless.status().message();

  ASSERT_TRUE(WriteFileAtomically(dir + "/bad.yaml", "name: x\ninputs: [a.mp4]\nfps: 1\n").ok());
  Result<JobSpec> bad = LoadJobFile(dir + "/bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().message().starts_with(dir + "/bad.yaml:3:1: unknown key 'fps'"))
      << bad.status().message();
}

TEST(ExamplesTest, ShippedExamplesValidate) {
  for (const char* name : {"job.yaml", "quickstart.yaml"}) {
    SCOPED_TRACE(name);
    std::string path = std::string(REEL_SOURCE_DIR) + "/examples/" + name;
    Result<JobSpec> job = LoadJobFile(path, TestOptions());
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    EXPECT_FALSE(job->prompts.empty());
    Result<JobSpec> again =
        ParseJobText(RenderResolvedJob(*job), job->source, job->base_dir, TestOptions());
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    ExpectSameSettings(*job, *again);
  }
  Result<JobSpec> quickstart =
      LoadJobFile(std::string(REEL_SOURCE_DIR) + "/examples/quickstart.yaml", TestOptions());
  ASSERT_TRUE(quickstart.ok());
  ASSERT_EQ(quickstart->inputs.size(), 3u);
  EXPECT_EQ(quickstart->inputs[0].path, "media/*.mp4");
  EXPECT_EQ(quickstart->inputs[2].path, "media/notes.md");
  // The media come from examples/make-sample-media.sh; without them, the error names the note.
  Result<std::vector<InputFile>> files = ExpandInputs(*quickstart);
  if (fs::exists(std::string(REEL_SOURCE_DIR) + "/examples/media/notes.md")) {
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    int videos = 0, documents = 0;
    for (const InputFile& f : *files) {
      videos += f.kind == InputKind::kVideo;
      documents += f.kind == InputKind::kDocument;
    }
    EXPECT_GE(videos, 1);
    EXPECT_EQ(documents, 1);
  } else {
    ASSERT_FALSE(files.ok());
    EXPECT_EQ(files.status().code(), ErrorCode::kNotFound);
    EXPECT_NE(files.status().message().find("media/notes.md"), std::string::npos)
        << files.status().message();
  }
}

}  // namespace
}  // namespace reel::jobs

namespace reel::jobs {
namespace {

TEST(JobSpecTest, SpeechSectionParsesChecksAndRoundTrips) {
  Result<JobSpec> off = ParseJobText(kHead, "job.yaml", "/jobs");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->speech.enabled);
  EXPECT_EQ(SpeechSettingsKey(*off, "abc"), "") << "off: no key";
  // Audio items are transcribed all the same, with the section's settings: the key a video gets
  // with speech on.
  EXPECT_FALSE(TranscribesSpeech(*off, false));
  EXPECT_TRUE(TranscribesSpeech(*off, true));
  EXPECT_EQ(ItemSpeechSettingsKey(*off, false, "abc"), "");
  JobSpec on = *off;
  on.speech.enabled = true;
  EXPECT_NE(ItemSpeechSettingsKey(*off, true, "abc"), "");
  EXPECT_EQ(ItemSpeechSettingsKey(*off, true, "abc"), SpeechSettingsKey(on, "abc"));

  const std::string server = kHead +
                             "speech:\n  enabled: true\n  endpoint: http://gpu:8001/v1/\n"
                             "  model: openai/whisper-large-v3\n  language: German\n"
                             "  prefer: both\n  max_chunk: 20\n  concurrency: 8\n";
  Result<JobSpec> job = ParseJobText(server, "job.yaml", "/jobs");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->speech.endpoint.value_or(""), "http://gpu:8001/v1");
  EXPECT_EQ(SpeechBackendOf(job->speech), "openai");
  EXPECT_EQ(job->speech.prefer, SpeechPrefer::kBoth);
  EXPECT_EQ(job->speech.max_chunk_s, 20);
  Result<JobSpec> again = ParseJobText(RenderResolvedJob(*job), "job.yaml", "/jobs");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(RenderResolvedJob(*again), RenderResolvedJob(*job));
  EXPECT_EQ(SpeechSettingsKey(*again, "abc"), SpeechSettingsKey(*job, "abc"));

  // The key follows what changes a transcript, not where it is made or how contexts use it.
  JobSpec other = *job;
  other.speech.endpoint = "http://elsewhere:9000/v1";
  other.speech.prefer = SpeechPrefer::kSpeech;
  other.speech.concurrency = 1;
  EXPECT_EQ(SpeechSettingsKey(other, "abc"), SpeechSettingsKey(*job, "abc"));
  other.speech.language = "fr";
  EXPECT_NE(SpeechSettingsKey(other, "abc"), SpeechSettingsKey(*job, "abc"));
  EXPECT_NE(SpeechSettingsKey(*job, "abd"), SpeechSettingsKey(*job, "abc"));
  other = *job;
  other.sampling.start_s = 10;
  EXPECT_NE(SpeechSettingsKey(other, "abc"), SpeechSettingsKey(*job, "abc"));

  struct Bad {
    std::string yaml;
    std::string message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"speech:\n  enabled: true\n  language: de\n", "PocketSphinx"},
           {"speech:\n  enabled: true\n  backend: openai\n", "'speech.endpoint' is not set"},
           {"speech:\n  backend: whisper\n", "'speech.backend' must be one of"},
           {"speech:\n  language: klingon\n", "names no language"},
           {"speech:\n  prefer: subtitle\n", "subtitles"},
           {"speech:\n  api_key_env: sk-12345\n", "NAME of an environment variable"},
           {"speech:\n  enabeld: true\n", "enabled"},
       }) {
    Result<JobSpec> parsed = ParseJobText(kHead + bad.yaml, "job.yaml", "/jobs");
    ASSERT_FALSE(parsed.ok()) << bad.yaml;
    EXPECT_NE(parsed.status().message().find(bad.message), std::string::npos)
        << bad.yaml << parsed.status().message();
    EXPECT_EQ(parsed.status().message().find("sk-12345"), std::string::npos);
  }
}

TEST(DocumentsSectionTest, ParsesRendersBackAndKeysTheDocumentItems) {
  Result<JobSpec> job = ParseJobText(
      "name: d\ninputs: [a.pdf]\ndocuments:\n  pages: text\n  page_range: 3-9\n  max_pages: 50\n"
      "  ocr: false\n  ocr_languages: eng+deu\n  ocr_dpi: 200\n  dpi: 100\n"
      "  office_render: true\n",
      "job.yaml", "/jobs");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const DocumentsSpec& d = job->documents;
  EXPECT_EQ(d.pages, DocumentPages::kText);
  EXPECT_EQ(d.first_page, 3);
  EXPECT_EQ(d.last_page, 9);
  EXPECT_EQ(d.max_pages, 50);
  EXPECT_FALSE(d.ocr);
  EXPECT_EQ(d.ocr_languages, (std::vector<std::string>{"eng", "deu"}));
  EXPECT_EQ(d.ocr_dpi, 200);
  EXPECT_EQ(d.dpi, 100);
  EXPECT_TRUE(d.office_render);
  Result<JobSpec> again = ParseJobText(RenderResolvedJob(*job), "job.yaml", "/jobs");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(DocumentSettingsKey(*again), DocumentSettingsKey(*job));
  EXPECT_EQ(again->documents.ocr_languages, d.ocr_languages);
  EXPECT_EQ(again->documents.office_render, true);
  // The defaults: text and pictures of every page, OCR in English.
  Result<JobSpec> plain = ParseJobText("name: d\ninputs: [a.pdf]\n", "job.yaml", "/jobs");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->documents.pages, DocumentPages::kBoth);
  EXPECT_EQ(plain->documents.first_page, 1);
  EXPECT_EQ(plain->documents.last_page, 0);
  EXPECT_TRUE(plain->documents.ocr);
  EXPECT_NE(DocumentSettingsKey(*plain), DocumentSettingsKey(*job));
  // The key follows what changes a document's pages: not the sampling, but the still-image size
  // while pictures are on.
  JobSpec sampled = *plain;
  sampled.sampling.fps = 7;
  EXPECT_EQ(DocumentSettingsKey(sampled), DocumentSettingsKey(*plain));
  JobSpec smaller = *plain;
  smaller.resize.image_max_pixels = 200704;
  EXPECT_NE(DocumentSettingsKey(smaller), DocumentSettingsKey(*plain));
}

TEST(DocumentsSectionTest, BadValuesAreErrorsWithTheirPlace) {
  Result<JobSpec> job = ParseJobText(
      "name: d\ninputs: [a.pdf]\ndocuments:\n  pages: pictures\n  page_range: 5-2\n"
      "  first_page: 1\n  ocr_languages: \"eng+$\"\n  dpi: 5\n  max_page: 3\n",
      "job.yaml", "/jobs");
  ASSERT_FALSE(job.ok());
  const std::string m = job.status().message();
  EXPECT_NE(m.find("job.yaml:4:10: 'documents.pages' must be one of"), std::string::npos) << m;
  EXPECT_NE(m.find("job.yaml:5:15: 'documents.page_range' must be N, N-M or N-"), std::string::npos)
      << m;
  EXPECT_NE(m.find("not both"), std::string::npos) << m;
  EXPECT_NE(m.find("'$' is not a Tesseract language name"), std::string::npos) << m;
  EXPECT_NE(m.find("'documents.dpi'"), std::string::npos) << m;
  EXPECT_NE(m.find("max_page"), std::string::npos) << m;
  EXPECT_NE(m.find("max_pages"), std::string::npos) << "a did-you-mean: " << m;
}

TEST(DocumentsSectionTest, DocumentExtensionsAreDocumentsAndAVideosDeckIsItsSideCar) {
  for (const char* name : {"a.pdf", "b.HTML", "c.htm", "d.xhtml", "e.epub", "f.docx", "g.pptx",
                           "h.odt", "i.odp", "j.txt", "k.md"}) {
    EXPECT_EQ(GuessInputKind(name), InputKind::kDocument) << name;
  }
  EXPECT_TRUE(IsPagedDocument("/x/a.pdf"));
  EXPECT_FALSE(IsPagedDocument("/x/notes.md"));
  EXPECT_TRUE(IsDocumentPageSource("pdf"));
  EXPECT_TRUE(IsDocumentPageSource("slides:talk.pdf"));
  EXPECT_FALSE(IsDocumentPageSource("document"));
  EXPECT_FALSE(IsDocumentPageSource("subtitle:0"));

  const std::string dir = ::testing::TempDir() + "/sidecar_documents";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/media");
  for (const char* name : {"talk.mp4", "talk.pdf", "talk.pptx", "report.pdf", "talk.notes.pdf"}) {
    std::ofstream(dir + "/media/" + name) << "x";
  }
  Result<JobSpec> job = ParseJobText("name: d\ninputs: [media/talk.pdf, media]\n", "job.yaml", dir);
  ASSERT_TRUE(job.ok());
  std::vector<std::string> warnings;
  Result<std::vector<InputFile>> files = ExpandInputs(*job, &warnings);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  std::vector<std::string> got;
  for (const InputFile& f : *files) {
    got.push_back(std::filesystem::path(f.path).filename().string() + ":" + InputKindName(f.kind));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"report.pdf:document", "talk.mp4:video",
                                           "talk.notes.pdf:document"}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("talk.pdf: read as a side-car document of '"), std::string::npos)
      << warnings[0];
  EXPECT_EQ(FindSidecarDocuments(dir + "/media/talk.mp4"),
            (std::vector<std::string>{dir + "/media/talk.pdf", dir + "/media/talk.pptx"}));
}

// A video's side-car subtitles: <stem>.srt|vtt or <stem>.<anything>.srt|vtt (any case) in its
// own directory, sorted; not another video's (clipper.srt), not a directory, not a subfolder's.
TEST(FindSidecarSubtitlesTest, TakesTheSubtitlesNamedAfterTheVideo) {
  const std::string dir = ::testing::TempDir() + "/sidecar_subtitles";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/cars/other");
  std::filesystem::create_directories(dir + "/cars/clip.dir.srt");
  for (const char* name : {"clip.mp4", "clip.srt", "clip.en.VTT", "clipper.srt", "clip.pdf",
                           "lone.srt", "other/clip.srt"}) {
    std::ofstream(dir + "/cars/" + name) << "x";
  }
  EXPECT_EQ(FindSidecarSubtitles(dir + "/cars/clip.mp4"),
            (std::vector<std::string>{dir + "/cars/clip.en.VTT", dir + "/cars/clip.srt"}));
  EXPECT_TRUE(FindSidecarSubtitles(dir + "/none/clip.mp4").empty());
}

}  // namespace
}  // namespace reel::jobs
