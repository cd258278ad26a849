// The decoder. Plans, from the frame index, exactly which packets must be decoded to produce the
// chosen frames: for each target, the packets from the keyframe before it up to the target itself
// (decode order). Everything else is never sent to the decoder; long runs of unneeded packets are
// skipped with a seek. Within a needed run, non-reference pictures that are not targets are
// skipped by the decoder itself (H.264, HEVC). Only returned frames are converted and resized.
#include "pipeline/frame_sampler.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "pipeline/internal/ffmpeg.h"
#include "pipeline/internal/frame_converter.h"
#include "pipeline/internal/index_builder.h"
#include "pipeline/sampling/scene_detector.h"

namespace reel::pipeline {
namespace {

using internal::Deadline;

// Seek instead of reading through when the next needed packet is this many packets ahead.
constexpr int kSeekGapPackets = 96;

// The demuxer the decoder reads from. Starting over opens the file afresh: some files (Matroska
// without cues, raw streams) cannot seek back to their start, and a fresh context always can.
class Demuxer {
 public:
  Demuxer(const std::string& path, int stream_index, const Deadline& deadline)
      : path_(path), stream_index_(stream_index), deadline_(deadline) {}

  Status Open() {
    REEL_ASSIGN_OR_RETURN(format_, internal::OpenInput(path_, deadline_));
    if (stream_index_ >= static_cast<int>(format_->nb_streams)) {
      return CorruptData(path_ + ": the video stream disappeared on reopening");
    }
    for (unsigned i = 0; i < format_->nb_streams; ++i) {
      format_->streams[i]->discard =
          static_cast<int>(i) == stream_index_ ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
    }
    fresh_ = true;
    return Status::Ok();
  }
  // Back to the first packet; free when nothing has been read yet.
  Status Restart() { return fresh_ ? Status::Ok() : Open(); }
  int Read(AVPacket* packet) {
    fresh_ = false;
    return av_read_frame(format_.get(), packet);
  }
  int Seek(int64_t ts) {
    fresh_ = false;
    return av_seek_frame(format_.get(), stream_index_, ts, AVSEEK_FLAG_BACKWARD);
  }

 private:
  const std::string& path_;
  int stream_index_;
  const Deadline& deadline_;
  internal::UniqueFormatContext format_;
  bool fresh_ = false;
};

class VideoDecoder {
 public:
  VideoDecoder(const std::string& path, Demuxer& demuxer, AVCodecContext* codec,
               const FrameIndex& index, const MediaLimits& limits, const Deadline& deadline,
               internal::FrameConverter& converter, SampleReport& report)
      : path_(path),
        demuxer_(demuxer),
        codec_(codec),
        index_(index),
        limits_(limits),
        deadline_(deadline),
        converter_(converter),
        report_(report) {
    for (size_t i = 0; i < index.packets.size(); ++i) {
      packets_by_pts_.emplace(index.packets[i].raw_pts, static_cast<int>(i));
    }
    // Decoders known to skip exactly the pictures no other picture references.
    switch (codec->codec_id) {
      case AV_CODEC_ID_H264:
      case AV_CODEC_ID_HEVC:
      case AV_CODEC_ID_MPEG4:
      case AV_CODEC_ID_MPEG2VIDEO:
      case AV_CODEC_ID_MPEG1VIDEO:
      case AV_CODEC_ID_VP8:
        skip_nonref_ok_ = true;
        break;
      default:
        skip_nonref_ok_ = false;
    }
  }

  // Called for every frame the decoder outputs that belongs to the index.
  using FrameHandler = std::function<Status(int frame, const AVFrame* picture)>;

