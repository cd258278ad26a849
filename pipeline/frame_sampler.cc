// Sampling a video: index, choose, decode the least (internal/video_decoder.h), on several
// threads when the chosen frames fall in independent runs (internal/parallel_decoder.h), and
// convert only the frames returned.
#include "pipeline/frame_sampler.h"

#include <algorithm>
#include <deque>
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

// Second attempts stop after this many fail (the stream's own damage), and decoding from the
// stream's start is always allowed up to this many packets.
constexpr int kRetriesOnDamage = 4;
constexpr int kStreamStartPackets = 2000;

SampledFrame MakeSampledFrame(const FrameIndex& index, int sample_index, int frame, Image image) {
  SampledFrame out;
  out.index = sample_index;
  out.source_frame = frame;
  out.pts_s = index.pts_s(frame);
  out.time_s = index.time_s(frame);
  out.keyframe = index.frames[frame].keyframe;
  out.image = std::move(image);
  return out;
}

// One decoding pass over some of the chosen frames, counted on its own.
struct DecodePass {
  internal::DecodeCounters counters;
  Status failure;         // set when the error-rate cap stopped it
  std::vector<int> left;  // chosen frames it left undelivered (damaged or not decoded)
};

// What the passes did, into the report. A pass's errors are the file's unless every frame it left
// was then delivered by a later pass (the damage came from where it started, not the stream).
void CountPasses(const std::deque<DecodePass>& passes, const std::unordered_map<int, int>& position,
                 const std::vector<char>& delivered, SampleReport& report) {
  report.packets_decoded = report.decode_errors = report.seeks = 0;
  for (const DecodePass& p : passes) {
    report.packets_decoded += p.counters.packets_decoded;
    report.seeks += p.counters.seeks;
    const bool repaired = !p.left.empty() && std::all_of(p.left.begin(), p.left.end(), [&](int f) {
      return delivered[position.at(f)] != 0;
    });
    if (!repaired) report.decode_errors += p.counters.decode_errors;
  }
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
  internal::FrameConverter converter(target, report.rotation, options.resize.deinterlace);
  // Containers whose timestamps may jump (MPEG-TS, MPEG-PS) have no seek index: a seek searches
  // timestamps and can land off target, so their frames are decoded by one decoder that reads
  // through short gaps, not by several that each seek.
  const bool seeks_reliably = !(format->iformat->flags & AVFMT_TS_DISCONT);
  // The index pass read the whole file; decoding starts from a fresh context.
  format.reset();
  internal::Demuxer demuxer(path, stream_index, deadline);
  REEL_RETURN_IF_ERROR(demuxer.Open());
  // Decoding goes in passes (the plan, then second attempts), each counted on its own: the
  // error-rate cap stops one pass, and damage that a later pass repairs is not the file's.
  std::deque<DecodePass> passes;
  passes.emplace_back();
  internal::VideoDecoder decoder(path, demuxer, codec.get(), index, limits, deadline,
                                 passes.back().counters);
  auto begin_pass = [&]() -> DecodePass& {
    passes.emplace_back();
    decoder.UseCounters(passes.back().counters);
    return passes.back();
  };

  std::vector<int> targets;
  std::unordered_map<int, int> position;  // frame -> position in the sample
  std::vector<char> delivered;
  auto set_targets = [&](std::vector<int> frames) {
    targets = std::move(frames);
    position.clear();
    for (size_t i = 0; i < targets.size(); ++i) position[targets[i]] = static_cast<int>(i);
    delivered.assign(targets.size(), 0);
  };
  // A damaged picture (the decoder concealed errors) is never delivered: its frame stays
  // undelivered and is decoded again, or reported missing.
  auto deliver_converted = [&](int f, Image image, bool damaged) -> Status {
    auto it = position.find(f);
    if (damaged || it == position.end() || delivered[it->second]) return Status::Ok();
    delivered[it->second] = 1;
    ++report.returned;
    return sink(MakeSampledFrame(index, it->second, f, std::move(image)));
  };
  auto deliver = [&](int f, const AVFrame* picture) -> Status {
    auto it = position.find(f);
    if (it == position.end() || delivered[it->second] || internal::IsDamaged(picture)) {
      return Status::Ok();
    }
    REEL_ASSIGN_OR_RETURN(Image image, converter.Convert(picture, path));
    return deliver_converted(f, std::move(image), false);
  };
  auto undelivered = [&] {
    std::vector<int> frames;
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!delivered[i]) frames.push_back(targets[i]);
    }
    return frames;
  };

  // Scene detection with no cap on the count delivers each cut as it is found: every chosen frame
  // has then had its first attempt.
  bool attempted = false;
  if (sampling.policy == SamplingPolicy::kScene) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::pair<int, int> trim = TrimRange(index, sampling);
    const int first = trim.first, last = trim.second;
    std::vector<int> all;
    for (int i = first; i < last; ++i) all.push_back(i);
    SceneDetector detector(sampling.scene_threshold, sampling.scene_min_shot_s);
    std::vector<char> seen(index.size(), 0);
    const bool deliver_now = !sampling.max_frames.has_value();
    std::vector<int> cuts;
    REEL_RETURN_IF_ERROR(
        decoder.Decode(all, /*all_frames=*/true, [&](int f, const AVFrame* picture) -> Status {
          if (f < first || f >= last || seen[f]) return Status::Ok();
          seen[f] = 1;
          ++report.scene_frames_scored;
          REEL_ASSIGN_OR_RETURN(ScenePicture planes, converter.ScenePlanes(picture, path));
          const bool cut = detector.Feed(planes, index.time_s(f));
          report.scene_scores.emplace_back(f, detector.last_score());
          if (!cut) return Status::Ok();
          cuts.push_back(f);
          if (!deliver_now) return Status::Ok();
          position[f] = static_cast<int>(cuts.size()) - 1;
          delivered.push_back(0);
          targets.push_back(f);
          return deliver(f, picture);
        }));
    report.requested = static_cast<int>(cuts.size());
    if (report.scene_frames_scored == 0) return CorruptData(path + ": no frame could be decoded");
    if (deliver_now) {
      attempted = true;
    } else {
      set_targets(ThinEvenly(cuts, *sampling.max_frames));
    }
    decoder.Reset();
  } else {
    REEL_ASSIGN_OR_RETURN(std::vector<int> chosen, SelectFrames(index, sampling));
    set_targets(std::move(chosen));
    report.requested = static_cast<int>(targets.size());
  }
  auto finish = [&]() -> Result<SampleReport> {
    CountPasses(passes, position, delivered, report);
    report.missing = undelivered();
    return report;
  };
  if (targets.empty()) return nothing_to_sample();

  // The plan. Chosen frames in independent runs (a keyframe each, or more) decode on several
  // threads, one single-threaded decoder each: no frame-thread start-up after every seek, every
  // core busy.
  if (!attempted) {
    DecodePass& plan = begin_pass();
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
    Status planned;
    if (!sequential) {
      internal::ParallelDecodeJob job{
          path,   index,  limits, deadline, target, report.rotation, options.resize.deinterlace,
          groups, workers};
      Result<internal::ParallelOutcome> outcome =
          internal::DecodeInParallel(job, plan.counters, [&](internal::ConvertedFrame&& frame) {
            return deliver_converted(frame.frame, std::move(frame.image), frame.damaged);
          });
      if (outcome.ok()) {
        sequential = *outcome == internal::ParallelOutcome::kFellShort;
        if (!sequential) report.parallel_decoders = workers;
      } else {
        planned = outcome.status();
      }
    }
    if (sequential && planned.ok()) {
      planned = decoder.Decode(undelivered(), /*all_frames=*/false, deliver);
    }
    if (!planned.ok()) {
      if (!plan.counters.rate_exceeded) return planned;
      plan.failure = planned;  // repaired below, or the file fails with it
    }
  }
  passes.back().left = undelivered();

  // Second attempts, for chosen frames that came out damaged or not at all. Each is decoded again
  // on its own from the start point before the one it was decoded from (keyframe flags can be
  // wrong, and decoders can need more than a keyframe), decoding every picture. When the stream's
  // own damage is the cause, that does not help: after kRetriesOnDamage such failures the rest
  // skip this step. Those still missing are then decoded from the stream's start, in one pass, as
  // a sequential decode would, unless that costs more than twice the decoding done so far (and
  // more than kStreamStartPackets packets).
  std::vector<int> from_start;
  int failures = 0;
  for (int f : undelivered()) {
    const bool planned_from_start =
        internal::PacketsFor(index, f, internal::StartPoint::kEarlier).first == 0;
    if (failures >= kRetriesOnDamage) {
      if (!planned_from_start) from_start.push_back(f);
      continue;
    }
    DecodePass& retry = begin_pass();
    decoder.Reset();
    Status s = decoder.Decode({f}, /*all_frames=*/true, deliver, internal::StartPoint::kEarlier);
    if (!s.ok() && !retry.counters.rate_exceeded) return s;
    retry.failure = s;
    if (!delivered[position[f]]) {
      retry.left = {f};
      ++failures;
      if (!planned_from_start) from_start.push_back(f);
    }
  }
  if (!from_start.empty()) {
    int last_packet = 0;
    for (int f : from_start) last_packet = std::max(last_packet, index.frames[f].packet);
    int spent = 0;
    for (const DecodePass& p : passes) spent += p.counters.packets_decoded;
    if (last_packet + 1 <= std::max(kStreamStartPackets, 2 * spent)) {
      DecodePass& full = begin_pass();
      decoder.Reset();
      Status s = decoder.Decode(from_start, /*all_frames=*/true, deliver,
                                internal::StartPoint::kStreamStart);
      if (!s.ok() && !full.counters.rate_exceeded) return s;
      full.failure = s;
      for (int f : from_start) {
        if (!delivered[position[f]]) full.left.push_back(f);
      }
    }
  }
  // A pass stopped by the error-rate cap fails the file unless later passes delivered every frame
  // it left.
  for (const DecodePass& p : passes) {
    if (p.failure.ok()) continue;
    for (int f : p.left) {
      if (!delivered[position[f]]) return p.failure;
    }
  }

  REEL_ASSIGN_OR_RETURN(SampleReport done, finish());
  if (done.returned == 0) {
    return CorruptData(path + ": none of the " + std::to_string(targets.size()) +
                       " chosen frames could be decoded (" + std::to_string(done.decode_errors) +
                       " decoding errors)");
  }
  return done;
}

}  // namespace reel::pipeline
