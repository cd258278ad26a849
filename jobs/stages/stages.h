// The built-in item stages and frame consumers (see jobs/stages/item_stage.h for the contracts).
// Each is stateless and thread-safe; one file per stage.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/text_encoding.h"
#include "jobs/stages/item_stage.h"

namespace reel::jobs {

// Thumbnail (JPEG, long side kThumbnailLongSide) and 64-bit dHash of every frame.
std::unique_ptr<FrameConsumer> MakeThumbnailConsumer();

// Videos and audio files: probes the file into ItemWork::media and the "duration_seconds",
// "format", "video" (or "audio"), "streams" media facts. A video with no video stream but sound is
// an audio item from here on (ItemWork::input.kind and outputs.kind); a file with neither, or an
// audio file with no audio stream, fails naming the file.
std::unique_ptr<ItemStage> MakeProbeStage();

// Videos: samples frames with the job's sampling, resize and decode limits, passing each to
// `consumers` (not owned; they must outlive the stage).
std::unique_ptr<ItemStage> MakeVideoFramesStage(std::vector<const FrameConsumer*> consumers);

// Images: one frame (sample 0, time 0), resized by the job's rule for still images.
std::unique_ptr<ItemStage> MakeImageStage(std::vector<const FrameConsumer*> consumers);

// The segment source of a subtitle item's own cues (a .srt/.vtt input that is nobody's side-car).
inline constexpr const char* kSubtitleFileSource = "subtitles";

// Videos: text subtitle streams ("subtitle:N") and side-car files ("sidecar:NAME"); a broken
// stream or side-car is a warning, not a failure. Subtitle items (.srt/.vtt inputs): their cues
// (kSubtitleFileSource); an unreadable file fails the item. Reads text alone: a video that fails
// (no streams, no video stream) still keeps its subtitles (ItemProcessor::TextOfFailedItem).
std::unique_ptr<ItemStage> MakeSubtitleStage();

// Documents (.txt/.md): chunks of paragraphs as segments with source "document", whose
// start_seconds and end_seconds hold the chunk's 0-based ordinal (documents have no clock).
std::unique_ptr<ItemStage> MakeDocumentStage();

// Documents read by pipeline/documents (IsPagedDocument: PDF, HTML, EPUB, DOCX, PPTX, ODT, ODP):
// one segment per page whose source is where its text came from ("pdf", "ocr", "html", "epub",
// "docx", "pptx", "odt", "odp"; DocumentPageSource in jobs/spec/job_spec.h) and whose start_seconds
// and end_seconds hold the 1-based page number (documents have no clock); the page's label, title
// and OCR confidence in the media fact "pages". With documents.pages images or both, each page's
// picture is a frame (sample_index = page index from 0, time_seconds = page number) passed to
// `consumers`. A page that fails is a warning naming the file and page; an unreadable, encrypted or
// damaged file fails the item.
std::unique_ptr<ItemStage> MakePagedDocumentStage(std::vector<const FrameConsumer*> consumers);

// Videos: the text of their side-car documents (FindSidecarDocuments: talk.pdf beside talk.mp4)
// as segments "slides:NAME", one per page with the page number as start and end, so the talk and
// its deck are asked together (contexts hold them as one document with page markers). A deck
// that cannot be read is a warning. Reads text alone (kept for a video that fails).
std::unique_ptr<ItemStage> MakeSidecarDocumentStage();

// Tells the user how the text of `source` (a segment source, e.g. "sidecar:clip.srt") was
// decoded, when it was not plain UTF-8: a warning "<what>: <info.Describe()>" when the encoding
// was a guess (the fallback) or bytes had to be replaced, an info note when it was certain (a
// byte-order mark, UTF-16's zero bytes); and records it in work.text_encodings. `what` names the
// file (and the stream). Plain UTF-8: nothing.
void ReportTextEncoding(ItemWork& work, const std::string& what, const std::string& source,
                        const TextEncodingInfo& info);

// Builds and stores the context of every prompt (jobs/context/item_context.h), after the item is
// committed; skips contexts already stored with the same settings key. Then retires the item's
// contexts the job no longer builds, deleting their frame files in `frame_cache` (FrameCacheDir)
// that no current context sends (RetireOldContexts).
std::unique_ptr<StoredItemStage> MakeContextStage(std::string frame_cache);

// Transcribes a video's or an audio item's speech into its transcript (segments with source
// "speech"), after the item is committed and before its contexts: unless the transcript of the same
// content and speech settings (SpeechSettingsKey) is finished. Chunks are stored as they are done,
// so a stopped run resumes where it was. A chunk the backend fails leaves the transcript partial
// (the item's questions wait, TranscriptReady; a rerun retries those chunks); audio that cannot be
// read leaves it failed, with a warning (the frames are asked about without it). Audio items are
// transcribed even with speech off (TranscribesSpeech), and one whose audio cannot be read is
// marked failed (it has nothing else). Speech off for a video, or another kind: does nothing.
std::unique_ptr<StoredItemStage> MakeSpeechStage();

class ModelRun;
// Hands the item to the run's model engine (jobs/model/model_run.h), after the context stage: its
// questions are recorded as tasks and, with an endpoint, asked. Null `run`: does nothing.
std::unique_ptr<StoredItemStage> MakeModelStage(ModelRun* run);

// The side-car subtitles of a video: files in the same directory named `<stem>.srt`,
// `<stem>.vtt` or `<stem>.<anything>.srt|vtt` (e.g. clip.en.srt), sorted by name.
std::vector<std::string> FindSidecarSubtitles(const std::string& video_path);

}  // namespace reel::jobs