  // Decodes so that every frame in `frames` (presentation indices, ascending) is output through
  // `handler`. `all_frames` decodes every packet in the needed runs (no non-reference skipping).
  Status Decode(const std::vector<int>& frames, bool all_frames, const FrameHandler& handler) {
    const int n = static_cast<int>(index_.packets.size());
    std::vector<char> needed(n, 0), target(n, 0);
    for (int f : frames) {
      int d = index_.frames[f].packet;
      target[d] = 1;
      int k = KeyframeBefore(d, index_.frames[f].pts);
      for (int i = k; i <= d; ++i) needed[i] = 1;
    }
    int last_needed = -1;
    for (int i = n - 1; i >= 0; --i) {
      if (needed[i]) {
        last_needed = i;
        break;
      }
    }
    if (last_needed < 0) return Status::Ok();

    if (!index_.has_timestamps) return DecodeSequentially(last_needed, handler);

    int first_needed = FirstNeeded(needed, 0);
    if (first_needed > kSeekGapPackets && !seek_failed_) {
      last_seek_target_ = first_needed;
      sought_ = first_needed;
      REEL_RETURN_IF_ERROR(SeekToPacket(first_needed));
    } else {
      REEL_RETURN_IF_ERROR(SeekToPacket(0));
    }
    internal::UniquePacket packet(av_packet_alloc());
    if (!packet) return Internal(path_ + ": out of memory");
    int position = 0;  // decode index of the next packet we expect to read
    bool done = false;
    while (!done) {
      if (deadline_.Expired()) return LimitExceeded(TimeLimitMessage());
      int rc = demuxer_.Read(packet.get());
      if (rc < 0) break;  // EOF or an unreadable tail
      if (packet->stream_index != index_.stream_index) {
        av_packet_unref(packet.get());
        continue;
      }
      int d = Identify(packet.get(), position);
      PacketUnref unref(packet.get());
      if (d < 0) continue;
      position = d + 1;
      if (sought_ >= 0) {
        // The first packet after a seek: past the keyframe we asked for means the demuxer cannot
        // land on it; read through from the start instead, once.
        int target_packet = sought_;
        sought_ = -1;
        if (d > target_packet) {
          seek_failed_ = true;
          REEL_RETURN_IF_ERROR(demuxer_.Restart());
          position = 0;
          continue;
        }
      }
      if (!needed[d] || sent_.count(d)) {
        // Not needed: jump ahead when the next needed packet is far.
        int next = FirstNeeded(needed, d + 1);
        if (next < 0) break;
        REEL_RETURN_IF_ERROR(MaybeSeek(d, next));
        continue;
      }
      bool skip_nonref = skip_nonref_ok_ && !all_frames && !target[d];
      codec_->skip_frame = skip_nonref ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
      sent_.insert(d);
      segment_ = index_.packets[d].segment;
      REEL_RETURN_IF_ERROR(Send(packet.get(), handler));
      if (d >= last_needed) done = true;
      if (!done) {
        int next = FirstNeeded(needed, d + 1);
        if (next < 0) {
          done = true;
        } else {
          REEL_RETURN_IF_ERROR(MaybeSeek(d, next));
        }
      }
    }
    codec_->skip_frame = AVDISCARD_DEFAULT;
    return Drain(handler);
  }

  // Starts afresh: drains nothing, forgets what was sent (for the second attempt at a frame).
  void Reset() {
    avcodec_flush_buffers(codec_);
    sent_.clear();
    segment_ = 0;
  }

 private:
  // Unrefs the packet on every path out of a loop iteration.
  struct PacketUnref {
    AVPacket* packet;
    explicit PacketUnref(AVPacket* p) : packet(p) {}
    ~PacketUnref() { av_packet_unref(packet); }
  };

  std::string TimeLimitMessage() const {
    return path_ + ": time limit of " + std::to_string(static_cast<int>(deadline_.seconds())) +
           " s exceeded while decoding";
  }

  static int FirstNeeded(const std::vector<char>& needed, int from) {
    for (int i = from; i < static_cast<int>(needed.size()); ++i) {
      if (needed[i]) return i;
    }
    return -1;
  }

  // The keyframe packet to start decoding from so that the frame at decode index `d` with
  // presentation time `pts` comes out right: the last keyframe at or before d, or the one before
  // that when the frame is shown before that keyframe (an open-GOP leading picture).
  int KeyframeBefore(int d, int64_t pts) const {
    int k = d;
    while (k > 0 && !index_.packets[k].keyframe) --k;
    if (pts < index_.packets[k].pts && k > 0) {
      int earlier = k - 1;
      while (earlier > 0 && !index_.packets[earlier].keyframe) --earlier;
      k = earlier;
    }
    return k;
  }

