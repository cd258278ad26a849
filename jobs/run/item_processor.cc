#include "jobs/run/item_processor.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <set>
#include <tuple>

#include "jobs/context/context_frames.h"
#include "jobs/json_output.h"
#include "jobs/stages/stages.h"
#include "jobs/stages/vision_stage.h"

namespace reel::jobs {
namespace {

// The message of a failure, making sure it names the file.
Status NamingFile(const Status& status, const std::string& path) {
  if (status.message().find(path) != std::string::npos) return status;
  return status.WithPrefix(path);
}

std::string MediaJson(const std::vector<std::pair<std::string, std::string>>& facts) {
  // Values are JSON texts already; later facts with the same key win.
  std::vector<std::pair<std::string, std::string>> unique;
  for (const auto& fact : facts) {
    auto it = std::find_if(unique.begin(), unique.end(),
                           [&](const auto& u) { return u.first == fact.first; });
    if (it != unique.end()) {
      it->second = fact.second;
    } else {
      unique.push_back(fact);
    }
  }
  std::string json = "{";
  for (size_t i = 0; i < unique.size(); ++i) {
    if (i) json += ",";
    json += "\"" + unique[i].first + "\":" + unique[i].second;
  }
  return json + "}";
}

// Subtitle files can repeat a cue; the store keys segments on (source, start, text).
std::vector<storage::SegmentRecord> WithoutDuplicates(std::vector<storage::SegmentRecord> all) {
  std::set<std::tuple<std::string, double, std::string>> seen;
  std::vector<storage::SegmentRecord> segments;
  for (storage::SegmentRecord& segment : all) {
    if (seen.emplace(segment.source, segment.start_seconds, segment.text).second) {
      segments.push_back(std::move(segment));
    }
  }
  return segments;
}

}  // namespace

bool IsTransient(const Status& status) {
  return status.code() == ErrorCode::kUnavailable || status.code() == ErrorCode::kIoError;
}

ItemProcessor ItemProcessor::Default() {
  JobSpec job;  // vision off
  return ForJob(job, "");
}

ItemProcessor ItemProcessor::ForJob(const JobSpec& job, const std::string& database_path) {
  ItemProcessor processor;
  processor.AddFrameConsumer(MakeThumbnailConsumer());
  std::shared_ptr<VisionService> vision;
  if (job.vision.enabled) {
    vision = MakeVisionService(job, database_path);
    processor.AddFrameConsumer(MakeVisionConsumer(vision));
  }
  std::vector<const FrameConsumer*> consumers;
  for (const auto& consumer : processor.consumers_) consumers.push_back(consumer.get());
  processor.AddStage(MakeProbeStage());
  processor.AddStage(MakeVideoFramesStage(consumers));
  processor.AddStage(MakeImageStage(consumers));
  processor.AddStage(MakeSubtitleStage());
  processor.AddStage(MakeDocumentStage());
  // Page pictures get thumbnails and hashes; the vision encoder (pairs of same-size video frames)
  // is not run on pages.
  processor.AddStage(MakePagedDocumentStage({consumers.front()}));
  processor.AddStage(MakeSidecarDocumentStage());
  if (vision) processor.AddStage(MakeVisionStage(vision));
  // Audio items are transcribed even with speech off (TranscribesSpeech): the stage decides.
  processor.AddStoredStage(MakeSpeechStage());
  processor.AddStoredStage(MakeContextStage(FrameCacheDir(job, database_path)));
  return processor;
}

void ItemProcessor::AddFrameConsumer(std::unique_ptr<FrameConsumer> consumer) {
  consumers_.push_back(std::move(consumer));
}

void ItemProcessor::AddStage(std::unique_ptr<ItemStage> stage) {
  stages_.push_back(std::move(stage));
}

void ItemProcessor::AddStoredStage(std::unique_ptr<StoredItemStage> stage) {
  stored_stages_.push_back(std::move(stage));
}

Result<ItemWork> ItemProcessor::Process(const JobSpec& job, const InputFile& input,
                                        const std::atomic<bool>* cancel) const {
  ItemWork work;
  work.job = &job;
  work.input = input;
  work.cancel = cancel;
  struct stat st {};
  if (stat(input.path.c_str(), &st) == 0 && st.st_size > job.limits.max_file_bytes) {
    return LimitExceeded(input.path + ": " + std::to_string(st.st_size) +
                         " bytes is more than limits.max_file_size (" +
                         std::to_string(job.limits.max_file_bytes) + ")");
  }
  try {
    for (const auto& stage : stages_) {
      if (work.cancelled()) return Cancelled(input.path + ": stopped by request");
      if (!stage->AppliesTo(work)) continue;
      Status status = stage->Run(work);
      if (!status.ok()) {
        if (work.cancelled()) return Cancelled(input.path + ": stopped by request");
        return NamingFile(status, input.path);
      }
    }
  } catch (const std::exception& e) {  // a bug or out of memory; never let it escape
    return Internal(input.path + ": " + e.what());
  }
  work.outputs.segments = WithoutDuplicates(std::move(work.outputs.segments));
  if (!work.text_encodings.empty()) {
    nlohmann::json encodings = nlohmann::json::object();
    for (const auto& [source, encoding] : work.text_encodings) encodings[source] = encoding;
    work.media_facts.emplace_back("text_encodings", DumpJson(encodings));
  }
  work.outputs.media_json = MediaJson(work.media_facts);
  return work;
}

std::vector<storage::SegmentRecord> ItemProcessor::TextOfFailedItem(
    const JobSpec& job, const InputFile& input, const std::atomic<bool>* cancel,
    std::vector<std::string>* warnings) const {
  if (input.kind != InputKind::kVideo) return {};
  ItemWork work;
  work.job = &job;
  work.input = input;
  work.cancel = cancel;
  try {
    for (const auto& stage : stages_) {
      if (work.cancelled()) return {};
      if (!stage->reads_text_alone() || !stage->AppliesTo(work)) continue;
      Status status = stage->Run(work);
      if (!status.ok()) work.warnings.push_back(NamingFile(status, input.path).message());
    }
  } catch (const std::exception& e) {  // a bug or out of memory; the item has failed already
    work.warnings.push_back(input.path + ": " + e.what());
  }
  if (warnings != nullptr) {
    warnings->insert(warnings->end(), work.warnings.begin(), work.warnings.end());
  }
  return WithoutDuplicates(std::move(work.outputs.segments));
}

}  // namespace reel::jobs
