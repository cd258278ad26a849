// Sampling a video: index, choose, decode the least (internal/video_decoder.h), on several
// threads when the chosen frames fall in independent runs (internal/parallel_decoder.h), and
// convert only the frames returned.
#include "pipeline/frame_sampler.h"

#include <algorithm>
#include <limits>
#include <thread>
#include <unordered_map>

#include "pipeline/internal/ffmpeg.h"
#include "pipeline/internal/frame_converter.h"
#include "pipeline/internal/index_builder.h"
#include "pipeline/internal/parallel_decoder.h"
#include "pipeline/internal/video_decoder.h"
#include "pipeline/sampling/scene_detector.h"

namespace reel::pipeline {
namespace {

using internal::Deadline;

// Decoding threads for one file at most, whatever the core count: each holds a decoder and its
// reference pictures (up to 16 decoded pictures for H.264), so big frames get fewer.
constexpr int kMaxDecodeWorkers = 8;
constexpr int64_t kDecodeWorkersMemory = int64_t{1} << 30;

int MaxDecodeWorkers(int width, int height) {
  const int64_t per_decoder = int64_t{width} * height * 3 / 2 * 16;  // 4:2:0, 8-bit
  return static_cast<int>(std::clamp<int64_t>(
      kDecodeWorkersMemory / std::max<int64_t>(per_decoder, 1), 2, kMaxDecodeWorkers));
}

SampledFrame MakeSampledFrame(const FrameIndex& index, int sample_index, int frame, Image image,
                              bool damaged) {
  SampledFrame out;
  out.index = sample_index;
  out.source_frame = frame;
  out.pts_s = index.pts_s(frame);
  out.time_s = index.time_s(frame);
  out.keyframe = index.frames[frame].keyframe;
  out.damaged = damaged;
  out.image = std::move(image);
  return out;
}

}  // namespace

std::string SampleReport::PartialReason() const {
  std::vector<std::string> parts;
  if (truncated) parts.push_back("file truncated: " + truncation);
  if (!missing.empty()) {
    parts.push_back(std::to_string(missing.size()) + " of " + std::to_string(requested) +
                    " chosen frames could not be decoded");
  }
  if (decode_errors > 0) parts.push_back(std::to_string(decode_errors) + " decoding errors");
  std::string reason;
  for (size_t i = 0; i < parts.size(); ++i) reason += (i ? "; " : "") + parts[i];
  return reason;
}

Result<SampleReport> SampleVideo(const std::string& path, const SampleOptions& options,
                                 const FrameSink& sink) {
  REEL_RETURN_IF_ERROR(ValidateSamplingOptions(options.sampling).WithPrefix(path));
  Deadline deadline(options.limits.time_limit_s);
  REEL_ASSIGN_OR_RETURN(internal::UniqueFormatContext format, internal::OpenInput(path, deadline));
  REEL_ASSIGN_OR_RETURN(int stream_index,
                        internal::ChooseVideoStream(format.get(), options.stream_index, path));
  AVStream* stream = format->streams[stream_index];
  const AVCodecParameters* par = stream->codecpar;
  const MediaLimits& limits = options.limits;
  if (par->width <= 0 || par->height <= 0) {
    return CorruptData(path + ": video stream has no picture size");
  }
  if (par->width > limits.max_side || par->height > limits.max_side ||
      static_cast<int64_t>(par->width) * par->height > limits.max_pixels) {
    return LimitExceeded(path + ": video is " + std::to_string(par->width) + "x" +
                         std::to_string(par->height) + ", over the size limit");
  }

  const SamplingOptions& sampling = options.sampling;
  SampleReport report;
  report.stream_index = stream_index;
  report.rotation = internal::StreamRotation(stream);
  report.sample_aspect = internal::StreamSampleAspect(format.get(), stream);
  report.shape = options.resize.shape;
  const bool swap = report.rotation == 90 || report.rotation == 270;
  auto upright = [swap](Size s) { return swap ? Size{s.height, s.width} : s; };
  report.storage_size = upright({par->width, par->height});
  report.display_size = upright(DisplaySize({par->width, par->height}, report.sample_aspect));
  const Size source =
      report.shape == FrameShape::kStorage ? report.storage_size : report.display_size;
  report.source_width = source.width;
  report.source_height = source.height;
  REEL_ASSIGN_OR_RETURN(Size target,
                        TargetSize({report.source_width, report.source_height}, options.resize));
  report.width = target.width;
  report.height = target.height;
  // The shown shape can be wider than the stored one (up to 8x): the frames made from it must
  // stay within the same limits.
  if (target.width > limits.max_side || target.height > limits.max_side ||
      int64_t{target.width} * target.height > limits.max_pixels) {
    return LimitExceeded(path + ": frames would be " + std::to_string(target.width) + "x" +
                         std::to_string(target.height) + " (stored " + std::to_string(par->width) +
                         "x" + std::to_string(par->height) + ", sample aspect " +
                         std::to_string(report.sample_aspect.num) + ":" +
                         std::to_string(report.sample_aspect.den) + "), over the size limit");
  }

  REEL_ASSIGN_OR_RETURN(FrameIndex index,
                        internal::IndexStream(format.get(), stream_index, path, deadline));
  report.source_frames = index.size();
  report.source_fps = index.avg_fps;
  report.duration_s = index.duration_s();
  report.truncated = index.truncated();
  report.truncation = index.truncation.reason;
  report.missing_bytes = index.truncation.missing_bytes;
  report.missing_s = index.truncation.missing_s;
  if (sampling.policy == SamplingPolicy::kFps) {
    report.fps_timeline = FpsTimelineName(ResolveFpsTimeline(index, sampling));
  }
  if (index.size() == 0) return CorruptData(path + ": the video stream has no frames");
  report.warnings = RequestWarnings(index, options.sampling);
  auto nothing_to_sample = [&] {
    std::string why;
    for (const std::string& w : report.warnings) why += (why.empty() ? "" : "; ") + w;
    return InvalidArgument(path + ": nothing to sample: " +
                           (why.empty() ? std::string("the request selects no frame") : why));
  };
  if (auto [first, last] = TrimRange(index, options.sampling); first >= last) {
    return nothing_to_sample();
  }

  REEL_ASSIGN_OR_RETURN(internal::UniqueCodecContext codec,
                        internal::OpenDecoder(stream, limits.decoder_threads, path));
  internal::FrameConverter converter(target, report.rotation);
  // Containers whose timestamps may jump (MPEG-TS, MPEG-PS) have no seek index: a seek searches
  // timestamps and can land off target, so their frames are decoded by one decoder that reads
  // through short gaps, not by several that each seek.
  const bool seeks_reliably = !(format->iformat->flags & AVFMT_TS_DISCONT);
  // The index pass read the whole file; decoding starts from a fresh context.
  format.reset();
  internal::Demuxer demuxer(path, stream_index, deadline);
  REEL_RETURN_IF_ERROR(demuxer.Open());
  internal::DecodeCounters counters;
  internal::VideoDecoder decoder(path, demuxer, codec.get(), index, limits, deadline, counters);
  // What the decoders counted, into the report.
  auto counted = [&]() -> SampleReport& {
    report.packets_decoded = counters.packets_decoded;
    report.decode_errors = counters.decode_errors;
    report.seeks = counters.seeks;
    return report;
  };

  std::vector<int> targets;
  if (sampling.policy == SamplingPolicy::kScene) {
    auto [first, last] = TrimRange(index, sampling);
    std::vector<int> all;
    for (int i = first; i < last; ++i) all.push_back(i);
    SceneDetector detector(sampling.scene_threshold, sampling.scene_min_shot_s);
    std::vector<char> seen(index.size(), 0);
    const bool deliver_now = !sampling.max_frames.has_value();
    int delivered = 0;
    REEL_RETURN_IF_ERROR(
        decoder.Decode(all, /*all_frames=*/true, [&](int f, const AVFrame* picture) -> Status {
          if (f < first || f >= last || seen[f]) return Status::Ok();
          seen[f] = 1;
          ++report.scene_frames_scored;
          REEL_ASSIGN_OR_RETURN(ScenePicture planes, converter.ScenePlanes(picture, path));
          const bool cut = detector.Feed(planes, index.time_s(f));
          report.scene_scores.emplace_back(f, detector.last_score());
          if (!cut) return Status::Ok();
          targets.push_back(f);
          if (!deliver_now) return Status::Ok();
          REEL_ASSIGN_OR_RETURN(Image image, converter.Convert(picture, path));
          ++report.returned;
          return sink(MakeSampledFrame(index, delivered++, f, std::move(image),
                                       internal::IsDamaged(picture)));
        }));
    report.requested = static_cast<int>(targets.size());
    if (deliver_now) {
      if (report.returned == 0) return CorruptData(path + ": no frame could be decoded");
      return counted();
    }
    targets = ThinEvenly(targets, *sampling.max_frames);
    decoder.Reset();
  } else {
    REEL_ASSIGN_OR_RETURN(targets, SelectFrames(index, sampling));
    report.requested = static_cast<int>(targets.size());
  }
  if (targets.empty()) return nothing_to_sample();

  std::unordered_map<int, int> position;  // frame -> position in the sample
  for (size_t i = 0; i < targets.size(); ++i) position[targets[i]] = static_cast<int>(i);
  std::vector<char> delivered(targets.size(), 0);
  auto deliver_converted = [&](int f, Image image, bool damaged) -> Status {
    auto it = position.find(f);
    if (it == position.end() || delivered[it->second]) return Status::Ok();
    delivered[it->second] = 1;
    ++report.returned;
    return sink(MakeSampledFrame(index, it->second, f, std::move(image), damaged));
  };
  auto deliver = [&](int f, const AVFrame* picture) -> Status {
    auto it = position.find(f);
    if (it == position.end() || delivered[it->second]) return Status::Ok();
    REEL_ASSIGN_OR_RETURN(Image image, converter.Convert(picture, path));
    return deliver_converted(f, std::move(image), internal::IsDamaged(picture));
  };
  auto undelivered = [&] {
    std::vector<int> frames;
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!delivered[i]) frames.push_back(targets[i]);
    }
    return frames;
  };

  // Chosen frames in independent runs (a keyframe each, or more) decode on several threads, one
  // single-threaded decoder each: no frame-thread start-up after every seek, every core busy.
  const int threads = limits.decoder_threads > 0
                          ? limits.decoder_threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::vector<int>> groups;
  if (index.has_timestamps && seeks_reliably && threads > 1) {
    groups = internal::IndependentGroups(index, targets);
  }
  const int workers =
      std::min({threads, static_cast<int>(groups.size()),
                MaxDecodeWorkers(report.storage_size.width, report.storage_size.height)});
  bool sequential = workers < 2;
  if (!sequential) {
    internal::ParallelDecodeJob job{path,   index,           limits, deadline,
                                    target, report.rotation, groups, workers};
    REEL_ASSIGN_OR_RETURN(
        internal::ParallelOutcome outcome,
        internal::DecodeInParallel(job, counters, [&](internal::ConvertedFrame&& frame) {
          return deliver_converted(frame.frame, std::move(frame.image), frame.damaged);
        }));
    sequential = outcome == internal::ParallelOutcome::kFellShort;
  }
  if (sequential) {
    REEL_RETURN_IF_ERROR(decoder.Decode(undelivered(), /*all_frames=*/false, deliver));
  }

  // A second attempt, each missing frame on its own from its keyframe, decoding everything. On a
  // clean stream a missing frame means the plan was too clever; on a damaged one it usually
  // stays missing, so only a few are tried.
  std::vector<int> missing = undelivered();
  const size_t kRetriesOnDamage = 4;
  if (counted().decode_errors > 0 && missing.size() > kRetriesOnDamage) {
    missing.resize(kRetriesOnDamage);
  }
  for (int f : missing) {
    decoder.Reset();
    REEL_RETURN_IF_ERROR(decoder.Decode({f}, /*all_frames=*/true, deliver));
  }
  report.missing = undelivered();
  counted();
  if (report.returned == 0) {
    return CorruptData(path + ": none of the " + std::to_string(targets.size()) +
                       " chosen frames could be decoded (" + std::to_string(report.decode_errors) +
                       " decoding errors)");
  }
  return report;
}

}  // namespace reel::pipeline