  // The decode index of a packet just read, or -1 if it is not in the index. Packets are known
  // by their presentation time; decode times are only a tie-breaker, since some demuxers
  // (Matroska) leave them out after a seek.
  int Identify(const AVPacket* packet, int expected) const {
    int64_t pts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
    if (pts == AV_NOPTS_VALUE) return -1;
    if (expected < static_cast<int>(index_.packets.size()) &&
        index_.packets[expected].raw_pts == pts) {
      return expected;
    }
    // Several packets can share a raw time (timestamps that restart mid-file): take the first at
    // or after where reading should be, preferring one whose decode time matches too.
    auto [first, last] = packets_by_pts_.equal_range(pts);
    int best = -1;
    for (auto it = first; it != last; ++it) {
      const int i = it->second;
      const bool dts_matches =
          packet->dts == AV_NOPTS_VALUE ||
          index_.packets[i].dts - index_.segment_offsets[index_.packets[i].segment] == packet->dts;
      if (!dts_matches) continue;
      if (best < 0 || (i >= expected && (best < expected || i < best)) ||
          (i < expected && best < expected && i > best)) {
        best = i;
      }
    }
    return best;
  }

  // Seeks to `next` when it is far ahead of `current` and has not been sought already (a demuxer
  // may land before it; then we read forward rather than seek again).
  Status MaybeSeek(int current, int next) {
    if (next - current <= kSeekGapPackets || seek_failed_ || next == last_seek_target_) {
      return Status::Ok();
    }
    last_seek_target_ = next;
    sought_ = next;
    return SeekToPacket(next);
  }

  // Positions the demuxer so the next packet read is at or before decode index `d`.
  Status SeekToPacket(int d) {
    if (d <= 0) {
      ++report_.seeks;
      return demuxer_.Restart();
    }
    // Demuxer indexes hold decode times (MP4) or presentation times (Matroska); the smaller of
    // the two with BACKWARD lands on this keyframe or an earlier one.
    const IndexedPacket& p = index_.packets[d];
    int64_t ts = std::min(p.pts, p.dts);
    int rc = demuxer_.Seek(ts);
    ++report_.seeks;
    if (rc < 0) {
      // Some demuxers cannot seek: read through from the start instead, once.
      seek_failed_ = true;
      return demuxer_.Restart();
    }
    return Status::Ok();
  }

  Status Send(const AVPacket* packet, const FrameHandler& handler) {
    ++report_.packets_decoded;
    while (true) {
      int rc = avcodec_send_packet(codec_, packet);
      if (rc == AVERROR(EAGAIN)) {
        REEL_RETURN_IF_ERROR(Receive(handler));
        continue;
      }
      if (rc < 0 && rc != AVERROR_EOF) {
        ++report_.decode_errors;
        REEL_RETURN_IF_ERROR(CheckErrorRate());
      }
      break;
    }
    return Receive(handler);
  }

  Status Drain(const FrameHandler& handler) {
    avcodec_send_packet(codec_, nullptr);
    REEL_RETURN_IF_ERROR(Receive(handler));
    avcodec_flush_buffers(codec_);
    return Status::Ok();
  }

  // Hands every picture the decoder has ready to `handler`. Pictures are known by their
  // presentation time or, for streams without timestamps, by their output order.
  Status Receive(const FrameHandler& handler) {
    if (!frame_) frame_.reset(av_frame_alloc());
    while (true) {
      int rc = avcodec_receive_frame(codec_, frame_.get());
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return Status::Ok();
      if (rc < 0) {
        ++report_.decode_errors;
        REEL_RETURN_IF_ERROR(CheckErrorRate());
        continue;
      }
      if (frame_->decode_error_flags != 0 || (frame_->flags & AV_FRAME_FLAG_CORRUPT)) {
        ++report_.decode_errors;
        Status rate = CheckErrorRate();
        if (!rate.ok()) {
          av_frame_unref(frame_.get());
          return rate;
        }
      }
      int f;
      if (index_.has_timestamps) {
        f = FrameOf(frame_->pts != AV_NOPTS_VALUE ? frame_->pts : frame_->best_effort_timestamp);
      } else {
        f = output_count_ < index_.size() ? output_count_ : -1;
        ++output_count_;
      }
      if (f >= 0) {
        Status s = handler(f, frame_.get());
        av_frame_unref(frame_.get());
        REEL_RETURN_IF_ERROR(s);
      } else {
        av_frame_unref(frame_.get());
      }
    }
  }

