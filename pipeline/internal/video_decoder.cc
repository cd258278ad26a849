#include "pipeline/internal/video_decoder.h"

#include <algorithm>
#include <cstring>

namespace reel::pipeline::internal {
namespace {

// Seek instead of reading through when the next needed packet is this many packets ahead.
constexpr int kSeekGapPackets = 96;

// Unrefs the packet on every path out of a loop iteration.
struct PacketUnref {
  AVPacket* packet;
  explicit PacketUnref(AVPacket* p) : packet(p) {}
  ~PacketUnref() { av_packet_unref(packet); }
};

int FirstNeeded(const std::vector<char>& needed, int from) {
  for (int i = from; i < static_cast<int>(needed.size()); ++i) {
    if (needed[i]) return i;
  }
  return -1;
}

}  // namespace

Status Demuxer::Open() {
  REEL_ASSIGN_OR_RETURN(format_, OpenInput(path_, deadline_));
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

int Demuxer::Read(AVPacket* packet) {
  fresh_ = false;
  return av_read_frame(format_.get(), packet);
}

int Demuxer::Seek(int64_t ts) {
  fresh_ = false;
  return av_seek_frame(format_.get(), stream_index_, ts, AVSEEK_FLAG_BACKWARD);
}

// The keyframe packet to start decoding from so that the frame comes out right: the last
// keyframe at or before its packet, or the one before that when the frame is shown before that
// keyframe (an open-GOP leading picture).
PacketRun PacketsFor(const FrameIndex& index, int frame) {
  const int d = index.frames[frame].packet;
  const int64_t pts = index.frames[frame].pts;
  int k = d;
  while (k > 0 && !index.packets[k].keyframe) --k;
  if (pts < index.packets[k].pts && k > 0) {
    int earlier = k - 1;
    while (earlier > 0 && !index.packets[earlier].keyframe) --earlier;
    k = earlier;
  }
  return {k, d};
}

PacketRun PacketsFor(const FrameIndex& index, int frame, StartPoint start) {
  PacketRun run = PacketsFor(index, frame);
  if (start == StartPoint::kStreamStart) {
    run.first = 0;
  } else if (start == StartPoint::kEarlier && run.first > 0) {
    int k = run.first - 1;
    while (k > 0 && !index.packets[k].keyframe) --k;
    run.first = k;
  }
  return run;
}

std::vector<std::vector<int>> IndependentGroups(const FrameIndex& index,
                                                const std::vector<int>& frames) {
  struct Entry {
    PacketRun run;
    int frame;
  };
  std::vector<Entry> entries;
  entries.reserve(frames.size());
  for (int f : frames) entries.push_back({PacketsFor(index, f), f});
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.run.first < b.run.first; });
  std::vector<std::vector<int>> groups;
  int group_last = -1;
  for (const Entry& e : entries) {
    if (groups.empty() || e.run.first > group_last) {
      groups.emplace_back();
      group_last = e.run.last;
    } else {
      group_last = std::max(group_last, e.run.last);
    }
    groups.back().push_back(e.frame);
  }
  for (std::vector<int>& g : groups) std::sort(g.begin(), g.end());
  return groups;
}

