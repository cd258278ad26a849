#include "jobs/stages/vision_stage.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>

#include "pipeline/smart_resize.h"
#include "storage/database.h"
#include "storage/sha256.h"
#include "storage/store.h"
#include "vision/encoder.h"
#include "vision/features.h"
#include "vision/preprocess.h"

namespace reel::jobs {

// One frame pair's result.
struct VisionPair {
  int64_t first = 0;  // sample indexes of its frames (equal for a frame alone)
  int64_t second = 0;
  std::vector<pipeline::Image> frames;  // until encoded
  std::string input_hash;
  std::vector<float> feature;
  bool reused = false;
};

// Per item, in ItemWork::vision.
struct VisionItemState {
  std::map<int64_t, pipeline::Image> pending;          // sample index -> frame at the feature size
  std::vector<VisionPair> ready;                       // complete pairs waiting for a batch
  std::map<int64_t, VisionPair> done;                  // by first sample index
  std::map<std::string, std::vector<float>> by_input;  // this item's features by input hash
  double seconds = 0;
  int encoded = 0;
  int reused = 0;
};

class VisionService {
 public:
  VisionService(const JobSpec& job, std::string database_path)
      : spec_(job.vision),
        weights_(ResolveJobPath(job.base_dir, job.vision.weights)),
        database_path_(std::move(database_path)) {}

  const VisionSpec& spec() const { return spec_; }

  // The encoder, loaded on first use; a failure is remembered and returned to every item.
  Result<vision::VisionEncoder*> Encoder() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (encoder_) return encoder_.get();
    if (error_) return *error_;
    vision::EncoderOptions options;
    options.precision = spec_.dtype == VisionDType::kF32   ? vision::WeightPrecision::kF32
                        : spec_.dtype == VisionDType::kF16 ? vision::WeightPrecision::kF16
                                                           : vision::WeightPrecision::kBF16;
    options.threads = spec_.threads;
    options.projector = false;  // pooled features come from the tower alone
    Result<std::unique_ptr<vision::VisionEncoder>> loaded =
        vision::VisionEncoder::Load(weights_, options);
    if (!loaded.ok()) {
      error_ = loaded.status().WithPrefix("vision.weights");
      return *error_;
    }
    encoder_ = std::move(loaded).value();
    model_ = vision::FeatureModelKey(encoder_->fingerprint(), spec_.max_pixels);
    return encoder_.get();
  }

  // Valid once Encoder() succeeded.
  const std::string& model() const { return model_; }

  // A stored feature for this input, if the database has one (any failure counts as none).
  std::optional<std::vector<float>> Cached(const std::string& input_hash) {
    std::lock_guard<std::mutex> lock(db_mutex_);
    if (!store_) {
      if (db_failed_) return std::nullopt;
      Result<storage::Database> db = storage::Database::OpenReadOnly(database_path_);
      if (!db.ok()) {
        db_failed_ = true;
        return std::nullopt;
      }
      store_.emplace(std::move(db).value());
    }
    Result<std::optional<std::string>> data = store_->FindFeatureData(model_, input_hash);
    if (!data.ok() || !data->has_value()) return std::nullopt;
    Result<std::vector<float>> values = vision::FromF16Bytes(**data);
    if (!values.ok()) return std::nullopt;
    return std::move(values).value();
  }

 private:
  VisionSpec spec_;
  std::string weights_;
  std::string database_path_;
  std::mutex mutex_;
  std::unique_ptr<vision::VisionEncoder> encoder_;
  std::optional<Status> error_;
  std::string model_;
  std::mutex db_mutex_;
  std::optional<storage::Store> store_;
  bool db_failed_ = false;
};