  // The frame a decoded picture with raw time `pts` is: in the segment of the packet last sent,
  // or the one before (pictures still in the decoder's reorder buffer at a boundary).
  int FrameOf(int64_t pts) const {
    if (pts == AV_NOPTS_VALUE) return -1;
    for (int segment = segment_; segment >= 0 && segment >= segment_ - 1; --segment) {
      int64_t t = pts + index_.segment_offsets[segment];
      auto it = std::lower_bound(index_.frames.begin(), index_.frames.end(), t,
                                 [](const IndexedFrame& f, int64_t v) { return f.pts < v; });
      if (it != index_.frames.end() && it->pts == t &&
          index_.packets[it->packet].segment == segment) {
        return static_cast<int>(it - index_.frames.begin());
      }
    }
    return -1;
  }

  Status CheckErrorRate() const {
    if (report_.decode_errors >= limits_.min_errors_for_rate &&
        report_.decode_errors > limits_.max_error_rate * std::max(report_.packets_decoded, 1)) {
      return LimitExceeded(path_ + ": too much damage: " + std::to_string(report_.decode_errors) +
                           " decoding errors in " + std::to_string(report_.packets_decoded) +
                           " packets (limit " +
                           std::to_string(static_cast<int>(limits_.max_error_rate * 100)) + "%)");
    }
    return Status::Ok();
  }

  // Streams without timestamps: decode everything from the start, counting output pictures.
  Status DecodeSequentially(int last_needed, const FrameHandler& handler) {
    REEL_RETURN_IF_ERROR(demuxer_.Restart());
    output_count_ = 0;
    internal::UniquePacket packet(av_packet_alloc());
    if (!packet) return Internal(path_ + ": out of memory");
    int sent = 0;
    while (sent <= last_needed) {
      if (deadline_.Expired()) return LimitExceeded(TimeLimitMessage());
      if (demuxer_.Read(packet.get()) < 0) break;
      PacketUnref unref(packet.get());
      if (packet->stream_index != index_.stream_index) continue;
      ++sent;
      REEL_RETURN_IF_ERROR(Send(packet.get(), handler));
    }
    return Drain(handler);
  }

  const std::string& path_;
  Demuxer& demuxer_;
  AVCodecContext* codec_;
  const FrameIndex& index_;
  const MediaLimits& limits_;
  const Deadline& deadline_;
  internal::FrameConverter& converter_;
  SampleReport& report_;
  std::unordered_multimap<int64_t, int> packets_by_pts_;
  std::unordered_set<int> sent_;
  internal::UniqueFrame frame_;
  bool skip_nonref_ok_ = false;
  bool seek_failed_ = false;
  int last_seek_target_ = -1;  // the packet of the last seek, never sought twice
  int sought_ = -1;            // set until the first packet after a seek is identified
  int segment_ = 0;            // timestamp segment of the packet last sent to the decoder
  int output_count_ = 0;       // pictures output so far (streams without timestamps)
};

SampledFrame MakeSampledFrame(const FrameIndex& index, int sample_index, int frame, Image image,
                              const AVFrame* picture) {
  SampledFrame out;
  out.index = sample_index;
  out.source_frame = frame;
  out.pts_s = index.pts_s(frame);
  out.time_s = index.time_s(frame);
  out.keyframe = index.frames[frame].keyframe;
  out.damaged = (picture->flags & AV_FRAME_FLAG_CORRUPT) != 0 || picture->decode_error_flags != 0;
  out.image = std::move(image);
  return out;
}

}  // namespace

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

  SampleReport report;
  report.stream_index = stream_index;
  report.rotation = internal::StreamRotation(stream);
  bool swap = report.rotation == 90 || report.rotation == 270;
  report.source_width = swap ? par->height : par->width;
  report.source_height = swap ? par->width : par->height;
  REEL_ASSIGN_OR_RETURN(Size target,
                        TargetSize({report.source_width, report.source_height}, options.resize));
  report.width = target.width;
  report.height = target.height;

  REEL_ASSIGN_OR_RETURN(FrameIndex index,
                        internal::IndexStream(format.get(), stream_index, path, deadline));
  report.source_frames = index.size();
  report.source_fps = index.avg_fps;
  if (index.truncated()) {
    report.truncated = true;
    report.truncation = std::to_string(index.size()) + " frames readable";
    if (index.declared_frames > 0) {
      report.truncation += " of the " + std::to_string(index.declared_frames) + " listed";
    }
    if (!index.read_error.empty()) report.truncation += ", then: " + index.read_error;
  }
  if (index.size() == 0) return CorruptData(path + ": the video stream has no frames");

