#include "pipeline/audio/speech_audio.h"

#include <chrono>
#include <cstdio>
#include <optional>

namespace reel::pipeline {
namespace {

std::string AudioSeconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", s);
  return text;
}

}  // namespace

Result<SpeechAudio> ReadSpeechChunks(const std::string& path, const SpeechAudioOptions& options,
                                     const std::function<Status(SpeechChunk)>& on_chunk) {
  REEL_ASSIGN_OR_RETURN(std::unique_ptr<AudioReader> reader, AudioReader::Open(path, options.read));
  SpeechAudio result;
  result.track = reader->track();
  if (!result.track.has_audio) {
    result.notes.push_back("no audio stream: nothing to transcribe");
    return result;
  }
  SpeechChunkerOptions chunk_options = options.chunks;
  chunk_options.sample_rate = options.read.sample_rate;
  std::vector<int16_t> samples;
  std::vector<SpeechChunk> ready;
  std::optional<SpeechChunker> chunker;
  // The caller's time with each chunk (a backend transcribing it) is not reading time.
  auto deliver = [&]() -> Status {
    for (SpeechChunk& chunk : ready) {
      ++result.chunks;
      const auto start = std::chrono::steady_clock::now();
      Status status = on_chunk(std::move(chunk));
      reader->ExcludeTime(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      REEL_RETURN_IF_ERROR(status);
    }
    ready.clear();
    return Status::Ok();
  };
  while (true) {
    samples.clear();
    REEL_ASSIGN_OR_RETURN(size_t n, reader->Read(&samples));
    if (n == 0) break;
    // The origin is known once the first samples are out.
    if (!chunker) chunker.emplace(chunk_options, reader->track().origin_s);
    chunker->Push(samples.data(), samples.size(), &ready);
    REEL_RETURN_IF_ERROR(deliver());
  }
  if (chunker) {
    chunker->Finish(&ready);
    REEL_RETURN_IF_ERROR(deliver());
    result.audio_s = chunker->audio_s();
    result.speech_s = chunker->speech_s();
  }
  result.track = reader->track();
  result.stats = reader->stats();
  const std::string stream = "audio stream #" + std::to_string(result.track.stream.index);
  if (result.audio_s == 0) {
    result.notes.push_back(stream + " has no samples" +
                           (options.read.end_s || options.read.start_s > 0 ? " in the range" : ""));
  } else if (result.chunks == 0) {
    result.notes.push_back("no speech found in " + AudioSeconds(result.audio_s) + " of " + stream);
  }
  if (result.stats.silence_filled_s >= 0.5) {
    result.notes.push_back(stream + ": " + AudioSeconds(result.stats.silence_filled_s) +
                           " of gaps in its timestamps filled with silence");
  }
  if (result.stats.decode_errors > 0) {
    result.notes.push_back(stream + ": " + std::to_string(result.stats.decode_errors) +
                           " damaged packets skipped");
  }
  if (!result.stats.read_error.empty()) {
    result.notes.push_back(stream + ": reading stopped early (" + result.stats.read_error + ")");
  }
  return result;
}

}  // namespace reel::pipeline
