// reel similar (FRAME_ID | IMAGE | VIDEO --at SECONDS) [--limit N] [--db FILE | --job JOB]
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "base/clock.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/cli/table_output.h"
#include "jobs/spec/job_spec.h"
#include "pipeline/frame_sampler.h"
#include "pipeline/image_codec.h"
#include "pipeline/smart_resize.h"
#include "storage/database.h"
#include "storage/store.h"
#include "vision/encoder.h"
#include "vision/features.h"
#include "vision/preprocess.h"

namespace reel::cli {
namespace {

using jobs::JobSpec;
using jobs::LoadJobFile;
using jobs::ResolveJobPath;

struct SimilarFlags {
  DatabaseChoice database;
  std::string query;
  std::optional<double> at;
  int limit = 10;
  std::optional<std::string> model;
  std::optional<std::string> weights;
  int threads = 0;
  std::string format = "table";
  size_t width = 80;
};

bool IsFrameId(const std::string& s) {
  return !s.empty() && s.size() < 19 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

bool IsImageFile(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

// The job file named by --job, when it is one.
std::optional<JobSpec> JobFile(const DatabaseChoice& choice) {
  if (!choice.job) return std::nullopt;
  const std::string& j = *choice.job;
  const bool yaml = j.size() > 5 && (j.ends_with(".yaml") || j.ends_with(".yml"));
  if (!yaml && !std::filesystem::is_regular_file(j)) return std::nullopt;
  Result<JobSpec> job = LoadJobFile(j);
  if (!job.ok()) return std::nullopt;
  return std::move(job).value();
}

// Encodes the query picture (an image, or a video's frame at `at`) with the weights that made
// `model`'s features.
Result<std::vector<float>> EncodeQuery(const SimilarFlags& flags, const std::string& model,
                                       const std::string& weights) {
  std::optional<vision::FeatureModel> parsed = vision::ParseFeatureModelKey(model);
  if (!parsed) return InvalidArgument("features of model '" + model + "' were not made by reel");
  pipeline::Image frame;
  pipeline::ResizeOptions resize;
  if (IsImageFile(flags.query)) {
    if (flags.at) return InvalidArgument("--at is for videos; " + flags.query + " is an image");
    REEL_ASSIGN_OR_RETURN(frame, pipeline::ReadImageFile(flags.query));
    resize.smart.max_pixels = pipeline::kImageMaxPixels;
    REEL_ASSIGN_OR_RETURN(pipeline::Size size,
                          pipeline::TargetSize({frame.width, frame.height}, resize));
    REEL_ASSIGN_OR_RETURN(frame, vision::ResizeForEncoder(frame, size));
  } else {
    if (!flags.at) {
      return InvalidArgument(flags.query +
                             ": give --at SECONDS for a video (or pass a frame id "
                             "or an image)");
    }
    pipeline::SampleOptions options;
    options.sampling.policy = pipeline::SamplingPolicy::kTimestamps;
    options.sampling.timestamps = {*flags.at};
    options.resize = resize;
    std::optional<pipeline::Image> got;
    auto sink = [&](pipeline::SampledFrame&& f) -> Status {
      got = std::move(f.image);
      return Status::Ok();
    };
    REEL_ASSIGN_OR_RETURN(pipeline::SampleReport report,
                          pipeline::SampleVideo(flags.query, options, sink));
    if (!got) {
      return NotFound(flags.query + ": no frame at " + std::to_string(*flags.at) + " s");
    }
    frame = std::move(*got);
  }
  vision::EncoderOptions options;
  options.precision = parsed->precision == "f32"   ? vision::WeightPrecision::kF32
                      : parsed->precision == "f16" ? vision::WeightPrecision::kF16
                                                   : vision::WeightPrecision::kBF16;
  options.projector = false;
  options.threads = flags.threads;
  REEL_ASSIGN_OR_RETURN(std::unique_ptr<vision::VisionEncoder> encoder,
                        vision::VisionEncoder::Load(weights, options));
  if (encoder->fingerprint() != parsed->fingerprint) {
    return InvalidArgument(weights + ": these weights (" + encoder->fingerprint() +
                           ") are not the ones that made the stored features (" +
                           parsed->fingerprint + ")");
  }
  REEL_ASSIGN_OR_RETURN(
      pipeline::Size size,
      vision::FeatureSize({frame.width, frame.height}, parsed->max_pixels, encoder->config()));
  REEL_ASSIGN_OR_RETURN(frame, vision::ResizeForEncoder(frame, size));
  const pipeline::Image* frames[] = {&frame};
  REEL_ASSIGN_OR_RETURN(vision::VisualInput input,
                        vision::PatchesFromFrames(frames, encoder->config()));
  vision::EncodeRequest request;
  request.tokens = false;
  REEL_ASSIGN_OR_RETURN(vision::EncodedVisual out, encoder->Encode(input, request));
  return std::move(out.pooled);
}

int Fail(const Status& status) {
  std::fprintf(stderr, "reel similar: %s\n", status.message().c_str());
  return status.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
}

int RunSimilar(const SimilarFlags& flags) {
  Result<ResolvedDatabase> resolved = ResolveDatabase(flags.database);
  if (!resolved.ok()) return Fail(resolved.status());
  Result<OutputFormat> format = ParseOutputFormat(flags.format);
  if (!format.ok()) return Fail(format.status());
  Result<storage::Database> db = storage::Database::OpenReadOnly(resolved->path);
  if (!db.ok()) return Fail(db.status());
  storage::Store store(std::move(db).value());

  std::vector<float> query;
  std::string model;
  std::optional<std::pair<int64_t, int64_t>> exclude;  // the query frame's own pair
  if (IsFrameId(flags.query) && !std::filesystem::exists(flags.query)) {
    const int64_t frame_id = std::stoll(flags.query);
    Result<std::optional<storage::FeatureRow>> row = store.GetFrameFeature(frame_id, flags.model);
    if (!row.ok()) return Fail(row.status());
    if (!row->has_value()) {
      return Fail(NotFound(resolved->path + ": frame " + flags.query + " has no features" +
                           (flags.model ? " of model " + *flags.model : std::string()) +
                           " (run a job with vision.enabled)"));
    }
    Result<std::vector<float>> values = vision::FromF16Bytes((*row)->data);
    if (!values.ok()) return Fail(values.status());
    query = std::move(values).value();
    model = (*row)->model;
    exclude = std::make_pair((*row)->item_id, (*row)->sample_index / 2);
  } else {
    if (flags.model) {
      model = *flags.model;
    } else {
      Result<std::vector<std::pair<std::string, int64_t>>> models = store.FeatureModels();
      if (!models.ok()) return Fail(models.status());
      if (models->empty()) {
        return Fail(NotFound(resolved->path + ": no features yet (run a job with "
                                              "vision.enabled)"));
      }
      if (models->size() > 1) {
        std::string list;
        for (const auto& [m, n] : *models) list += "\n  " + m + " (" + std::to_string(n) + ")";
        return Fail(
            InvalidArgument("the database holds features of several models; choose one "
                            "with --model:" +
                            list));
      }
      model = (*models)[0].first;
    }
    std::optional<std::string> weights = flags.weights;
    if (!weights) {
      if (std::optional<JobSpec> job = JobFile(flags.database);
          job && !job->vision.weights.empty()) {
        weights = ResolveJobPath(job->base_dir, job->vision.weights);
      }
    }
    if (!weights) {
      return Fail(
          InvalidArgument("to search with an image or video, give --weights DIR (the "
                          "checkpoint that made the features) or --job JOB.yaml"));
    }
    Result<std::vector<float>> encoded = EncodeQuery(flags, model, *weights);
    if (!encoded.ok()) return Fail(encoded.status());
    query = std::move(encoded).value();
  }

  struct Hit {
    double score;
    storage::FeatureRow row;
  };
  std::vector<Hit> hits;
  std::map<std::pair<int64_t, int64_t>, size_t> by_pair;  // one row per frame pair
  Status scanned = store.ForEachFeature(
      model, resolved->job_name, [&](const storage::FeatureRow& row) -> Status {
        const auto pair = std::make_pair(row.item_id, row.sample_index / 2);
        if (exclude && pair == *exclude) return Status::Ok();
        if (by_pair.count(pair)) return Status::Ok();  // the pair's other frame
        Result<std::vector<float>> values = vision::FromF16Bytes(row.data);
        if (!values.ok()) return Status::Ok();
        by_pair[pair] = hits.size();
        hits.push_back({vision::CosineSimilarity(query, *values), row});
        hits.back().row.data.clear();
        return Status::Ok();
      });
  if (!scanned.ok()) return Fail(scanned);
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.score != b.score ? a.score > b.score : a.row.frame_id < b.row.frame_id;
  });
  if (hits.size() > static_cast<size_t>(flags.limit)) hits.resize(flags.limit);

  storage::Table table;
  table.columns = {"rank", "score", "frame_id",     "job",          "item_id",
                   "path", "time",  "time_seconds", "sample_index", "duplicate_of"};
  int rank = 0;
  for (const Hit& h : hits) {
    char score[32];
    std::snprintf(score, sizeof score, "%.4f", h.score);
    table.rows.push_back(
        {int64_t{++rank}, std::stod(score), h.row.frame_id, Text(h.row.job), h.row.item_id,
         Text(h.row.path), Text(MediaClock(h.row.time_seconds)), h.row.time_seconds,
         h.row.sample_index,
         h.row.duplicate_of ? storage::Value(*h.row.duplicate_of) : storage::Value()});
  }
  WriteTable(std::cout, table, *format, {.max_cell_width = flags.width});
  std::cout.flush();
  return kExitOk;
}

}  // namespace

void AddSimilarCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SimilarFlags>();
  CLI::App* cmd = app.add_subcommand(
      "similar",
      "The frames in the database that look most like a frame, an image or a video's "
      "frame (vision features)");
  cmd->footer(
      "Needs features: run a job with vision.enabled (pooled vision-encoder features, one per "
      "frame pair). The query is a frame id from the database (`reel query \"SELECT id, time_"
      "seconds FROM frames\"`), an image file, or a video file with --at SECONDS; images and "
      "videos are encoded with the weights that made the stored features (--weights, or "
      "vision.weights of --job JOB.yaml) at the same size. Score: cosine similarity of the "
      "pooled features, 1 = identical. One row per frame pair (its first frame); the query's "
      "own pair is left out. duplicate_of: the frame the run marked this one a near-duplicate "
      "of.\n"
      "Exit status: 0 ok, 1 no database or no such frame, 2 bad usage.");
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_option("QUERY", flags->query, "Frame id, image file, or video file (with --at)")
      ->required();
  cmd->add_option("--at", flags->at, "Video: the time of the frame to look for (seconds)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-n,--limit", flags->limit, "Most frames to list")
      ->default_val(10)
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--model", flags->model,
                  "Features of this model (features.model; needed when the database has several)");
  cmd->add_option("--weights", flags->weights,
                  "Checkpoint that made the features (for an image or video query)");
  cmd->add_option("--threads", flags->threads, "Encoder threads, 0 = one per core")
      ->default_val(0)
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--format", flags->format, "table, csv, json or jsonl")
      ->check(CLI::IsMember({"table", "csv", "json", "jsonl"}))
      ->default_val("table");
  cmd->add_option("--width", flags->width, "Table format: cut cells to this many characters")
      ->default_val(80);
  cmd->callback([flags, &exit_code] { exit_code = RunSimilar(*flags); });
}

}  // namespace reel::cli
