// reel probe [--json] FILE...
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/number_checks.h"
#include "jobs/json_output.h"
#include "pipeline/probe.h"

namespace reel::cli {
namespace {

nlohmann::json ToJson(const pipeline::MediaInfo& info) {
  nlohmann::json streams = nlohmann::json::array();
  for (const pipeline::StreamInfo& s : info.streams) {
    nlohmann::json j = {
        {"index", s.index},
        {"type", pipeline::StreamTypeName(s.type)},
        {"codec", s.codec},
        {"start_s", s.start_s},
        {"duration_s", s.duration_s},
        {"duration_source", pipeline::FactSourceName(s.duration_source)},
    };
    if (!s.language.empty()) j["language"] = s.language;
    if (!s.title.empty()) j["title"] = s.title;
    if (s.bit_rate > 0) j["bit_rate"] = s.bit_rate;
    if (s.type == pipeline::StreamType::kVideo) {
      j["width"] = s.width;
      j["height"] = s.height;
      j["sample_aspect_ratio"] =
          std::to_string(s.sample_aspect.num) + ":" + std::to_string(s.sample_aspect.den);
      j["display_width"] = s.display_width;
      j["display_height"] = s.display_height;
      j["fps"] = s.fps;
      j["rotation"] = s.rotation;
      j["frames"] = s.frames;
      j["frames_source"] = pipeline::FactSourceName(s.frames_source);
      j["constant_rate"] = s.constant_rate;
      j["pixel_format"] = s.pixel_format;
      j["full_range"] = s.full_range;
      j["field_order"] =
          s.field_order.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.field_order);
      j["attached_picture"] = s.attached_picture;
    } else if (s.type == pipeline::StreamType::kAudio) {
      j["sample_rate"] = s.sample_rate;
      j["channels"] = s.audio_channels;
    }
    streams.push_back(std::move(j));
  }
  nlohmann::json out = {
      {"path", DisplayPath(info.path)},
      {"format", info.format},
      {"format_long", info.format_long},
      {"duration_s", info.duration_s},
      {"start_s", info.start_s},
      {"size_bytes", info.size_bytes},
      {"bit_rate", info.bit_rate},
      {"streams", std::move(streams)},
      {"truncated", info.truncation.truncated},
  };
  if (!info.title.empty()) out["title"] = info.title;
  if (info.truncation.truncated) {
    out["truncation"] = info.truncation.reason;
    out["missing_bytes"] = info.truncation.missing_bytes;
    out["missing_s"] = info.truncation.missing_s;
  }
  out["best_video_stream"] =
      info.best_video ? nlohmann::json(*info.best_video) : nlohmann::json(nullptr);
  return out;
}

void PrintText(const pipeline::MediaInfo& info) {
  std::printf("%s: %s, %.3f s from %.3f s, %lld bytes\n", DisplayPath(info.path).c_str(),
              info.format.c_str(), info.duration_s, info.start_s,
              static_cast<long long>(info.size_bytes));
  for (const pipeline::StreamInfo& s : info.streams) {
    std::printf("  #%d %s %s", s.index, pipeline::StreamTypeName(s.type), s.codec.c_str());
    if (s.type == pipeline::StreamType::kVideo) {
      std::printf(" %dx%d", s.width, s.height);
      if (!s.sample_aspect.square() || s.rotation) {
        // The stored shape differs from the shown one: give both.
        std::printf(" (SAR %d:%d", s.sample_aspect.num, s.sample_aspect.den);
        if (s.rotation) std::printf(", rotate %d", s.rotation);
        std::printf(", shown %dx%d)", s.display_width, s.display_height);
      }
      std::printf(" %.3f fps, %lld frames (%s)", s.fps, static_cast<long long>(s.frames),
                  pipeline::FactSourceName(s.frames_source));
      if (!s.constant_rate) std::printf(", variable rate");
      if (!s.field_order.empty() && s.field_order != "progressive") {
        std::printf(", interlaced (%s)", s.field_order.c_str());
      }
    } else if (s.type == pipeline::StreamType::kAudio) {
      std::printf(" %d Hz, %d ch", s.sample_rate, s.audio_channels);
    }
    if (!s.language.empty()) std::printf(" [%s]", s.language.c_str());
    std::printf(", %.3f s\n", s.duration_s);
  }
  if (info.truncation.truncated) {
    std::printf("  truncated: %s\n", info.truncation.reason.c_str());
  }
}

}  // namespace

void AddProbeCommand(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> files;
    bool json = false;
    double time_limit = 600;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "probe", "Describe media files: container, every stream, durations and frame counts");
  cmd->footer(
      "A file that ends before its container says it should (cut short) is reported as "
      "truncated, with how much is missing.\n"
      "Exit status: 0 done, 1 some file could not be probed, 3 some file is truncated.");
  cmd->add_option("FILE", options->files, "Media files to probe")->required();
  cmd->add_flag("--json", options->json,
                "One JSON object per file on stdout (path, format, duration_s, start_s, streams; a "
                "video stream's width and height are the stored size, display_width and "
                "display_height the shape shown: sample_aspect_ratio applied, then upright)");
  cmd->add_option("--time-limit", options->time_limit, "Seconds allowed per file")
      ->default_val(600)
      ->check(GreaterThan(0));
  cmd->callback([options, &exit_code] {
    pipeline::MediaLimits limits;
    limits.time_limit_s = options->time_limit;
    for (const std::string& file : options->files) {
      Result<pipeline::MediaInfo> info = pipeline::Probe(file, limits);
      if (!info.ok()) {
        std::fprintf(stderr, "reel probe: %s\n", SafeUtf8(info.status().message()).c_str());
        exit_code = kExitFailed;
        continue;
      }
      if (options->json) {
        std::cout << jobs::DumpJson(ToJson(*info)) << "\n";
      } else {
        PrintText(*info);
      }
      if (info->truncation.truncated && exit_code == kExitOk) exit_code = kExitPartial;
    }
    std::cout.flush();
  });
}

}  // namespace reel::cli