  REEL_ASSIGN_OR_RETURN(internal::UniqueCodecContext codec,
                        internal::OpenDecoder(stream, limits.decoder_threads, path));
  internal::FrameConverter converter(target, report.rotation);
  // The index pass read the whole file; decoding starts from a fresh context.
  format.reset();
  Demuxer demuxer(path, stream_index, deadline);
  REEL_RETURN_IF_ERROR(demuxer.Open());
  VideoDecoder decoder(path, demuxer, codec.get(), index, limits, deadline, converter, report);

  std::vector<int> targets;
  const SamplingOptions& sampling = options.sampling;
  if (sampling.policy == SamplingPolicy::kScene) {
    auto [first, last] = TrimRange(index, sampling);
    std::vector<int> all;
    for (int i = first; i < last; ++i) all.push_back(i);
    SceneDetector detector(sampling.scene_threshold, sampling.scene_min_shot_s);
    std::vector<uint8_t> thumbnail(SceneDetector::kSide * SceneDetector::kSide);
    std::vector<char> seen(index.size(), 0);
    const bool deliver_now = !sampling.max_frames.has_value();
    int delivered = 0;
    REEL_RETURN_IF_ERROR(
        decoder.Decode(all, /*all_frames=*/true, [&](int f, const AVFrame* picture) -> Status {
          if (f < first || f >= last || seen[f]) return Status::Ok();
          seen[f] = 1;
          ++report.scene_frames_scored;
          REEL_RETURN_IF_ERROR(
              converter.Thumbnail(picture, SceneDetector::kSide, thumbnail.data(), path));
          if (!detector.Feed(thumbnail.data(), index.time_s(f))) return Status::Ok();
          targets.push_back(f);
          if (!deliver_now) return Status::Ok();
          REEL_ASSIGN_OR_RETURN(Image image, converter.Convert(picture, path));
          ++report.returned;
          return sink(MakeSampledFrame(index, delivered++, f, std::move(image), picture));
        }));
    report.requested = static_cast<int>(targets.size());
    if (deliver_now) {
      if (report.returned == 0) return CorruptData(path + ": no frame could be decoded");
      return report;
    }
    targets = ThinEvenly(targets, *sampling.max_frames);
    decoder.Reset();
  } else {
    REEL_ASSIGN_OR_RETURN(targets, SelectFrames(index, sampling));
    report.requested = static_cast<int>(targets.size());
  }
  if (targets.empty()) return report;

  std::unordered_map<int, int> position;  // frame -> position in the sample
  for (size_t i = 0; i < targets.size(); ++i) position[targets[i]] = static_cast<int>(i);
  std::vector<char> delivered(targets.size(), 0);
  auto deliver = [&](int f, const AVFrame* picture) -> Status {
    auto it = position.find(f);
    if (it == position.end() || delivered[it->second]) return Status::Ok();
    REEL_ASSIGN_OR_RETURN(Image image, converter.Convert(picture, path));
    delivered[it->second] = 1;
    ++report.returned;
    return sink(MakeSampledFrame(index, it->second, f, std::move(image), picture));
  };
  REEL_RETURN_IF_ERROR(decoder.Decode(targets, /*all_frames=*/false, deliver));

  // A second attempt, each missing frame on its own from its keyframe, decoding everything. On a
  // clean stream a missing frame means the plan was too clever; on a damaged one it usually
  // stays missing, so only a few are tried.
  std::vector<int> missing;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!delivered[i]) missing.push_back(targets[i]);
  }
  const size_t kRetriesOnDamage = 4;
  if (report.decode_errors > 0 && missing.size() > kRetriesOnDamage) {
    missing.resize(kRetriesOnDamage);
  }
  for (int f : missing) {
    decoder.Reset();
    REEL_RETURN_IF_ERROR(decoder.Decode({f}, /*all_frames=*/true, deliver));
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!delivered[i]) report.missing.push_back(targets[i]);
  }
  if (report.returned == 0) {
    return CorruptData(path + ": none of the " + std::to_string(targets.size()) +
                       " chosen frames could be decoded (" + std::to_string(report.decode_errors) +
                       " decoding errors)");
  }
  return report;
}

}  // namespace reel::pipeline
