// Media files: probe, packet index, a small sample of decoded frames and the text subtitle
// streams, on one file per input, with limits tight enough that no input can hang or exhaust
// memory. Invariants: no crash or sanitizer report; every string a probe returns (the path
// aside) and every subtitle text is valid UTF-8; frames have the size the report says.
#include <algorithm>
#include <cmath>
#include <string>

#include "base/utf8.h"
#include "pipeline/frame_index.h"
#include "pipeline/frame_sampler.h"
#include "pipeline/probe.h"
#include "pipeline/subtitles.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = reel::fuzz::WriteScratchFile(
      "media", std::string_view(reinterpret_cast<const char*>(data), size));
  reel::pipeline::MediaLimits limits;
  limits.time_limit_s = 5;
  limits.max_pixels = 1 << 20;  // 1 megapixel
  limits.max_side = 4096;
  limits.decoder_threads = 1;

  auto info = reel::pipeline::Probe(path, limits);
  if (info.ok()) {
    Require(reel::IsValidUtf8(info->format) && reel::IsValidUtf8(info->title), "probe text");
    for (const auto& s : info->streams) {
      Require(reel::IsValidUtf8(s.codec) && reel::IsValidUtf8(s.language) &&
                  reel::IsValidUtf8(s.title) && reel::IsValidUtf8(s.pixel_format),
              "stream text", s.language + " | " + s.title);
    }
    if (info->best_video) {
      Require(
          *info->best_video >= 0 && static_cast<size_t>(*info->best_video) < info->streams.size(),
          "best_video in range");
    }
  }

  auto index = reel::pipeline::BuildFrameIndex(path, -1, limits);
  if (index.ok()) {
    for (int i = 0; i + 1 < index->size(); ++i) {
      Require(std::isfinite(index->time_s(i)), "finite frame time");
    }
  }

  reel::pipeline::SampleOptions options;
  options.sampling.policy = reel::pipeline::SamplingPolicy::kCount;
  options.sampling.count = 3;
  options.resize.smart.max_pixels = 3136 * 4;
  options.limits = limits;
  int frames = 0;
  auto report = reel::pipeline::SampleVideo(
      path, options, [&](reel::pipeline::SampledFrame&& frame) -> reel::Status {
        Require(frame.image.width > 0 && frame.image.height > 0, "frame has a size");
        // Within max_pixels, except where the smart resize's floor of one 28-pixel patch row
        // on the short side holds it above (a 38x2432 video gives 28x896 = 25,088 pixels, as the
        // reference's max(factor, floor(...)) does).
        Require(frame.image.width * frame.image.height <= 3136 * 4 ||
                    std::min(frame.image.width, frame.image.height) == 28,
                "frame within max_pixels",
                std::to_string(frame.image.width) + "x" + std::to_string(frame.image.height));
        ++frames;
        return reel::Status::Ok();
      });
  if (report.ok()) {
    Require(report->returned == frames, "report counts the frames delivered");
    Require(reel::IsValidUtf8(report->truncation), "truncation text");
  }

  auto cues = reel::pipeline::ExtractSubtitleStreams(path);
  if (cues.ok()) {
    for (const auto& cue : *cues) {
      Require(reel::IsValidUtf8(cue.text) && reel::IsValidUtf8(cue.language), "cue text", cue.text);
      Require(cue.end_s >= cue.start_s || std::isnan(cue.start_s), "cue ends after it starts");
    }
  }
  return 0;
}
