// The context builder: one item's frames and text and one prompt become what the model reads,
// counted as the server counts, fitted to the budget (`fit_steps`, each recorded) and described in
// a deterministic manifest; everything before the question is a prefix a job's prompts share.
// Thread safety: BuildContext is a pure function of its arguments.
// Layout, transports and fitting: llm/context/README.md, "Context builder".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "llm/context/chat_template.h"
#include "llm/context/token_counter.h"

namespace reel::llm {

enum class Transport { kImages, kVideo, kFile };
enum class FitStep {
  kDedupe,
  kLowerResolution,
  kThinFrames,
  kShortenText,
  kSplit,
  kDropPagePictures,  // documents: pictures of pages that have a good text layer
};

const char* TransportName(Transport t);
Result<Transport> ParseTransport(const std::string& name);
const char* FitStepName(FitStep s);
Result<FitStep> ParseFitStep(const std::string& name);

struct ContextFrame {
  int64_t sample_index = 0;  // the frame's row in the item's sample
  double time_s = 0;         // seconds from the start of the media
  int width = 0;             // at the model size
  int height = 0;
  std::optional<uint64_t> phash{};  // 64-bit dHash of the frame, for near-duplicate dropping
  bool duplicate = false;  // the vision encoder found it repeats an earlier frame (duplicate_of)
  // Paged documents: the page has a good text layer (its text is not OCR and not almost empty),
  // so its picture is the first thing drop_page_pictures leaves out.
  bool page_has_text = false;
  size_t source = 0;  // a context over several files: its file (ContextInput::sources)
};

struct ContextText {
  std::string source;             // "subtitle:0", "sidecar:a.srt", "document"
  std::optional<double> start_s;  // unset for documents (not timed)
  std::optional<double> end_s;
  std::string text;
  std::string label = {};  // paged documents: the page's label ("xii") when the file has labels
  size_t file = 0;  // a context over several files: the file a timed text belongs to (sources)
};

// kSubtitle and kAudio are timed text alone (a subtitle file's cues, an audio file's transcript):
// no frames, each line with its time; split cuts them into time ranges.
enum class ContextItemKind { kVideo, kImage, kDocument, kSubtitle, kAudio };

// One file of a context over several videos and images (`reel ask a.mp4 b.mp4 diagram.png
// "question"`): the frames of all files are ContextInput::frames, file after file (videos, then
// images), each naming its file (ContextFrame::source); each video's times are from its own
// start.
struct ContextSource {
  std::string path;  // as stored; the context names the file by its file name
  ContextItemKind kind = ContextItemKind::kVideo;  // kVideo or kImage
  int source_width = 0;  // upright size before resizing (lower_resolution)
  int source_height = 0;
  double duration_s = 0;
  // Opaque here: what the caller's frame cache names this file's frames by (jobs/context).
  std::string frame_source;
};

struct ContextInput {
  std::string item_path;
  ContextItemKind kind = ContextItemKind::kVideo;
  std::vector<ContextFrame> frames;  // in time order; one for an image
  int source_width = 0;              // the video's upright size before resizing (lower_resolution)
  int source_height = 0;
  double duration_s = 0;
  std::vector<ContextText> texts;
  // A document read as pages (PDF, HTML, EPUB, office): frames are page pictures and timed texts
  // are page texts, both with the page number as their time (time_s, start_s). Each page is
  // written as "Page N (label L):", its text, then its picture; frames keep their own sizes (a
  // lower_resolution max_pixels applies to each); the transport is always images; split cuts
  // the pages into consecutive page ranges.
  bool paged = false;
  // Several files in one context (frames[i].source indexes this; item_path is the first file's,
  // the item the answer is stored under); empty: the item alone. Such a context sends frames as
  // images (transport "images" only): each file headed "Video k: NAME" or "Image k: NAME", each
  // frame with its time in its video. The fit steps treat the files alike: one frame size rule
  // (the same max_pixels), frames thinned in proportion (the same rate for every video, each
  // video's first and last kept), near duplicates only within a file, and a split keeps the
  // heading of every file a segment holds.
  std::vector<ContextSource> sources;
};

struct FrameSize {
  int width = 0;
  int height = 0;
};

struct ContextOptions {
  int64_t token_budget = 1048576;
  int64_t reserve_output_tokens = 16384;
  Transport transport = Transport::kImages;
  int server_num_frames = 32;     // video: frames the server keeps of a video (0 or less: all)
  double server_fps = 1.0;        // video: rate the server assumes for made-up frame times
  bool server_timestamps = true;  // video: vLLM writes (made-up) times, SGLang none
  std::vector<FitStep> fit_steps = {FitStep::kDedupe, FitStep::kLowerResolution,
                                    FitStep::kThinFrames, FitStep::kShortenText, FitStep::kSplit};
  int dedupe_max_distance = 4;        // dHash bits that may differ for "near-duplicate"
  int64_t min_pixels_floor = 100352;  // lower_resolution stops here (128 tokens per pair)
  double min_fps = 0.25;              // thin_frames keeps at least this many frames a second
  int resize_factor = 28;
  double max_aspect_ratio = 200;
  bool documents_first = true;
  int prefix_block = 128;  // pad the shared prefix to a multiple of this (exact counts; 0: off)
  ThinkingMode thinking_mode = ThinkingMode::kAdaptive;
  std::string system_prompt;  // "" = the template's default
  std::string question;
  std::string reduce_question;  // split: asked over the segment answers ("" = default)
};

struct TokenBreakdown {
  int64_t text = 0;    // template, prompts, times, subtitles, documents, padding
  int64_t image = 0;   // image parts: placeholders and their start/end tokens
  int64_t video = 0;   // video parts: placeholders, start/end tokens, server timestamps
  int64_t total = 0;   // text + image + video (what the server reports as prompt_tokens)
  int64_t margin = 0;  // the template's allowance for what is not known exactly
};

// One piece of the user turn.
struct ContextPart {
  enum class Kind { kText, kImage, kVideo, kVideoFile };
  Kind kind = Kind::kText;
  std::string text;            // kText: the text
  std::vector<size_t> frames;  // kImage (one), kVideo (several): indices into input frames
  int width = 0, height = 0;   // kImage, kVideo: the size frames are sent at
};

// One request: the whole item, or one segment of a split video.
struct ContextSegment {
  double start_s = 0, end_s = 0;
  std::vector<ContextPart> parts;  // the user turn, question last
  TokenBreakdown tokens;
  int64_t prefix_tokens = 0;    // tokens before the question
  std::string padding;          // text added before the question for block alignment
  bool prefix_aligned = false;  // prefix_tokens is a multiple of prefix_block (by exact count)
  std::string system_prompt;    // as sent
  // Several files: the segment's first and last frame ("a.mp4 0.0 s", "diagram.png").
  std::string first_label, last_label;
};

struct FitAction {
  std::string step;    // a FitStepName, or "split" for the server's frame limit
  std::string detail;  // what was done and why
  int64_t tokens_before = 0;
  int64_t tokens_after = 0;
};

struct Context {
  std::string template_name;
  bool template_exact = false;
  std::string count_method;
  bool count_exact = false;
  Transport transport = Transport::kImages;
  int64_t limit = 0;  // tokens a request may hold: budget - reserved output - margin
  std::vector<ContextSegment> segments;  // 1 unless split
  std::vector<FitAction> fit;
  std::vector<size_t> kept_frames;        // indices into the input frames, after the fit steps
  int frame_width = 0, frame_height = 0;  // frame size after the fit steps
  // Paged documents: the size each input frame is sent at (0x0 when it is not sent).
  std::vector<std::pair<int, int>> frame_sizes;
  int64_t frame_max_pixels = 0;  // lower_resolution: the max_pixels that gives that size (0: none)
  std::string reduce_question;   // split: the map-reduce question over the answers
  bool paged = false;            // a paged document: segments' start_s and end_s are page numbers
  std::vector<FrameSize> source_sizes;  // several files: each file's frame size after the fit
  // The manifest: everything above, as canonical JSON (keys sorted, fixed number formatting).
  std::string ManifestJson(const ContextInput& input, size_t segment) const;
};

// Builds the context. Errors: kLimitExceeded when it cannot fit (the message says by how much
// and what was tried); kInvalidArgument for inconsistent options.
Result<Context> BuildContext(const ContextInput& input, const ContextOptions& options,
                             const ChatTemplate& chat_template, const TokenCounter& counter);

}  // namespace reel::llm