namespace {

using Clock = std::chrono::steady_clock;

// What the encoder sees, hashed: the frames' sizes and pixels.
std::string InputHash(const std::vector<pipeline::Image>& frames) {
  storage::Sha256 sha;
  for (const pipeline::Image& f : frames) {
    const std::string size = std::to_string(f.width) + "x" + std::to_string(f.height) + ";";
    sha.Update(size);
    sha.Update(std::string_view(reinterpret_cast<const char*>(f.pixels.data()), f.pixels.size()));
  }
  return storage::Sha256::ToHex(sha.Finish());
}

// Encodes the item's ready pairs (those found in the database are reused).
Status Flush(VisionService& service, ItemWork& work, VisionItemState& state) {
  if (state.ready.empty()) return Status::Ok();
  if (work.cancelled()) return Cancelled(work.input.path + ": stopped by request");
  REEL_ASSIGN_OR_RETURN(vision::VisionEncoder * encoder, service.Encoder());
  const auto start = Clock::now();
  std::vector<VisionPair> pairs = std::move(state.ready);
  state.ready.clear();
  std::vector<vision::VisualInput> inputs;
  std::vector<size_t> to_encode;
  std::map<std::string, size_t> first_in_batch;   // input hash -> the pair encoded for it
  std::vector<std::pair<size_t, size_t>> copies;  // (pair, identical pair encoded in this batch)
  for (size_t i = 0; i < pairs.size(); ++i) {
    VisionPair& p = pairs[i];
    p.input_hash = InputHash(p.frames);
    if (auto same = first_in_batch.find(p.input_hash); same != first_in_batch.end()) {
      copies.emplace_back(i, same->second);
      p.reused = true;
      continue;
    }
    if (auto same = state.by_input.find(p.input_hash); same != state.by_input.end()) {
      p.feature = same->second;  // an identical pair earlier in this item (a still scene)
      p.reused = true;
      continue;
    }
    if (std::optional<std::vector<float>> cached = service.Cached(p.input_hash)) {
      if (cached->size() == static_cast<size_t>(encoder->config().hidden_size)) {
        p.feature = std::move(*cached);
        p.reused = true;
        continue;
      }
    }
    std::vector<const pipeline::Image*> frames;
    for (const pipeline::Image& f : p.frames) frames.push_back(&f);
    Result<vision::VisualInput> input = vision::PatchesFromFrames(frames, encoder->config());
    if (!input.ok()) {
      return input.status().WithPrefix(work.input.path + ": frame " + std::to_string(p.first));
    }
    inputs.push_back(std::move(input).value());
    to_encode.push_back(i);
    first_in_batch.emplace(p.input_hash, i);
  }
  if (!inputs.empty()) {
    std::vector<const vision::VisualInput*> pointers;
    for (const vision::VisualInput& in : inputs) pointers.push_back(&in);
    vision::EncodeRequest request;
    request.pooled = true;
    request.tokens = false;
    Result<std::vector<vision::EncodedVisual>> out = encoder->Encode(pointers, request);
    if (!out.ok()) return out.status().WithPrefix(work.input.path + ": vision encoder");
    for (size_t k = 0; k < to_encode.size(); ++k) {
      pairs[to_encode[k]].feature = std::move((*out)[k].pooled);
    }
  }
  for (const auto& [copy, source] : copies) pairs[copy].feature = pairs[source].feature;
  for (const VisionPair& p : pairs) state.by_input.emplace(p.input_hash, p.feature);
  for (VisionPair& p : pairs) {
    p.frames.clear();
    p.frames.shrink_to_fit();
    (p.reused ? state.reused : state.encoded) += 1;
    const int64_t first = p.first;
    state.done.emplace(first, std::move(p));
  }
  state.seconds += std::chrono::duration<double>(Clock::now() - start).count();
  return Status::Ok();
}

class VisionConsumer final : public FrameConsumer {
 public:
  explicit VisionConsumer(std::shared_ptr<VisionService> service) : service_(std::move(service)) {}
  const char* name() const override { return "vision"; }

  Status Consume(ItemWork& work, const pipeline::Image& image,
                 storage::FrameRecord& record) const override {
    REEL_ASSIGN_OR_RETURN(vision::VisionEncoder * encoder, service_->Encoder());
    if (!work.vision) work.vision = std::make_shared<VisionItemState>();
    VisionItemState& state = *work.vision;
    Result<pipeline::Size> size = vision::FeatureSize(
        {image.width, image.height}, service_->spec().max_pixels, encoder->config());
    if (!size.ok()) {
      return size.status().WithPrefix(work.input.path + ": frame " +
                                      std::to_string(record.sample_index) + " for the encoder");
    }
    Result<pipeline::Image> resized = vision::ResizeForEncoder(image, *size);
    if (!resized.ok()) {
      return resized.status().WithPrefix(work.input.path + ": frame " +
                                         std::to_string(record.sample_index));
    }
    const int64_t index = record.sample_index;
    const int64_t partner = index ^ 1;
    auto it = state.pending.find(partner);
    if (it == state.pending.end()) {
      state.pending.emplace(index, std::move(resized).value());
      return Status::Ok();
    }
    VisionPair pair;
    pair.first = std::min(index, partner);
    pair.second = std::max(index, partner);
    if (index < partner) {
      pair.frames.push_back(std::move(resized).value());
      pair.frames.push_back(std::move(it->second));
    } else {
      pair.frames.push_back(std::move(it->second));
      pair.frames.push_back(std::move(resized).value());
    }
    state.pending.erase(it);
    state.ready.push_back(std::move(pair));
    if (static_cast<int>(state.ready.size()) >= service_->spec().batch_size) {
      return Flush(*service_, work, state);
    }
    return Status::Ok();
  }

