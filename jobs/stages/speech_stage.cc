// The speech stage: after a video is committed (or found up to date), transcribes its audio track
// (llm/speech/transcribe_file.h) into the item's transcript, unless the transcript of the same
// content and speech settings is finished. Each chunk is stored as it is transcribed, so a run
// stopped half way resumes at the first chunk not stored, and a changed speech setting
// re-transcribes without redoing the item's frames.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "jobs/stages/stages.h"
#include "llm/speech/transcribe_file.h"
#include "pipeline/probe.h"

namespace reel::jobs {
namespace {

// Sets `stop` while `cancel` is set or the owner is done, polling every 50 ms: a transcription
// in progress sees Ctrl-C without waiting for its chunk to end.
class CancelWatcher {
 public:
  CancelWatcher(const std::atomic<bool>* cancel, std::atomic<bool>* stop)
      : thread_([this, cancel, stop] {
          while (!done_.load()) {
            if (cancel != nullptr && cancel->load()) stop->store(true);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          }
        }) {}
  ~CancelWatcher() {
    done_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

std::string WordsJson(const std::vector<llm::TranscriptWord>& words, double offset_s) {
  nlohmann::json out = nlohmann::json::array();
  for (const llm::TranscriptWord& w : words) {
    nlohmann::json word = {{"start", std::max(0.0, w.start_s - offset_s)},
                           {"end", std::max(0.0, w.end_s - offset_s)},
                           {"text", w.text}};
    if (w.confidence) word["confidence"] = *w.confidence;
    out.push_back(std::move(word));
  }
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Segments on the item's clock (the frames': seconds from the start the player shows).
std::vector<storage::SegmentRecord> ToSegments(const std::vector<llm::TranscriptSegment>& in,
                                               double offset_s) {
  std::vector<storage::SegmentRecord> out;
  for (const llm::TranscriptSegment& s : in) {
    if (s.text.empty()) continue;
    storage::SegmentRecord r;
    r.source = storage::kSpeechSource;
    r.start_seconds = std::max(0.0, s.start_s - offset_s);
    r.end_seconds = std::max(r.start_seconds, s.end_s - offset_s);
    r.text = s.text;
    if (!s.language.empty()) r.language = s.language;
    r.confidence = s.confidence;
    if (!s.words.empty()) r.words_json = WordsJson(s.words, offset_s);
    out.push_back(std::move(r));
  }
  return out;
}

class SpeechStage final : public StoredItemStage {
 public:
  const char* name() const override { return "speech"; }

  Status Run(storage::Store& store, int64_t item_id, int64_t run_id,
             ItemWork& work) const override {
    (void)run_id;
    const JobSpec& job = *work.job;
    if (work.input.kind != InputKind::kVideo && work.input.kind != InputKind::kAudio) {
      return Status::Ok();
    }
    REEL_ASSIGN_OR_RETURN(std::optional<storage::ItemRecord> item, store.GetItem(item_id));
    if (!item) return NotFound(work.input.path + ": item vanished before its speech was read");
    // The stored kind decides: a video container holding sound alone became an audio item when
    // it was probed (the input list still calls it a video).
    const bool audio_item = item->kind == storage::ItemKind::kAudio;
    if (!TranscribesSpeech(job, audio_item)) return Status::Ok();
    const std::string key = ItemSpeechSettingsKey(job, audio_item, item->content_hash.value_or(""));
    REEL_ASSIGN_OR_RETURN(std::optional<storage::TranscriptRecord> stored,
                          store.GetTranscript(item_id));
    // Audio that could not be read is final for a video (its frames are asked about); an audio
    // item processed again (--retry-failed) tries once more.
    if (stored && stored->settings_key == key &&
        (stored->status == storage::TranscriptStatus::kDone ||
         (stored->status == storage::TranscriptStatus::kFailed && !audio_item))) {
      return Status::Ok();
    }
    REEL_ASSIGN_OR_RETURN(llm::Transcriber * transcriber, TranscriberFor(job));
    const std::string& path = work.input.path;

    // The item's clock starts where the player's does: the container's start time.
    double media_start_s = 0;
    if (work.media) {
      media_start_s = work.media->start_s;
    } else if (Result<pipeline::MediaInfo> probed = pipeline::Probe(path); probed.ok()) {
      media_start_s = probed->start_s;
    }
    if (!std::isfinite(media_start_s)) media_start_s = 0;

    storage::TranscriptRecord record;
    record.item_id = item_id;
    record.settings_key = key;
    record.backend = transcriber->backend();
    record.model = transcriber->model();
    if (!job.speech.language.empty()) record.language = job.speech.language;
    REEL_RETURN_IF_ERROR(store.StartTranscript(record));
    REEL_ASSIGN_OR_RETURN(std::vector<storage::TranscriptChunkRecord> done,
                          store.ListTranscriptChunks(item_id));

    llm::TranscribeFileOptions options;
    options.audio.read.language = job.speech.language;
    options.audio.read.start_s = media_start_s + job.sampling.start_s.value_or(0);
    if (job.sampling.end_s) options.audio.read.end_s = media_start_s + *job.sampling.end_s;
    options.audio.read.limits.time_limit_s = job.speech.time_limit_s;
    options.audio.chunks.max_chunk_s = job.speech.max_chunk_s;
    options.concurrency = transcriber->backend() == "openai" ? job.speech.concurrency : 1;
    options.skip_chunk = [&](const pipeline::SpeechChunk& chunk) {
      for (const storage::TranscriptChunkRecord& c : done) {
        if (c.chunk == chunk.index &&
            std::abs(c.start_seconds - (chunk.start_s - media_start_s)) < 1e-3) {
          return true;
        }
      }
      return false;
    };

    std::atomic<bool> stop{false};
    Status store_error;  // the first chunk that could not be stored (e.g. the disk is full)
    std::string language;
    Result<llm::FileTranscript> transcript = [&] {
      CancelWatcher watcher(work.cancel, &stop);
      // TranscribeFile calls this for one chunk at a time.
      return llm::TranscribeFile(
          path, *transcriber, options, &stop, [&](const llm::ChunkOutcome& outcome) {
            if (!outcome.result.ok() || !store_error.ok()) return;
            std::vector<storage::SegmentRecord> segments =
                ToSegments(outcome.result->segments, media_start_s);
            for (const storage::SegmentRecord& s : segments) {
              if (language.empty() && s.language) language = *s.language;
            }
            storage::TranscriptChunkRecord chunk;
            chunk.chunk = outcome.chunk;
            chunk.start_seconds = outcome.start_s - media_start_s;
            chunk.end_seconds = outcome.end_s - media_start_s;
            Status added = store.AddTranscriptChunk(item_id, chunk, segments);
            if (!added.ok()) {
              store_error = added;
              stop.store(true);
            }
          });
    }();
    if (!store_error.ok()) return store_error.WithPrefix(path + ": transcript");
    if (!transcript.ok()) {
      if (transcript.status().code() == ErrorCode::kCancelled || work.cancelled()) {
        return Cancelled(path + ": stopped by request");
      }
      // The audio cannot be read: final for these settings (the frames are still asked about).
      record.status = storage::TranscriptStatus::kFailed;
      record.error = transcript.status().message();
      REEL_RETURN_IF_ERROR(store.FinishTranscript(record));
      const std::string why = transcript.status().message();
      if (audio_item) {
        // An audio item has nothing else: it failed (the next run with --retry-failed, or a
        // changed file, tries again).
        const std::string error = why.find(path) == std::string::npos
                                      ? path + ": its audio could not be read: " + why
                                      : "its audio could not be read: " + why;
        REEL_RETURN_IF_ERROR(store.MarkItemFailed(item_id, error));
        work.failed = error;
        return Status::Ok();
      }
      work.warnings.push_back(path + ": speech not transcribed: " + why);
      return Status::Ok();
    }
    const llm::FileTranscript& t = *transcript;
    record.chunks = t.chunks;
    record.failed_chunks = static_cast<int64_t>(t.failures.size());
    record.speech_seconds = t.audio.speech_s;
    if (!language.empty()) record.language = language;
    if (!t.notes.empty()) {
      std::string notes;
      for (const std::string& n : t.notes) notes += (notes.empty() ? "" : "; ") + n;
      record.note = notes;
    }
    if (t.failures.empty()) {
      record.status = storage::TranscriptStatus::kDone;
      REEL_RETURN_IF_ERROR(store.FinishTranscript(record));
      work.notes.push_back(path + ": speech transcribed with " + transcriber->Describe() + " (" +
                           std::to_string(t.chunks) + " chunks, " +
                           std::to_string(t.skipped_chunks) + " stored before)" +
                           (record.note ? ": " + *record.note : ""));
      return Status::Ok();
    }
    record.status = storage::TranscriptStatus::kPartial;
    const llm::ChunkFailure& first = t.failures.front();
    char where[64];
    std::snprintf(where, sizeof(where), "%.2f-%.2f s", first.start_s - media_start_s,
                  first.end_s - media_start_s);
    record.error = std::string(where) + ": " + first.status.message();
    REEL_RETURN_IF_ERROR(store.FinishTranscript(record));
    return Unavailable(path + ": " + std::to_string(t.failures.size()) + " of " +
                       std::to_string(t.chunks) + " speech chunks not transcribed (first at " +
                       *record.error + "); its questions wait: run again to retry them");
  }

 private:
  // One transcriber for the run (a runner uses one job), made when the first video needs it.
  Result<llm::Transcriber*> TranscriberFor(const JobSpec& job) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (job_ == &job) {
      if (!transcriber_) return creation_error_;
      return transcriber_.get();
    }
    job_ = &job;
    transcriber_.reset();
    creation_error_ = Status::Ok();
    const SpeechSpec& s = job.speech;
    llm::TranscriberOptions options;
    options.backend = SpeechBackendOf(s);
    if (options.backend == "openai") options.endpoint = s.endpoint.value_or("");
    options.model = s.model;
    options.language = s.language;
    options.connect_timeout_s = s.connect_timeout_s;
    options.read_timeout_s = s.read_timeout_s;
    options.retry.max_retries = s.retries;
    Result<llm::ApiKey> key =
        llm::ApiKey::FromEnvironment(options.backend == "openai" ? s.api_key_env : std::string());
    if (!key.ok()) {
      creation_error_ = key.status().WithPrefix("speech.api_key_env");
      return creation_error_;
    }
    options.api_key = *key;
    Result<std::unique_ptr<llm::Transcriber>> made = llm::CreateTranscriber(options);
    if (!made.ok()) {
      creation_error_ = made.status().WithPrefix("speech");
      return creation_error_;
    }
    transcriber_ = std::move(made).value();
    return transcriber_.get();
  }

  mutable std::mutex mutex_;
  mutable const JobSpec* job_ = nullptr;
  mutable std::unique_ptr<llm::Transcriber> transcriber_;
  mutable Status creation_error_;
};

}  // namespace

std::unique_ptr<StoredItemStage> MakeSpeechStage() { return std::make_unique<SpeechStage>(); }

}  // namespace reel::jobs
