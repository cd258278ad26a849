#include <algorithm>
#include <cctype>
#include <filesystem>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/utf8.h"
#include "jobs/stages/stages.h"
#include "pipeline/subtitles.h"

namespace reel::jobs {
namespace {

void AppendSegments(const std::vector<pipeline::TextSegment>& cues, const std::string& source,
                    std::vector<storage::SegmentRecord>* out) {
  for (const pipeline::TextSegment& cue : cues) {
    if (cue.text.empty()) continue;
    storage::SegmentRecord segment;
    segment.source = source;
    segment.start_seconds = cue.start_s;
    segment.end_seconds = cue.end_s;
    segment.text = cue.text;
    if (!cue.language.empty()) segment.language = cue.language;
    out->push_back(std::move(segment));
  }
}

// "stream:3" -> "subtitle:3".
std::string StreamSource(const std::string& source) {
  const std::string prefix = "stream:";
  if (source.starts_with(prefix)) return "subtitle:" + source.substr(prefix.size());
  return source;
}

class SubtitleStage final : public ItemStage {
 public:
  const char* name() const override { return "subtitles"; }
  bool AppliesTo(const ItemWork& work) const override {
    return work.input.kind == InputKind::kVideo || work.input.kind == InputKind::kSubtitle ||
           work.input.kind == InputKind::kAudio;
  }
  bool reads_text_alone() const override { return true; }
  Status Run(ItemWork& work) const override {
    std::vector<storage::SegmentRecord>& segments = work.outputs.segments;
    const std::string& path = work.input.path;
    const pipeline::SubtitleReadOptions options{.fallback_encoding =
                                                    work.job->text.fallback_encoding};
    if (work.input.kind == InputKind::kSubtitle) {
      TextEncodingInfo encoding;
      REEL_ASSIGN_OR_RETURN(std::vector<pipeline::TextSegment> cues,
                            pipeline::ReadSubtitleFile(path, options, &encoding));
      AppendSegments(cues, kSubtitleFileSource, &segments);
      ReportTextEncoding(work, path, kSubtitleFileSource, encoding);
      work.media_facts.emplace_back("cues", std::to_string(cues.size()));
      if (!cues.empty()) {
        double end = 0;
        for (const auto& cue : cues) end = std::max(end, cue.end_s);
        work.media_facts.emplace_back("duration_seconds", std::to_string(end));
      }
      return Status::Ok();
    }
    // A video or an audio file: its own text streams, then the side-car files beside it.
    bool has_text_stream = false;
    if (work.media) {
      for (const pipeline::StreamInfo& s : work.media->streams) {
        has_text_stream |= s.type == pipeline::StreamType::kSubtitle;
      }
    }
    if (has_text_stream || !work.media) {
      std::vector<pipeline::StreamTextEncoding> encodings;
      Result<std::vector<pipeline::TextSegment>> cues =
          pipeline::ExtractSubtitleStreams(path, options, &encodings);
      if (cues.ok()) {
        for (const pipeline::TextSegment& cue : *cues) {
          AppendSegments({cue}, StreamSource(cue.source), &segments);
        }
        for (const pipeline::StreamTextEncoding& stream : encodings) {
          const std::string source = "subtitle:" + std::to_string(stream.stream_index);
          ReportTextEncoding(work,
                             path + ": subtitle stream " + std::to_string(stream.stream_index) +
                                 " (" + std::to_string(stream.cues) +
                                 (stream.cues == 1 ? " cue)" : " cues)"),
                             source, stream.info);
        }
      } else {
        work.warnings.push_back(path + ": subtitle streams skipped: " + cues.status().message());
      }
    }
    for (const std::string& sidecar : FindSidecarSubtitles(path)) {
      if (work.cancelled()) return Cancelled(path + ": stopped by request");
      TextEncodingInfo encoding;
      Result<std::vector<pipeline::TextSegment>> cues =
          pipeline::ReadSubtitleFile(sidecar, options, &encoding);
      if (!cues.ok()) {
        work.warnings.push_back(path + ": side-car subtitles skipped: " + cues.status().message());
        continue;
      }
      const std::string source =
          "sidecar:" + DisplayPath(std::filesystem::path(sidecar).filename().string());
      AppendSegments(*cues, source, &segments);
      ReportTextEncoding(work, sidecar, source, encoding);
    }
    return Status::Ok();
  }
};

}  // namespace

std::vector<std::string> FindSidecarSubtitles(const std::string& video_path) {
  const std::string stem = std::filesystem::path(video_path).stem().string();
  return FilesBeside(video_path, [&](const std::string& name) {
    const std::string ext = Lower(std::filesystem::path(name).extension().string());
    if (ext != ".srt" && ext != ".vtt") return false;
    const std::string base = name.substr(0, name.size() - ext.size());
    return base == stem || base.starts_with(stem + ".");
  });
}

std::unique_ptr<ItemStage> MakeSubtitleStage() { return std::make_unique<SubtitleStage>(); }

}  // namespace reel::jobs
