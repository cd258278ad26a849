// Job files: what a Reel batch does, parsed and checked before any work starts.
//
// A job file is YAML (docs/job-file.md lists every key). ParseJobText / LoadJobFile turn it into a
// JobSpec with every default filled in, or fail with ONE kInvalidArgument Status whose message
// lists every problem found, one per line, each as "file:line:column: message" (1-based). Nothing
// here touches media: the only file-system access is reading the job file (LoadJobFile) and listing
// inputs (ExpandInputs). All functions are thread-compatible and keep no global state; string
// values may contain ${VAR} / ${VAR:-default}, expanded from the environment when parsed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/text_encoding.h"
#include "llm/context/context_builder.h"
#include "pipeline/documents/document.h"
#include "pipeline/limits.h"
#include "pipeline/sampling.h"
#include "pipeline/smart_resize.h"

namespace reel::jobs {

// The only format version so far; `version:` in the file must be this (or absent).
inline constexpr int kJobFormatVersion = 1;

// What an input file holds. kAuto: guessed from the extension when inputs are expanded.
// kAudio: sound and no picture (.mp3, .m4a, .aac, .wav, .flac, .ogg, .oga, .opus; a video
// container with no video stream is found to be one when it is probed): no frames, its speech is
// its text (TranscribesSpeech).
enum class InputKind { kAuto, kVideo, kImage, kDocument, kSubtitle, kAudio };

enum class ThinkingMode { kEnabled, kDisabled, kAdaptive };

// What a prompt asks for. kQuestion: the job's question, the answer stored as written.
// kChapters: the built-in chapters prompt (llm/answers/chapters.h; jobs/spec/prompt_kinds.h): its
// question and JSON schema, the answer checked against the item's frames and asked again once when
// it fails.
enum class PromptKind { kQuestion, kChapters };

// What to do when an item's frames and text do not fit the context budget.
enum class FitStrategy {
  kThinFrames,       // drop frames evenly (first and last kept) until it fits
  kLowerResolution,  // lower max_pixels step by step until it fits
  kSplit,            // cut the video into consecutive parts, one request each
  kFail,             // fail the item
};

enum class VisionDType { kF32, kF16, kBF16 };

// Which timed text a context takes when a video has both subtitles (streams, side-car files) and
// a transcript of its speech. Either alone is always used.
enum class SpeechPrefer {
  kSubtitles,  // the subtitles; the transcript only when there are none
  kSpeech,     // the transcript; the subtitles only when there is none
  kBoth,       // both, each cue and segment at its time
};

// One `inputs:` entry as written (after ${VAR} expansion): a path or a glob relative to
// JobSpec::base_dir (or absolute).
struct InputSpec {
  std::string path;
  InputKind kind = InputKind::kAuto;
  std::string where;  // "file:line:column" of the entry, for messages; not a setting
};

struct ResizeSpec {
  pipeline::ResizeOptions frames;  // video frames (and images in long_side / none mode)
  // Still images in smart mode use this max_pixels instead of frames.smart.max_pixels.
  int64_t image_max_pixels = pipeline::kImageMaxPixels;
};

// The local vision encoder (optional; when disabled the server encodes the frames).
struct VisionSpec {
  bool enabled = false;
  std::string weights;  // shards' directory or index file, as written (see ResolveJobPath)
  int batch_size = 8;   // frame pairs per encoder batch
  VisionDType dtype = VisionDType::kBF16;
  int threads = 0;  // 0 = one per core
  // Frames are encoded for features at this area (smart resize, multiples of 28), not at the
  // model's size: 4 TFLOP per 560x1008 pair is more than a CPU can spend on every frame.
  // 0 = the frames' own size.
  int64_t max_pixels = 50176;  // 224 x 224: 256 patches per pair
  // A frame pair whose pooled feature has a cosine similarity above this with the last kept
  // pair is marked a near-duplicate (frames.duplicate_of) and left out of contexts. 1 = never.
  double dedup_threshold = 0.98;
};

struct ContextSpec {
  int64_t token_budget = 1048576;  // prompt + output must fit in this many tokens
  // Tokens kept free for the answer; defaults to model.max_output_tokens and may not be less.
  int64_t reserve_output_tokens = 0;
  FitStrategy fit_strategy = FitStrategy::kThinFrames;
  // The fit steps in order; empty: the ones fit_strategy stands for (FitStepsOf).
  std::vector<llm::FitStep> fit_steps;
  std::string tokenizer;                     // tokenizer.json (see ResolveJobPath); "" = estimate
  std::string chat_template = "minimax-m3";  // "minimax-m3" or "chatml"
  llm::Transport transport = llm::Transport::kImages;
  int server_num_frames = 32;     // video: frames the server keeps per video (0: all)
  double server_fps = 1.0;        // video: the rate the server assumes for frame times
  bool server_timestamps = true;  // video: the server writes times (vLLM) or not (SGLang)
  bool documents_first = true;    // documents before the video ("before") or after ("after")
  double min_fps = 0.25;          // thin_frames keeps at least this many frames a second
  int64_t min_pixels = 100352;    // lower_resolution stops at this frame area
  int prefix_block = 128;         // the shared prefix ends on a multiple of this (0: off)
  // Text files (documents, subtitle files) whose text every context holds beside the item's own,
  // as documents named by their file name (see ResolveJobPath); how `reel ask FILE... QUESTION`
  // asks one question over a video and notes together. Their content is part of each context's
  // settings key: an edited file rebuilds the contexts.
  std::vector<std::string> attach;
  // Set by `reel ask` over several videos and images (so its stored job has it), or a job file's
  // context.group (entries named as `inputs` names them, no globs): these inputs are not asked
  // about alone; their frames are part of the contexts of the inputs not listed here, the item the
  // question is asked about (jobs/context/group_context.h).
  std::vector<std::string> group;
};

// The fit steps a context uses: context.fit_steps, or those fit_strategy stands for.
std::vector<llm::FitStep> FitStepsOf(const ContextSpec& context);

struct ModelSpec {
  std::optional<std::string> endpoint;  // base URL; none = prepare / export only
  std::string name = "MiniMax-M3";      // the request's `model` field
  std::string api_key_env;              // NAME of the variable holding the key; "" = no auth
  ThinkingMode thinking_mode = ThinkingMode::kAdaptive;
  double temperature = 1.0;
  double top_p = 0.95;
  int top_k = 40;  // -1 disables
  std::optional<int64_t> seed;
  int64_t max_output_tokens = 16384;  // sent as max_completion_tokens
  int concurrency = 4;                // requests in flight
  double connect_timeout_s = 10;
  double read_timeout_s = 3600;  // a 1M-token prefill can take minutes
  // One request's whole time on the wire, over its attempts: bounds a server that trickles bytes
  // or streams without end (llm::ModelClientOptions::request_timeout_s).
  double request_timeout_s = 7200;
  int retries = 2;  // retries of transient HTTP failures per request
  // The server's dialect: "auto" (recognised from GET /v1/models), "vllm", "sglang", "openai".
  std::string dialect = "auto";
  bool stream = false;         // ask for server-sent events (the stored result is the same)
  bool verify_tokens = false;  // POST /tokenize the first request of each shape; record the diff
  double requests_per_minute = 0;   // client-side rate limit; 0 = none
  double tokens_per_minute = 0;     // prompt estimate + output cap per request; 0 = none
  double circuit_give_up_s = 1800;  // the server down this long: waiting requests fail
  int jpeg_quality = 90;            // frames sent as JPEG at this quality (1-100)
  // Map-reduce over the segments of a split video: the question asked over their answers
  // ("" = the built-in one); a prompt's own `reduce` wins.
  std::string reduce_question;
  // Cost of a run (report): per million prompt / cached prompt / completion tokens, or per
  // GPU-hour of the run's model time times `gpus`. 0 = not priced.
  double price_input_per_million = 0;
  double price_cached_input_per_million = 0;
  double price_output_per_million = 0;
  double price_gpu_hour = 0;
  int gpus = 1;
};

struct PromptSpec {
  std::string id;  // unique in the job; [A-Za-z0-9_.-]+ ("chapters" for kind chapters)
  PromptKind kind = PromptKind::kQuestion;
  std::string system;    // "" = no system message
  std::string question;  // kChapters: "" = the built-in question
  // A JSON schema the answer must follow (compact JSON text), given inline; "" = free text.
  std::string json_schema;
  // ...or a file holding it (see ResolveJobPath), read when the run starts.
  std::string json_schema_file;
  std::string reduce;  // map-reduce question over segment answers ("" = model.reduce_question)
};

// Speech to timed text (llm/speech/transcriber.h; docs/speech.md): the audio track of each video
// transcribed into segments with source "speech", searchable and interleaved with the frames like
// subtitles. Off by default. A changed setting here re-transcribes; it redoes nothing else.
struct SpeechSpec {
  bool enabled = false;
  std::string backend = "auto";         // auto (openai with an endpoint, else pocketsphinx) | ...
  std::optional<std::string> endpoint;  // a server with POST /v1/audio/transcriptions
  // openai: the served model ("" = "whisper-1"); pocketsphinx: a model folder ("" = Debian's).
  std::string model;
  // The spoken language: picks the audio stream by its tag and is sent to the server; "" = the
  // default stream, the server detects it (pocketsphinx: English).
  std::string language;
  std::string api_key_env;  // NAME of the variable holding the server's key; "" = no auth
  SpeechPrefer prefer = SpeechPrefer::kSubtitles;
  double max_chunk_s = 30;  // longest speech chunk (capped at the backend's window)
  int concurrency = 4;      // chunks in flight (server backends)
  double connect_timeout_s = 10;
  double read_timeout_s = 600;     // silence allowed while a server transcribes one chunk
  int retries = 2;                 // retries of transient failures per chunk
  double time_limit_s = 6 * 3600;  // one item's transcription, reading and transcribing
};

struct StorageSpec {
  std::string database;  // as written (see ResolveJobPath); default "<name>.db"
  // Model-size JPEGs of the frames requests send (jobs/context/context_frames.h); "" =
  // "<database>.frames".
  std::string frame_cache;
};

// Reading text whose encoding is not declared (side-car subtitles, subtitle items, documents,
// container subtitle streams): base/text_encoding.h.
struct TextSpec {
  // Used for text that is neither UTF-8 nor UTF-16/32 with a byte-order mark; any name iconv
  // knows; "utf-8" = never guess (bad bytes become U+FFFD).
  std::string fallback_encoding = std::string(kDefaultFallbackEncoding);
};

// What a document item (PDF, HTML, EPUB, DOCX, PPTX, ODT, ODP; not .txt/.md) keeps of its pages
// (docs/documents.md). Page pictures follow the still-image resize rule (resize.mode, factor,
// min_pixels and image_max_pixels), rendered straight at that size.
enum class DocumentPages {
  kText,    // text only: no page pictures (scanned pages are still read by OCR)
  kImages,  // pictures of every page in contexts; the text is stored (search) but not sent
  kBoth,    // text and a picture of every page (pictures of pages with a good text layer are
            // the first thing the context's fit steps drop)
};

struct DocumentsSpec {
  DocumentPages pages = DocumentPages::kBoth;
  int first_page = 1;    // pages read, 1-based and inclusive
  int last_page = 0;     // 0 = to the end
  int max_pages = 2000;  // pages past this are left out (the item says so)
  bool ocr = true;       // read scanned pages (no or almost no text layer) with Tesseract
  std::vector<std::string> ocr_languages = {"eng"};  // each needs tesseract-ocr-LANG
  int ocr_dpi = 300;
  double dpi = 144;            // a page is measured at this resolution before the resize rule
  bool office_render = false;  // office files laid out by LibreOffice (soffice) for pictures
};

struct LimitsSpec {
  pipeline::MediaLimits media;  // time_limit_s is the per-item limit (probe to last frame)
  int64_t max_file_bytes = int64_t{8} << 30;  // larger inputs fail their item
  int item_retries = 1;                       // reruns of an item after a transient failure
};

struct JobSpec {
  int version = kJobFormatVersion;
  std::string name;
  std::string description;
  std::string source;    // the job file's name as used in messages
  std::string base_dir;  // relative input paths start here ("" = current directory)
  std::vector<InputSpec> inputs;
  pipeline::SamplingOptions sampling;
  ResizeSpec resize;
  VisionSpec vision;
  ContextSpec context;
  ModelSpec model;
  SpeechSpec speech;
  std::vector<PromptSpec> prompts;
  StorageSpec storage;
  TextSpec text;
  DocumentsSpec documents;
  LimitsSpec limits;
  // Things worth printing that do not stop the job ("file:line:column: message").
  std::vector<std::string> warnings;
};

// Limits on the job file itself and hooks for tests.
struct ParseOptions {
  uint64_t max_file_bytes = 1 << 20;
  int max_depth = 32;  // nesting of maps and lists
  int max_inputs = 10000;
  int max_prompts = 1000;
  int max_nodes = 200000;  // after alias expansion
  // Bytes of text in all values and keys after alias expansion (an alias counts at every use).
  uint64_t max_expanded_bytes = 16 << 20;
  // Looks up ${VAR}; nullopt = unset. Default (empty function): the process environment.
  std::function<std::optional<std::string>(const std::string&)> lookup_env;
};

// Parses and validates `text`. `source` names the file in messages; `base_dir` is where relative
// paths start. Errors: kInvalidArgument listing every problem, one per line.
Result<JobSpec> ParseJobText(std::string_view text, const std::string& source,
                             const std::string& base_dir, const ParseOptions& options = {});

// Reads `path` (relative paths in it start at its directory) and parses it. Errors: kNotFound or
// kIoError if it cannot be read; otherwise as ParseJobText (an oversize file is kInvalidArgument).
Result<JobSpec> LoadJobFile(const std::string& path, const ParseOptions& options = {});

// The job with every default explicit, as YAML that ParseJobText accepts and that parses back to
// the same settings (for `reel validate`). A job read from a file names its directory (where its
// relative paths start) in a comment line; ResolvedJobBaseDir reads it back.
std::string RenderResolvedJob(const JobSpec& job);

// The directory a RenderResolvedJob text names as the start of its relative paths (the job
// file's), "" when it names none: pass it to ParseJobText when parsing a stored spec, so paths in
// it resolve as they did for the run that stored it.
std::string ResolvedJobBaseDir(std::string_view spec_text);

// A canonical text of every setting that changes an item's frames: sampling (only the fields the
// policy uses), resize (only the active mode's) and the decode limits. Stable across releases
// unless its first line (a format tag) changes. Prompts, model and storage do not enter.
std::string FrameSettingsKey(const JobSpec& job);

// The settings that change what the vision stage stores for an item (the weights by a cheap
// identity: names, sizes and times of the checkpoint's files; dtype; max_pixels; the dedup
// threshold), or "" when vision is off.
std::string VisionSettingsKey(const JobSpec& job);

// The settings that change what a document item (one read by pipeline/documents) stores: the
// documents section, the still-image resize rule its page pictures follow, and the time limit.
std::string DocumentSettingsKey(const JobSpec& job);

// How a job's document items are read (jobs/stages/paged_document_stage.cc, and again for the
// context's page pictures): the documents section, the still-image resize rule, the limits.
pipeline::DocumentOptions DocumentOptionsFor(const JobSpec& job);

// Whether `path` is read by pipeline/documents (PDF, HTML, EPUB, office files) rather than as
// plain text: by its extension, else (a `kind: document` file named otherwise) by its first bytes.
// .txt, .md and .markdown are plain text.
bool IsPagedDocument(const std::string& path);

// The side-car documents of a video (a talk's slide deck): files in the same directory named
// `<stem>.<ext>` for a document extension pipeline/documents reads (talk.pdf, talk.pptx beside
// talk.mp4), sorted by name. The video's item reads their pages' text (segments
// "slides:NAME", the page number as their time; jobs/stages/stages.h); ExpandInputs leaves
// them out as items of their own.
std::vector<std::string> FindSidecarDocuments(const std::string& video_path);

// The segment source of a video's side-car document's pages: "slides:NAME".
inline constexpr std::string_view kSlidesSourcePrefix = "slides:";

// The segment source of a document page (jobs/stages/stages.h, MakePagedDocumentStage): "ocr"
// for text read by OCR, else the format's name ("pdf", "html", "epub", "docx", ...).
std::string DocumentPageSource(std::string_view format_name, bool ocr);

// Whether a segment source is a document page's (its start_seconds is then a page number): a
// document item's page, or a video's side-car document's ("slides:NAME").
bool IsDocumentPageSource(std::string_view source);

// The documents section as resolved YAML (part of RenderResolvedJob).
std::string RenderDocumentsSection(const DocumentsSpec& documents);

// The backend speech.backend stands for: "openai" for auto with an endpoint, else
// "pocketsphinx"; an explicit one as written.
std::string SpeechBackendOf(const SpeechSpec& speech);

// The settings that change an item's transcript (the backend, model, language, chunk length and
// the sampled range), with the item's content hash, as a canonical text; "" when speech is off.
// The server's address and timeouts do not enter: another server with the same model gives the
// same transcript.
std::string SpeechSettingsKey(const JobSpec& job, const std::string& content_hash);

// Whether the speech of an item is transcribed: an audio item's always (its transcript is all it
// has to ask about; the speech section's settings, even with `speech.enabled: false`, which
// governs videos, whose speech costs time beside their frames), a video's with speech.enabled.
bool TranscribesSpeech(const JobSpec& job, bool audio_item);

// SpeechSettingsKey for an item that TranscribesSpeech (the same text for a video with speech on
// and for an audio item), "" for one that does not.
std::string ItemSpeechSettingsKey(const JobSpec& job, bool audio_item,
                                  const std::string& content_hash);

struct InputFile {
  std::string path;                   // base_dir joined with the match, lexically normalised
  InputKind kind = InputKind::kAuto;  // never kAuto
  bool operator==(const InputFile&) const = default;
};

// Lists the input files: globs (`*` and `?` within a name, `**` for any number of directories)
// expanded, directories walked recursively, kinds guessed, sorted by path, duplicates removed (the
// first entry's kind wins). Names starting with '.' match only patterns that start with '.'.
// Repeated `**` components count as one, and the walk visits each directory at most once per
// pattern component. Subtitle files (.srt, .vtt) that are side-cars of a video in the list
// (FindSidecarSubtitles), and documents that are (FindSidecarDocuments), are left out: the
// video's item reads them (a warning if a plain path named one). A glob that matches nothing, and
// files a glob or directory finds whose kind cannot be guessed (unless another entry lists them),
// are warnings appended to `warnings` (if given). Errors: kNotFound naming every plain path that
// does not exist; kInvalidArgument for a plain file whose kind cannot be guessed; kLimitExceeded
// past `max_files` files, or once the globs and directories have listed `max_directories`
// directories in all.
Result<std::vector<InputFile>> ExpandInputs(const JobSpec& job,
                                            std::vector<std::string>* warnings = nullptr,
                                            size_t max_files = 1000000,
                                            size_t max_directories = 1000000);

// A path from the job file (input, database, weights) joined to `base_dir` unless absolute,
// lexically normalised.
std::string ResolveJobPath(const std::string& base_dir, const std::string& path);

// The kind implied by a file name's extension (case-insensitive), or kAuto if unknown.
InputKind GuessInputKind(std::string_view path);

const char* InputKindName(InputKind kind);
const char* ThinkingModeName(ThinkingMode mode);
const char* PromptKindName(PromptKind kind);
const char* FitStrategyName(FitStrategy strategy);
const char* VisionDTypeName(VisionDType dtype);
const char* DocumentPagesName(DocumentPages pages);
const char* SpeechPreferName(SpeechPrefer prefer);

}  // namespace reel::jobs
