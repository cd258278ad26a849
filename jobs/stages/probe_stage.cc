#include <nlohmann/json.hpp>

#include <optional>

#include "jobs/json_output.h"
#include "jobs/stages/stages.h"
#include "pipeline/probe.h"

namespace reel::jobs {
namespace {

std::string FactText(const nlohmann::json& j) { return DumpJson(j); }

class ProbeStage final : public ItemStage {
 public:
  const char* name() const override { return "probe"; }
  bool AppliesTo(const ItemWork& work) const override {
    return work.input.kind == InputKind::kVideo || work.input.kind == InputKind::kAudio;
  }
  Status Run(ItemWork& work) const override {
    const std::string& path = work.input.path;
    REEL_ASSIGN_OR_RETURN(pipeline::MediaInfo info, pipeline::Probe(path, work.job->limits.media));
    std::optional<size_t> audio;  // the first audio stream, for the facts
    for (size_t i = 0; i < info.streams.size(); ++i) {
      if (info.streams[i].type == pipeline::StreamType::kAudio) {
        audio = i;
        break;
      }
    }
    if (!info.best_video && !audio) {
      return InvalidArgument(path + ": no video stream and no audio stream (" +
                             std::to_string(info.streams.size()) +
                             (info.streams.size() == 1 ? " stream" : " streams") +
                             " of other kinds): nothing Reel can sample or transcribe");
    }
    if (work.input.kind == InputKind::kAudio && !audio) {
      return InvalidArgument(path +
                             ": no audio stream (it holds a video stream: list it with 'kind: "
                             "video' to sample its frames)");
    }
    if (work.input.kind == InputKind::kVideo && !info.best_video) {
      // Sound alone in a video container (a recorded meeting saved as .mp4, a song in .mkv): an
      // audio item, transcribed, with no frames.
      work.input.kind = InputKind::kAudio;
      work.outputs.kind = storage::ItemKind::kAudio;
      work.notes.push_back(path +
                           ": no video stream; read as an audio file (its speech is "
                           "transcribed)");
    }
    nlohmann::json streams = nlohmann::json::array();
    for (const pipeline::StreamInfo& s : info.streams) {
      nlohmann::json j = {{"index", s.index},
                          {"type", pipeline::StreamTypeName(s.type)},
                          {"codec", s.codec},
                          {"duration_seconds", s.duration_s}};
      if (!s.language.empty()) j["language"] = s.language;
      if (!s.title.empty()) j["title"] = s.title;
      streams.push_back(std::move(j));
    }
    // The frames stage replaces duration_seconds with the video's frame timeline when it has one.
    work.media_facts.emplace_back("duration_seconds", FactText(info.duration_s));
    work.media_facts.emplace_back("container_duration_seconds", FactText(info.duration_s));
    work.media_facts.emplace_back("format", FactText(info.format));
    work.media_facts.emplace_back("streams", FactText(streams));
    if (info.best_video) {
      const pipeline::StreamInfo& v = info.streams[*info.best_video];
      nlohmann::json video = {{"index", v.index},
                              {"codec", v.codec},
                              {"width", v.display_width},
                              {"height", v.display_height},
                              {"fps", v.fps},
                              {"frames", v.frames},
                              {"rotation", v.rotation},
                              {"sample_aspect_ratio", std::to_string(v.sample_aspect.num) + ":" +
                                                          std::to_string(v.sample_aspect.den)},
                              {"pixel_format", v.pixel_format}};
      work.media_facts.emplace_back("video", FactText(video));
    }
    if (audio && work.input.kind == InputKind::kAudio) {
      const pipeline::StreamInfo& a = info.streams[*audio];
      nlohmann::json sound = {{"index", a.index},
                              {"codec", a.codec},
                              {"sample_rate", a.sample_rate},
                              {"channels", a.audio_channels}};
      if (!a.language.empty()) sound["language"] = a.language;
      work.media_facts.emplace_back("audio", FactText(sound));
    }
    work.media = std::move(info);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<ItemStage> MakeProbeStage() { return std::make_unique<ProbeStage>(); }

}  // namespace reel::jobs