VideoDecoder::VideoDecoder(const std::string& path, Demuxer& demuxer, AVCodecContext* codec,
                           const FrameIndex& index, const MediaLimits& limits,
                           const Deadline& deadline, DecodeCounters& counters,
                           bool restart_when_seek_fails)
    : path_(path),
      demuxer_(demuxer),
      codec_(codec),
      index_(index),
      limits_(limits),
      deadline_(deadline),
      counters_(&counters),
      restart_when_seek_fails_(restart_when_seek_fails) {
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

Status VideoDecoder::Decode(const std::vector<int>& frames, bool all_frames,
                            const FrameHandler& handler, StartPoint start) {
  const int n = static_cast<int>(index_.packets.size());
  std::vector<char> needed(n, 0), target(n, 0);
  for (int f : frames) {
    PacketRun run = PacketsFor(index_, f, start);
    target[run.last] = 1;
    for (int i = run.first; i <= run.last; ++i) needed[i] = 1;
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

  seeks_this_call_ = 0;
  const int first_needed = FirstNeeded(needed, 0);
  // Decode index of the next packet we expect to read.
  int position = 0;
  if (read_position_ >= 0 && read_position_ <= first_needed &&
      (first_needed - read_position_ <= kSeekGapPackets || seek_failed_)) {
    position = read_position_;  // a previous call left the demuxer just before: read on
  } else if (first_needed > kSeekGapPackets && !seek_failed_) {
    last_seek_target_ = first_needed;
    sought_ = first_needed;
    REEL_RETURN_IF_ERROR(SeekToPacket(first_needed));
  } else {
    REEL_RETURN_IF_ERROR(SeekToPacket(0));
  }
  read_position_ = -1;
  UniquePacket packet(av_packet_alloc());
  if (!packet) return Internal(path_ + ": out of memory");
  bool done = false;
  int previous_sent = -1;  // the packet this call sent last
  while (!done) {
    if (deadline_.Expired()) return LimitExceeded(TimeLimitMessage());
    int rc = demuxer_.Read(packet.get());
    if (rc < 0) {  // EOF or an unreadable tail
      // Needed packets never came after a seek: the demuxer landed somewhere it could not tell
      // (MPEG program streams seek by guessing). Read through from the start instead, once,
      // decoding every needed packet again.
      if (seeks_this_call_ > 0 && !seek_failed_) {
        REEL_RETURN_IF_ERROR(SeekFailed());
        avcodec_flush_buffers(codec_);
        unpack_continues_ = false;
        sent_.clear();
        position = 0;
        previous_sent = -1;
        continue;
      }
      break;
    }
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
        REEL_RETURN_IF_ERROR(SeekFailed());
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
    // A new run starts from a flushed decoder, as it would after a seek: pictures of the run
    // before must not stand in for references a start point without an IDR (a recovery point,
    // intra refresh) leaves the decoder to find.
    if (previous_sent >= 0 && d != previous_sent + 1) REEL_RETURN_IF_ERROR(Drain(handler));
    previous_sent = d;
    bool skip_nonref = skip_nonref_ok_ && !all_frames && !target[d];
    codec_->skip_frame = skip_nonref ? AVDISCARD_NONREF : AVDISCARD_DEFAULT;
    sent_.insert(d);
    segment_ = index_.packets[d].segment;
    REEL_RETURN_IF_ERROR(SendIndexed(d, packet.get(), handler));
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
  // Only a loop that stopped after a packet it sent knows where the demuxer is.
  if (done) read_position_ = position;
  return Drain(handler);
}

void VideoDecoder::Reset() {
  avcodec_flush_buffers(codec_);
  sent_.clear();
  segment_ = 0;
  unpack_continues_ = false;
}

std::string VideoDecoder::TimeLimitMessage() const {
  return path_ + ": time limit of " + std::to_string(static_cast<int>(deadline_.seconds())) +
         " s exceeded while decoding";
}

// The decode index of a packet just read, or -1 if it is not in the index. Packets are known by
// their presentation time; decode times are only a tie-breaker, since some demuxers (Matroska)
// leave them out after a seek.
int VideoDecoder::Identify(const AVPacket* packet, int expected) const {
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
Status VideoDecoder::MaybeSeek(int current, int next) {
  if (next - current <= kSeekGapPackets || seek_failed_ || next == last_seek_target_) {
    return Status::Ok();
  }
  last_seek_target_ = next;
  sought_ = next;
  return SeekToPacket(next);
}

// Positions the demuxer so the next packet read is at or before decode index `d`.
Status VideoDecoder::SeekToPacket(int d) {
  ++counters_->seeks;
  if (d <= 0) return demuxer_.Restart();
  // Demuxer indexes hold decode times (MP4) or presentation times (Matroska); the smaller of the
  // two with BACKWARD lands on this keyframe or an earlier one.
  const IndexedPacket& p = index_.packets[d];
  int64_t ts = std::min(p.pts, p.dts);
  if (demuxer_.Seek(ts) < 0) return SeekFailed();
  ++seeks_this_call_;
  return Status::Ok();
}

// The demuxer cannot seek (or not land where asked): read through from the start from now on,
// or let the caller choose another plan.
Status VideoDecoder::SeekFailed() {
  seek_failed_ = true;
  if (!restart_when_seek_fails_) return Unavailable(path_ + ": the demuxer cannot seek");
  return demuxer_.Restart();
}

// Sends the index's packet `d`: shows a decoder that starts past the stream's first packet that
// packet first, and hands packed MPEG-4 B-frames over one VOP at a time. An empty packet would
// tell the decoder the stream has ended, so none is sent.
Status VideoDecoder::SendIndexed(int d, AVPacket* packet, const FrameHandler& handler) {
  if (!primed_) {
    if (d != 0) REEL_RETURN_IF_ERROR(Prime());
    primed_ = true;
  }
  if (packet->size <= 0) return Status::Ok();
  if (!index_.packed_bframes) return Send(packet, handler);
  // What is held back goes from one packet to the next only within a run.
  if (!unpack_continues_ || d != last_sent_ + 1) packed_vops_.Reset();
  unpack_continues_ = true;
  last_sent_ = d;
  const PackedVops::Vop vop = packed_vops_.Next(packet->data, packet->size);
  if (!vop_packet_) vop_packet_.reset(av_packet_alloc());
  if (!vop_packet_ || av_new_packet(vop_packet_.get(), vop.size) < 0 ||
      av_packet_copy_props(vop_packet_.get(), packet) < 0) {
    return Internal(path_ + ": out of memory");
  }
  std::memcpy(vop_packet_->data, vop.data, vop.size);
  Status sent = Send(vop_packet_.get(), handler);
  av_packet_unref(vop_packet_.get());
  return sent;
}

// Shows the decoder the stream's first packet with every picture discarded: it parses what the
// packet says about the stream (x264's version SEI) and outputs nothing.
Status VideoDecoder::Prime() {
  const std::vector<uint8_t>& bytes = index_.priming_packet;
  if (bytes.empty()) return Status::Ok();
  UniquePacket packet(av_packet_alloc());
  if (!packet || av_new_packet(packet.get(), static_cast<int>(bytes.size())) < 0) {
    return Internal(path_ + ": out of memory");
  }
  std::memcpy(packet->data, bytes.data(), bytes.size());
  packet->flags |= AV_PKT_FLAG_KEY;
  if (!frame_) frame_.reset(av_frame_alloc());
  if (!frame_) return Internal(path_ + ": out of memory");
  const AVDiscard skip = codec_->skip_frame;
  codec_->skip_frame = AVDISCARD_ALL;
  avcodec_send_packet(codec_, packet.get());  // its errors are the first packet's, found later
  while (avcodec_receive_frame(codec_, frame_.get()) >= 0) av_frame_unref(frame_.get());
  avcodec_flush_buffers(codec_);
  codec_->skip_frame = skip;
  return Status::Ok();
}

Status VideoDecoder::Send(const AVPacket* packet, const FrameHandler& handler) {
  ++counters_->packets_decoded;
  while (true) {
    int rc = avcodec_send_packet(codec_, packet);
    if (rc == AVERROR(EAGAIN)) {
      REEL_RETURN_IF_ERROR(Receive(handler));
      continue;
    }
    if (rc < 0 && rc != AVERROR_EOF) {
      ++counters_->decode_errors;
      REEL_RETURN_IF_ERROR(CheckErrorRate());
    }
    break;
  }
  return Receive(handler);
}

Status VideoDecoder::Drain(const FrameHandler& handler) {
  avcodec_send_packet(codec_, nullptr);
  REEL_RETURN_IF_ERROR(Receive(handler));
  avcodec_flush_buffers(codec_);
  unpack_continues_ = false;
  return Status::Ok();
}

// Hands every picture the decoder has ready to `handler`. Pictures are known by their
// presentation time or, for streams without timestamps, by their output order.
Status VideoDecoder::Receive(const FrameHandler& handler) {
  if (!frame_) frame_.reset(av_frame_alloc());
  while (true) {
    int rc = avcodec_receive_frame(codec_, frame_.get());
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return Status::Ok();
    if (rc < 0) {
      ++counters_->decode_errors;
      REEL_RETURN_IF_ERROR(CheckErrorRate());
      continue;
    }
    if (IsDamaged(frame_.get())) {
      ++counters_->decode_errors;
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

// The frame a decoded picture with raw time `pts` is. A picture carries the raw time of the packet
// it was decoded from, and the index knows which frame that packet presents (which need not be
// the frame at that time: see BitstreamScan). The packet is looked for in the segment of the
// packet last sent, or the one before (pictures still in the reorder buffer at a boundary).
int VideoDecoder::FrameOf(int64_t pts) const {
  if (pts == AV_NOPTS_VALUE) return -1;
  auto [first, last] = packets_by_pts_.equal_range(pts);
  int before = -1;
  for (auto it = first; it != last; ++it) {
    const IndexedPacket& p = index_.packets[it->second];
    if (p.frame < 0) continue;
    if (p.segment == segment_) return p.frame;
    if (p.segment == segment_ - 1) before = p.frame;
  }
  return before;
}

Status VideoDecoder::CheckErrorRate() const {
  const int errors = counters_->decode_errors.load();
  const int packets = counters_->packets_decoded.load();
  if (errors >= limits_.min_errors_for_rate &&
      errors > limits_.max_error_rate * std::max(packets, 1)) {
    counters_->rate_exceeded = true;
    return LimitExceeded(path_ + ": too much damage: " + std::to_string(errors) +
                         " decoding errors in " + std::to_string(packets) + " packets (limit " +
                         std::to_string(static_cast<int>(limits_.max_error_rate * 100)) + "%)");
  }
  return Status::Ok();
}

// Streams without timestamps: decode everything from the start, counting output pictures.
Status VideoDecoder::DecodeSequentially(int last_needed, const FrameHandler& handler) {
  REEL_RETURN_IF_ERROR(demuxer_.Restart());
  output_count_ = 0;
  UniquePacket packet(av_packet_alloc());
  if (!packet) return Internal(path_ + ": out of memory");
  int sent = 0;
  while (sent <= last_needed) {
    if (deadline_.Expired()) return LimitExceeded(TimeLimitMessage());
    if (demuxer_.Read(packet.get()) < 0) break;
    PacketUnref unref(packet.get());
    if (packet->stream_index != index_.stream_index) continue;
    REEL_RETURN_IF_ERROR(SendIndexed(sent, packet.get(), handler));
    ++sent;
  }
  return Drain(handler);
}

}  // namespace reel::pipeline::internal
