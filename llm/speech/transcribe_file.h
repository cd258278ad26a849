// A media file's speech to a timed transcript, chunks transcribed while the audio is read,
// `concurrency` at a time. A failed chunk is recorded in FileTranscript::failures and the rest
// goes on (partial, never silently short). Details: llm/README.md, "Transcribing a file".
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "llm/speech/transcriber.h"
#include "pipeline/audio/speech_audio.h"

namespace reel::llm {

struct TranscribeFileOptions {
  pipeline::SpeechAudioOptions audio;  // stream, range; max_chunk_s is capped at the backend's
  int concurrency = 1;                 // chunks in flight at once
  // Chunks not to transcribe (e.g. stored by an earlier run that was stopped): asked for each
  // chunk as it is read; true leaves it out of the work and of the result. Chunks are the same
  // from run to run for the same file and options, so (index, start) names one.
  std::function<bool(const pipeline::SpeechChunk&)> skip_chunk;
};

struct ChunkFailure {
  int chunk = 0;
  double start_s = 0;
  double end_s = 0;
  Status status;
};

struct ChunkOutcome {
  int chunk = 0;
  double start_s = 0;
  double end_s = 0;
  double speech_s = 0;
  Result<ChunkTranscript> result = ChunkTranscript{};
};

struct FileTranscript {
  std::string path;
  pipeline::SpeechAudio audio;  // the stream read, its length, notes (no audio, no speech)
  std::string backend;
  std::string model;
  std::vector<TranscriptSegment> segments;  // in time order
  int chunks = 0;
  int skipped_chunks = 0;              // left out by skip_chunk
  std::vector<ChunkFailure> failures;  // chunks not transcribed, in order
  std::vector<std::string> notes;      // the audio's notes, then the backend's (each once)

  bool complete() const { return failures.empty(); }
};

// Errors: what reading the audio gives (the file cannot be opened, too damaged, time limit);
// kCancelled when `cancel` was set. Failures of single chunks are not errors (see failures).
Result<FileTranscript> TranscribeFile(
    const std::string& path, Transcriber& transcriber, const TranscribeFileOptions& options,
    const std::atomic<bool>* cancel = nullptr,
    const std::function<void(const ChunkOutcome&)>& on_chunk = nullptr);

}  // namespace reel::llm
