// The model settings of a job: the new job-file keys, custom ids (stable, unique, changed by
// what changes the answer), the re-fit margin, and the run report's arithmetic.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "jobs/model/request_setup.h"
#include "jobs/model/usage_report.h"
#include "jobs/spec/job_spec.h"

namespace reel::jobs {
namespace {

JobSpec ParseModelJob(const std::string& text) {
  auto job = ParseJobText(text, "job.yaml", "/jobs");
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? *job : JobSpec{};
}

constexpr char kJob[] = R"(name: j
inputs: [a.mp4]
model:
  endpoint: http://localhost:8000/v1
  dialect: sglang
  stream: true
  verify_tokens: true
  requests_per_minute: 60
  tokens_per_minute: 1e6
  circuit_give_up: 5m
  jpeg_quality: 85
  reduce_question: Combine the parts.
  price: {input_per_million: 0.3, cached_input_per_million: 0.03, output_per_million: 1.2,
          gpu_hour: 2.5, gpus: 8}
prompts:
  - id: count
    question: How many?
    json_schema: {type: object, properties: {n: {type: integer, minimum: 0}}, required: [n]}
    reduce: Add the counts.
  - id: file
    question: What?
    json_schema: schemas/what.json
  - id: text
    question: Why?
    json_schema: '{"type": "string"}'
)";

TEST(ModelSettingsTest, JobFileKeysParseAndRenderBack) {
  JobSpec job = ParseModelJob(kJob);
  const ModelSpec& m = job.model;
  EXPECT_EQ(m.dialect, "sglang");
  EXPECT_TRUE(m.stream);
  EXPECT_TRUE(m.verify_tokens);
  EXPECT_EQ(m.requests_per_minute, 60);
  EXPECT_EQ(m.tokens_per_minute, 1e6);
  EXPECT_EQ(m.circuit_give_up_s, 300);
  EXPECT_EQ(m.jpeg_quality, 85);
  EXPECT_EQ(m.reduce_question, "Combine the parts.");
  EXPECT_EQ(m.price_cached_input_per_million, 0.03);
  EXPECT_EQ(m.gpus, 8);
  ASSERT_EQ(job.prompts.size(), 3u);
  // Inline schemas become compact JSON in their own key order; a file name is read at run time.
  EXPECT_EQ(job.prompts[0].json_schema,
            R"({"type":"object","properties":{"n":{"type":"integer","minimum":0}},)"
            R"("required":["n"]})");
  EXPECT_EQ(job.prompts[0].reduce, "Add the counts.");
  EXPECT_EQ(job.prompts[1].json_schema_file, "schemas/what.json");
  EXPECT_EQ(job.prompts[2].json_schema, R"({"type":"string"})");
  // `reel validate` output parses back to the same settings.
  JobSpec again = ParseModelJob(RenderResolvedJob(job));
  EXPECT_EQ(RenderResolvedJob(again), RenderResolvedJob(job));
  EXPECT_EQ(again.prompts[0].json_schema, job.prompts[0].json_schema);
  EXPECT_EQ(again.prompts[1].json_schema_file, "schemas/what.json");
}

TEST(ModelSettingsTest, BadValuesAreNamed) {
  auto bad = ParseJobText(
      "name: j\ninputs: [a.mp4]\nmodel:\n  dialect: tgi\n  jpeg_quality: 0\n  price: {gpus: 0}\n"
      "prompts:\n  - id: p\n    question: q\n    json_schema: {$ref: '#/nowhere'}\n",
      "job.yaml", "");
  ASSERT_FALSE(bad.ok());
  const std::string& m = bad.status().message();
  EXPECT_NE(m.find("'model.dialect' must be one of 'auto', 'vllm', 'sglang', 'openai'"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("jpeg_quality"), std::string::npos) << m;
  EXPECT_NE(m.find("model.price.gpus"), std::string::npos) << m;
  EXPECT_NE(m.find("prompts[0].json_schema"), std::string::npos) << m;
}

TEST(CustomIdTest, StableUniqueAndChangedByWhatChangesTheAnswer) {
  JobSpec job = ParseModelJob(kJob);
  const PromptSpec& p = job.prompts[0];
  const std::string s = job.prompts[0].json_schema;
  auto id = [&](const JobSpec& j, const std::string& item, const std::string& key,
                storage::TaskStep step,
                int64_t segment) { return CustomId(j, item, j.prompts[0], s, key, step, segment); };
  const std::string base = id(job, "a.mp4", "k", storage::TaskStep::kAsk, 0);
  EXPECT_EQ(base, id(job, "a.mp4", "k", storage::TaskStep::kAsk, 0));
  EXPECT_EQ(base.rfind("reel-", 0), 0u);
  EXPECT_EQ(base.size(), 5u + 32u);
  std::set<std::string> ids = {
      base,
      id(job, "b.mp4", "k", storage::TaskStep::kAsk, 0),
      id(job, "a.mp4", "k2", storage::TaskStep::kAsk, 0),
      id(job, "a.mp4", "k", storage::TaskStep::kMap, 0),
      id(job, "a.mp4", "k", storage::TaskStep::kMap, 1),
      id(job, "a.mp4", "k", storage::TaskStep::kReduce, 0),
      CustomId(job, "a.mp4", job.prompts[1], "", "k", storage::TaskStep::kAsk, 0)};
  JobSpec hotter = job;
  hotter.model.temperature = 0.2;
  ids.insert(id(hotter, "a.mp4", "k", storage::TaskStep::kAsk, 0));
  JobSpec other_reduce = job;
  other_reduce.prompts[0].reduce = "Sum them.";
  EXPECT_EQ(id(other_reduce, "a.mp4", "k", storage::TaskStep::kAsk, 0), base);
  ids.insert(id(other_reduce, "a.mp4", "k", storage::TaskStep::kReduce, 0));
  EXPECT_EQ(ids.size(), 9u);
  // What does not change the answer does not change the id.
  JobSpec streamed = job;
  streamed.model.stream = false;
  streamed.model.concurrency = 64;
  streamed.model.endpoint = "http://elsewhere:8000/v1";
  EXPECT_EQ(id(streamed, "a.mp4", "k", storage::TaskStep::kAsk, 0), base);
  (void)p;
}

TEST(CustomIdTest, ReduceQuestionAndRefitMargin) {
  JobSpec job = ParseModelJob(kJob);
  EXPECT_EQ(ReduceQuestion(job, job.prompts[0], "How many?", 3), "Add the counts.");
  EXPECT_EQ(ReduceQuestion(job, job.prompts[1], "What?", 3), "Combine the parts.");
  job.model.reduce_question.clear();
  const std::string built_in = ReduceQuestion(job, job.prompts[1], "What?", 3);
  EXPECT_NE(built_in.find("in 3 consecutive parts"), std::string::npos);
  EXPECT_TRUE(built_in.ends_with("Using them, answer: What?")) << built_in;
  storage::TaskRecord t;
  t.local_prompt_tokens = 1000;
  t.last_too_long_tokens = 1100;  // the server counts 100 more
  EXPECT_EQ(RefitMargin(t), 100 + 128);
  t.last_too_long_output = 500;
  t.last_too_long_window = 1300;  // 1100 + 500 overflows a 1300 window by 300
  EXPECT_EQ(RefitMargin(t), 300 + 128);
  storage::TaskRecord unknown;
  unknown.local_prompt_tokens = 10000;
  EXPECT_EQ(RefitMargin(unknown), 500 + 128);  // no numbers: 5% of ours
}

TEST(RunReportTest, PercentilesTokensRatesAndCost) {
  EXPECT_FALSE(Percentile({}, 99));
  std::vector<double> v;
  for (int i = 1; i <= 200; ++i) v.push_back(i);
  EXPECT_EQ(Percentile(v, 99), 198);
  EXPECT_EQ(Percentile(v, 50), 100);
  EXPECT_EQ(Percentile({3.0}, 99), 3.0);
  storage::SendTotals t;
  t.sends = 4;
  t.succeeded = 3;
  t.failed = 1;
  t.retries = 2;
  t.rechecked = 1;
  t.prompt_tokens = 3'000'000;
  t.cached_tokens = 1'000'000;
  t.completion_tokens = 30'000;
  t.first_sent_unix = 1000;
  t.last_finished_unix = 1000 + 1800;  // half an hour
  t.latencies = {1, 2, 3};
  t.latency_sum = 6;
  t.ttft_seconds = {0.5, 1.5};
  t.compared = 3;
  t.compared_server_tokens = 3'000'000;
  t.local_prompt_tokens = 2'999'700;
  t.max_abs_token_difference = 150;
  ModelSpec m;
  m.price_input_per_million = 0.3;
  m.price_cached_input_per_million = 0.03;
  m.price_output_per_million = 1.2;
  m.price_gpu_hour = 2.0;
  m.gpus = 8;
  RunReport r = MakeRunReport(t, m, {.waiting = 1, .succeeded = 3});
  EXPECT_DOUBLE_EQ(r.prompt_tokens_per_s, 3'000'000 / 1800.0);
  EXPECT_DOUBLE_EQ(r.generation_tokens_per_s, 30'000 / 1800.0);
  EXPECT_DOUBLE_EQ(*r.latency_mean_s, 2.0);
  EXPECT_DOUBLE_EQ(*r.ttft_mean_s, 1.0);
  EXPECT_DOUBLE_EQ(*r.ttft_p99_s, 1.5);
  EXPECT_DOUBLE_EQ(*r.token_difference_mean, 100.0);
  // 2M uncached x 0.3 + 1M cached x 0.03 + 30k x 1.2, per million.
  EXPECT_NEAR(*r.cost_tokens, 0.6 + 0.03 + 0.036, 1e-12);
  EXPECT_NEAR(*r.cost_gpu, 2.0 * 8 * 0.5, 1e-12);
  auto back = RunReport::FromJson(r.ToJson());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->ToJson(), r.ToJson());
  const std::string lines = [&] {
    std::string s;
    for (const auto& l : r.Lines()) s += l + "\n";
    return s;
  }();
  EXPECT_NE(lines.find("4 requests (3 ok, 1 failed, 2 retried, 1 asked again after a failed "
                       "answer check, 0 sent again"),
            std::string::npos)
      << lines;
  EXPECT_EQ(back->rechecked, 1);
  EXPECT_NE(lines.find("time to first token mean 1.00 s, p99 1.50 s"), std::string::npos) << lines;
  EXPECT_NE(lines.find("1 waiting for a model"), std::string::npos) << lines;
}

}  // namespace
}  // namespace reel::jobs
