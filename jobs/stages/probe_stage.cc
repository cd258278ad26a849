#include <nlohmann/json.hpp>

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
    return work.input.kind == InputKind::kVideo;
  }
  Status Run(ItemWork& work) const override {
    REEL_ASSIGN_OR_RETURN(pipeline::MediaInfo info,
                          pipeline::Probe(work.input.path, work.job->limits.media));
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
    work.media = std::move(info);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<ItemStage> MakeProbeStage() { return std::make_unique<ProbeStage>(); }

}  // namespace reel::jobs
