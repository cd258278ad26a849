#include "llm/speech/transcribe_file.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace reel::llm {
namespace {

// Chunks handed from the reading thread to the workers, bounded.
class ChunkQueue {
 public:
  explicit ChunkQueue(size_t capacity) : capacity_(capacity) {}

  // False when the queue was closed (the work stops).
  bool Push(pipeline::SpeechChunk chunk) {
    std::unique_lock<std::mutex> lock(mutex_);
    space_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(chunk));
    ready_.notify_one();
    return true;
  }
  bool Pop(pipeline::SpeechChunk* chunk) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return closed_ || done_ || !items_.empty(); });
    if (items_.empty()) return false;
    *chunk = std::move(items_.front());
    items_.pop_front();
    space_.notify_one();
    return true;
  }
  void Done() {  // no more chunks will come
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    ready_.notify_all();
  }
  void Close() {  // stop now
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    items_.clear();
    ready_.notify_all();
    space_.notify_all();
  }

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<pipeline::SpeechChunk> items_;
  bool done_ = false;
  bool closed_ = false;
};

}  // namespace

Result<FileTranscript> TranscribeFile(const std::string& path, Transcriber& transcriber,
                                      const TranscribeFileOptions& options,
                                      const std::atomic<bool>* cancel,
                                      const std::function<void(const ChunkOutcome&)>& on_chunk) {
  FileTranscript out;
  out.path = path;
  out.backend = transcriber.backend();
  out.model = transcriber.model();
  pipeline::SpeechAudioOptions audio = options.audio;
  audio.chunks.max_chunk_s = std::min(audio.chunks.max_chunk_s, transcriber.window_s());

  const int workers = std::max(1, options.concurrency);
  ChunkQueue queue(static_cast<size_t>(workers));
  std::mutex mutex;  // guards `out` and `cancelled` below
  bool cancelled = false;
  auto work = [&] {
    pipeline::SpeechChunk chunk;
    while (queue.Pop(&chunk)) {
      ChunkOutcome outcome;
      outcome.chunk = chunk.index;
      outcome.start_s = chunk.start_s;
      outcome.end_s = chunk.end_s();
      outcome.speech_s = chunk.speech_s;
      outcome.result = transcriber.Transcribe(chunk, cancel);
      std::lock_guard<std::mutex> lock(mutex);
      if (outcome.result.ok()) {
        for (const TranscriptSegment& s : outcome.result->segments) out.segments.push_back(s);
        for (const std::string& note : outcome.result->notes) {
          if (std::find(out.notes.begin(), out.notes.end(), note) == out.notes.end()) {
            out.notes.push_back(note);
          }
        }
      } else if (outcome.result.status().code() == ErrorCode::kCancelled) {
        cancelled = true;
      } else {
        out.failures.push_back(
            {outcome.chunk, outcome.start_s, outcome.end_s, outcome.result.status()});
      }
      if (on_chunk) on_chunk(outcome);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < workers; ++i) threads.emplace_back(work);
  int skipped = 0;  // the reading thread's

  Result<pipeline::SpeechAudio> read =
      pipeline::ReadSpeechChunks(path, audio, [&](pipeline::SpeechChunk chunk) -> Status {
        if (cancel != nullptr && cancel->load()) return Cancelled("cancelled");
        if (options.skip_chunk && options.skip_chunk(chunk)) {
          ++skipped;
          return Status::Ok();
        }
        if (!queue.Push(std::move(chunk))) return Cancelled("cancelled");
        return Status::Ok();
      });
  if (read.ok()) {
    queue.Done();
  } else {
    queue.Close();
  }
  for (std::thread& t : threads) t.join();
  if (!read.ok()) return read.status();
  if (cancelled || (cancel != nullptr && cancel->load())) return Cancelled("cancelled");

  out.audio = std::move(read).value();
  out.chunks = out.audio.chunks;
  out.skipped_chunks = skipped;
  std::vector<std::string> notes = out.audio.notes;
  for (std::string& note : out.notes) notes.push_back(std::move(note));
  out.notes = std::move(notes);
  std::stable_sort(
      out.segments.begin(), out.segments.end(),
      [](const TranscriptSegment& a, const TranscriptSegment& b) { return a.start_s < b.start_s; });
  std::sort(out.failures.begin(), out.failures.end(),
            [](const ChunkFailure& a, const ChunkFailure& b) { return a.chunk < b.chunk; });
  return out;
}

}  // namespace reel::llm