 private:
  std::shared_ptr<VisionService> service_;
};

class VisionStage final : public ItemStage {
 public:
  explicit VisionStage(std::shared_ptr<VisionService> service) : service_(std::move(service)) {}
  const char* name() const override { return "vision"; }
  bool AppliesTo(const ItemWork& work) const override {
    return work.vision != nullptr &&
           (work.input.kind == InputKind::kVideo || work.input.kind == InputKind::kImage);
  }

  Status Run(ItemWork& work) const override {
    VisionItemState& state = *work.vision;
    // Frames left without a partner are pairs of themselves.
    for (auto& [index, image] : state.pending) {
      VisionPair pair;
      pair.first = pair.second = index;
      pair.frames.push_back(std::move(image));
      state.ready.push_back(std::move(pair));
    }
    state.pending.clear();
    REEL_RETURN_IF_ERROR(Flush(*service_, work, state));

    // Near-duplicates: each pair against the last kept one.
    const double threshold = service_->spec().dedup_threshold;
    std::map<int64_t, int64_t> duplicate_of;  // sample index -> kept frame's sample index
    const VisionPair* kept = nullptr;
    int duplicate_pairs = 0;
    for (const auto& [first, pair] : state.done) {
      if (kept != nullptr && threshold < 1 &&
          vision::CosineSimilarity(pair.feature, kept->feature) > threshold) {
        duplicate_of[pair.first] = kept->first;
        duplicate_of[pair.second] = kept->first;
        ++duplicate_pairs;
      } else {
        kept = &pair;
      }
    }
    int duplicate_frames = 0;
    for (storage::FrameRecord& frame : work.outputs.frames) {
      auto it = duplicate_of.find(frame.sample_index);
      if (it != duplicate_of.end()) {
        frame.duplicate_of = it->second;
        ++duplicate_frames;
      }
    }
    // Both frames of a pair carry its feature (one blob).
    const std::string& model = service_->model();
    for (const auto& [first, pair] : state.done) {
      storage::FeatureRecord feature;
      feature.model = model;
      feature.dtype = "f16";
      feature.dims = {static_cast<int64_t>(pair.feature.size())};
      feature.data = vision::ToF16Bytes(pair.feature);
      feature.input_hash = pair.input_hash;
      work.outputs.features.push_back({pair.first, feature});
      if (pair.second != pair.first) work.outputs.features.push_back({pair.second, feature});
    }
    nlohmann::json facts = {{"model", model},
                            {"pairs", state.done.size()},
                            {"encoded", state.encoded},
                            {"reused", state.reused},
                            {"duplicate_pairs", duplicate_pairs},
                            {"duplicate_frames", duplicate_frames},
                            {"seconds", state.seconds}};
    work.media_facts.emplace_back("vision", facts.dump());
    return Status::Ok();
  }

 private:
  std::shared_ptr<VisionService> service_;
};

}  // namespace

std::shared_ptr<VisionService> MakeVisionService(const JobSpec& job,
                                                 const std::string& database_path) {
  return std::make_shared<VisionService>(job, database_path);
}

std::unique_ptr<FrameConsumer> MakeVisionConsumer(std::shared_ptr<VisionService> service) {
  return std::make_unique<VisionConsumer>(std::move(service));
}

std::unique_ptr<ItemStage> MakeVisionStage(std::shared_ptr<VisionService> service) {
  return std::make_unique<VisionStage>(std::move(service));
}

}  // namespace reel::jobs
