// The decoder: decodes exactly the packets the chosen frames need, each picture as a sequential
// decode gives it. Ownership and threads: borrows its demuxer, codec context, index, limits,
// deadline and counters (all outlive it); one thread at a time; DecodeCounters are atomic.
// The plan and the priming packet: pipeline/README.md, "Video decoder".
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "pipeline/frame_index.h"
#include "pipeline/internal/bitstream_scan.h"
#include "pipeline/internal/ffmpeg.h"
#include "pipeline/limits.h"

namespace reel::pipeline::internal {

// What decoding did, shared by every decoder working on one file (so the error-rate cap sees the
// whole file however many decoders run).
struct DecodeCounters {
  std::atomic<int> packets_decoded{0};  // packets sent to a decoder
  std::atomic<int> decode_errors{0};    // packets rejected and pictures flagged damaged
  std::atomic<int> seeks{0};
  std::atomic<bool> rate_exceeded{false};  // decoding stopped at the error-rate cap
};

// The demuxer a decoder reads from, with every stream but the video one discarded. Starting over
// opens the file afresh: some files (Matroska without cues, raw streams) cannot seek back to
// their start, and a fresh context always can.
class Demuxer {
 public:
  Demuxer(const std::string& path, int stream_index, const Deadline& deadline)
      : path_(path), stream_index_(stream_index), deadline_(deadline) {}

  Status Open();
  // Back to the first packet; free when nothing has been read yet.
  Status Restart() { return fresh_ ? Status::Ok() : Open(); }
  int Read(AVPacket* packet);
  // Seeks to the keyframe at or before `ts` (stream time base).
  int Seek(int64_t ts);
  const AVStream* stream() const { return format_->streams[stream_index_]; }

 private:
  const std::string& path_;
  int stream_index_;
  const Deadline& deadline_;
  UniqueFormatContext format_;
  bool fresh_ = false;
};

// Whether the decoder flagged `picture` as damaged (concealed errors).
inline bool IsDamaged(const AVFrame* picture) {
  return (picture->flags & AV_FRAME_FLAG_CORRUPT) != 0 || picture->decode_error_flags != 0;
}

// The decode-order packets [first, last] that produce one frame: from the keyframe it depends on
// to the frame's own packet.
struct PacketRun {
  int first = 0;
  int last = 0;
};
PacketRun PacketsFor(const FrameIndex& index, int frame);

// Where a run starts: the plan's start point (PacketsFor), the start point before that one (for a
// frame that came out damaged or not at all), or the stream's first packet, decoding everything
// from there as a sequential decode does.
enum class StartPoint { kPlanned, kEarlier, kStreamStart };
PacketRun PacketsFor(const FrameIndex& index, int frame, StartPoint start);

// Splits `frames` (presentation indices, ascending) into groups whose packet runs share no packet,
// ordered by where their runs start. Each group can be decoded on its own by a fresh decoder.
std::vector<std::vector<int>> IndependentGroups(const FrameIndex& index,
                                                const std::vector<int>& frames);

class VideoDecoder {
 public:
  // `codec` is an open decoder for the index's stream. With `restart_when_seek_fails`, a file
  // whose demuxer cannot seek is read through from its start instead; without, Decode fails
  // with kUnavailable (a caller with other plans can then fall back).
  VideoDecoder(const std::string& path, Demuxer& demuxer, AVCodecContext* codec,
               const FrameIndex& index, const MediaLimits& limits, const Deadline& deadline,
               DecodeCounters& counters, bool restart_when_seek_fails = true);

  // Called for every frame the decoder outputs that belongs to the index.
  using FrameHandler = std::function<Status(int frame, const AVFrame* picture)>;

  // Decodes so that every frame in `frames` (presentation indices, ascending) is output through
  // `handler`, damaged or not (IsDamaged). `all_frames` decodes every packet in the needed runs
  // (no non-reference skipping); `start` says where runs start. A non-OK status from the handler
  // stops decoding and is returned; so is the error-rate cap (counters.rate_exceeded set).
  Status Decode(const std::vector<int>& frames, bool all_frames, const FrameHandler& handler,
                StartPoint start = StartPoint::kPlanned);

  // Starts afresh: drains nothing, forgets what was sent (for the second attempt at a frame).
  void Reset();

  // Counts from now on into `counters` (one set per decoding pass).
  void UseCounters(DecodeCounters& counters) { counters_ = &counters; }

 private:
  std::string TimeLimitMessage() const;
  int Identify(const AVPacket* packet, int expected) const;
  Status MaybeSeek(int current, int next);
  Status SeekToPacket(int d);
  Status SeekFailed();
  Status SendIndexed(int d, AVPacket* packet, const FrameHandler& handler);
  Status Prime();
  Status Send(const AVPacket* packet, const FrameHandler& handler);
  Status Drain(const FrameHandler& handler);
  Status Receive(const FrameHandler& handler);
  int FrameOf(int64_t pts) const;
  Status CheckErrorRate() const;
  Status DecodeSequentially(int last_needed, const FrameHandler& handler);

  const std::string& path_;
  Demuxer& demuxer_;
  AVCodecContext* codec_;
  const FrameIndex& index_;
  const MediaLimits& limits_;
  const Deadline& deadline_;
  DecodeCounters* counters_;
  bool restart_when_seek_fails_;
  std::unordered_multimap<int64_t, int> packets_by_pts_;
  std::unordered_set<int> sent_;
  UniqueFrame frame_;
  PackedVops packed_vops_;  // packed MPEG-4 B-frames only
  UniquePacket vop_packet_;
  bool unpack_continues_ = false;  // packed_vops_ last read the packet before this one
  int last_sent_ = -1;             // decode index of the packet last sent
  bool primed_ = false;            // the decoder has seen the stream's first packet
  bool skip_nonref_ok_ = false;
  bool seek_failed_ = false;
  int last_seek_target_ = -1;  // the packet of the last seek, never sought twice
  int sought_ = -1;            // set until the first packet after a seek is identified
  int segment_ = 0;            // timestamp segment of the packet last sent to the decoder
  int output_count_ = 0;       // pictures output so far (streams without timestamps)
  int seeks_this_call_ = 0;    // seeks by the current Decode call
  int read_position_ = -1;     // decode index of the next packet the demuxer returns (-1: unknown)
};

}  // namespace reel::pipeline::internal
