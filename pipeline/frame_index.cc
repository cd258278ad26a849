#include "pipeline/frame_index.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "pipeline/internal/bitstream_scan.h"
#include "pipeline/internal/index_builder.h"
#include "pipeline/internal/truncation.h"

namespace reel::pipeline {

double FrameIndex::end_time_s(int i) const {
  if (i + 1 < size()) return time_s(i + 1);
  double length = frames[i].duration > 0 ? PtsToSeconds(frames[i].duration)
                                         : (avg_fps > 0 ? 1.0 / avg_fps : 0.0);
  return time_s(i) + length;
}

int FrameIndex::FrameAt(double t) const {
  if (frames.empty()) return -1;
  int64_t first = frames.front().pts;
  // The last frame whose start is <= t.
  auto it = std::upper_bound(
      frames.begin(), frames.end(), t,
      [&](double value, const IndexedFrame& f) { return value < PtsToSeconds(f.pts - first); });
  if (it == frames.begin()) return 0;
  return static_cast<int>(it - frames.begin()) - 1;
}

int FrameIndex::FirstFrameAtOrAfter(double t) const {
  int64_t first = frames.empty() ? 0 : frames.front().pts;
  auto it = std::lower_bound(
      frames.begin(), frames.end(), t,
      [&](const IndexedFrame& f, double value) { return PtsToSeconds(f.pts - first) < value; });
  return static_cast<int>(it - frames.begin());
}

namespace {

// `time(i)`: seconds of frame i from the first frame.
template <typename TimeOf>
bool FollowsTheAverageRate(int frames, double avg_fps, const TimeOf& time) {
  if (frames <= 1) return true;
  if (!(avg_fps > 0) || !std::isfinite(avg_fps)) return false;
  const double period = 1.0 / avg_fps;
  // Times are whole ticks of a time base, the grid is not: a microsecond of slack for rounding.
  constexpr double kRounding = 1e-6;
  for (int i = 1; i < frames; ++i) {
    const double grid = i * period;
    if (std::abs(time(i) - grid) > std::max(period, 0.01 * grid) + kRounding) return false;
  }
  return true;
}

}  // namespace

bool FrameIndex::constant_rate() const {
  if (!has_timestamps) return true;
  return FollowsTheAverageRate(size(), avg_fps, [&](int i) { return time_s(i); });
}

bool IsConstantRate(const std::vector<double>& times_s, double avg_fps) {
  return FollowsTheAverageRate(static_cast<int>(times_s.size()), avg_fps,
                               [&](int i) { return times_s[i] - times_s[0]; });
}

Result<FrameIndex> BuildFrameIndex(const std::string& path, int stream_index,
                                   const MediaLimits& limits) {
  internal::Deadline deadline(limits.time_limit_s);
  REEL_ASSIGN_OR_RETURN(internal::UniqueFormatContext format, internal::OpenInput(path, deadline));
  REEL_ASSIGN_OR_RETURN(int stream, internal::ChooseVideoStream(format.get(), stream_index, path));
  return internal::IndexStream(format.get(), stream, path, deadline);
}

namespace internal {

Result<int> ChooseVideoStream(AVFormatContext* format, int requested, const std::string& path) {
  if (requested >= 0) {
    const int count = static_cast<int>(format->nb_streams);
    std::string videos;  // the streams that can be asked for instead
    for (int i = 0; i < count; ++i) {
      if (format->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
        videos += (videos.empty() ? "" : ", ") + std::to_string(i);
      }
    }
    videos = videos.empty() ? "; it has no video stream" : "; its video streams: " + videos;
    if (requested >= count) {
      return NotFound(
          path + ": there is no stream " + std::to_string(requested) + ": the file has " +
          std::to_string(count) +
          (count == 1 ? " stream (0)" : " streams (0-" + std::to_string(count - 1) + ")") + videos);
    }
    const AVMediaType type = format->streams[requested]->codecpar->codec_type;
    if (type != AVMEDIA_TYPE_VIDEO) {
      const char* name = av_get_media_type_string(type);
      return InvalidArgument(path + ": stream " + std::to_string(requested) + " is " +
                             (name ? name : "not video") + ", not video" + videos);
    }
    return requested;
  }
  int best = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (best >= 0 && !(format->streams[best]->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
    return best;
  }
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    const AVStream* s = format->streams[i];
    if (s->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
        !(s->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
      return static_cast<int>(i);
    }
  }
  return InvalidArgument(path + ": no video stream");
}

Status RewindToStart(AVFormatContext* format, int stream_index, const std::string& path) {
  AVStream* stream = format->streams[stream_index];
  // Demuxers with a full index (MP4, MOV) seek exactly to their first entry.
  if (avformat_index_get_entries_count(stream) > 0) {
    const AVIndexEntry* first = avformat_index_get_entry(stream, 0);
    if (first != nullptr &&
        av_seek_frame(format, stream_index, first->timestamp, AVSEEK_FLAG_BACKWARD) >= 0) {
      return Status::Ok();
    }
  }
  int64_t start = format->start_time == AV_NOPTS_VALUE ? 0 : format->start_time;
  if (avformat_seek_file(format, -1, std::numeric_limits<int64_t>::min(), start, start, 0) >= 0) {
    return Status::Ok();
  }
  if (av_seek_frame(format, -1, 0, AVSEEK_FLAG_BYTE) >= 0) return Status::Ok();
  return Unsupported(path + ": cannot seek back to the start of the file");
}

Result<FrameIndex> IndexStream(AVFormatContext* format, int stream_index, const std::string& path,
                               const Deadline& deadline) {
  AVStream* stream = format->streams[stream_index];
  FrameIndex index;
  index.stream_index = stream_index;
  index.time_base_num = stream->time_base.num;
  index.time_base_den = stream->time_base.den;
  // The container's rate for now (the jump threshold); measured from the packets once read when
  // FFmpeg has no average.
  index.avg_fps = StreamFrameRate(stream, {});

  for (unsigned i = 0; i < format->nb_streams; ++i) {
    format->streams[i]->discard =
        static_cast<int>(i) == stream_index ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
  }

  UniquePacket packet(av_packet_alloc());
  if (!packet) return Internal(path + ": out of memory");
  std::vector<int64_t> durations;
  int64_t offset = 0, last_dts = 0, timeline_end = 0;
  // Half a second, or eight frames if that is longer, in stream time base.
  const double frame_s = index.avg_fps > 0 ? 1.0 / index.avg_fps : 0.04;
  const int64_t jump_threshold = static_cast<int64_t>(
      std::max(0.5, 8 * frame_s) * stream->time_base.den / std::max(1, stream->time_base.num));
  bool seen_any = false;
  std::optional<int64_t> raw_end;  // end of the last packet read, as the container times it
  BitstreamScan scan(stream);
  while (true) {
    int rc = av_read_frame(format, packet.get());
    if (rc == AVERROR_EOF) break;
    if (deadline.Expired()) return LimitExceeded(path + ": time limit exceeded while indexing");
    if (rc < 0) {
      // A damaged or truncated tail: keep what was read, and say so.
      index.read_error = AvErrorString(rc);
      break;
    }
    if (packet->stream_index == stream_index) {
      IndexedPacket p;
      p.keyframe = (packet->flags & AV_PKT_FLAG_KEY) != 0;
      p.discarded = (packet->flags & AV_PKT_FLAG_DISCARD) != 0;
      if (packet->flags & AV_PKT_FLAG_CORRUPT) ++index.corrupt_packets;
      if (packet->pts == AV_NOPTS_VALUE && packet->dts == AV_NOPTS_VALUE) {
        index.has_timestamps = false;
      }
      p.pts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
      p.dts = packet->dts != AV_NOPTS_VALUE ? packet->dts : p.pts;
      p.raw_pts = p.pts;
      if (packet->pts != AV_NOPTS_VALUE || packet->dts != AV_NOPTS_VALUE) {
        raw_end = std::max(raw_end.value_or(p.pts), p.pts + std::max<int64_t>(packet->duration, 0));
      }
      if (index.has_timestamps) {
        // Decode times never go backwards within a recording: a jump back starts a new segment,
        // placed right after everything seen so far. Small steps back are demuxers' guessed
        // decode times around B-frames (Matroska), not new recordings.
        if (seen_any && p.dts + offset < last_dts - jump_threshold) {
          offset = timeline_end - p.pts;
          index.segment_offsets.push_back(offset);
        }
        p.segment = static_cast<int>(index.segment_offsets.size()) - 1;
        p.pts += offset;
        p.dts += offset;
        last_dts = p.dts;
        timeline_end = std::max(timeline_end, p.pts + std::max<int64_t>(packet->duration, 1));
        seen_any = true;
      }
      index.packets.push_back(p);
      durations.push_back(packet->duration);
      scan.Add(packet.get());
    }
    av_packet_unref(packet.get());
  }

  std::optional<double> end_s;
  if (raw_end) end_s = static_cast<double>(*raw_end) * av_q2d(stream->time_base);
  index.truncation =
      CheckTruncation(format, path, stream_index, {index.read_error, end_s, "video"});

  if (!index.has_timestamps) {
    // No reliable presentation times: present in decode order at the average rate.
    double fps = index.avg_fps > 0 ? index.avg_fps : 25.0;
    for (size_t i = 0; i < index.packets.size(); ++i) {
      index.packets[i].pts = static_cast<int64_t>(
          static_cast<double>(i) / fps * index.time_base_den / index.time_base_num + 0.5);
      index.packets[i].dts = index.packets[i].pts;
      index.packets[i].raw_pts = index.packets[i].pts;
      index.packets[i].segment = 0;
    }
  }

  // Start points, and presentation order where the container's times do not give it.
  scan.Apply(index);

  std::vector<int> order;
  for (size_t i = 0; i < index.packets.size(); ++i) {
    if (index.packets[i].discarded) {
      ++index.discarded_packets;
    } else {
      order.push_back(static_cast<int>(i));
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return index.packets[a].pts < index.packets[b].pts; });
  // Two packets claiming one presentation time cannot both be told apart when decoded: keep the
  // first in decode order, the other is treated as not presented.
  for (int packet_index : order) {
    IndexedPacket& p = index.packets[packet_index];
    if (!index.frames.empty() && index.frames.back().pts == p.pts) continue;
    p.frame = static_cast<int>(index.frames.size());
    index.frames.push_back({p.pts, durations[packet_index], packet_index, p.keyframe});
  }
  if (index.has_timestamps) {
    std::vector<double> times;
    times.reserve(index.frames.size());
    for (const IndexedFrame& f : index.frames) times.push_back(index.PtsToSeconds(f.pts));
    index.avg_fps = StreamFrameRate(stream, std::move(times));
  }
  return index;
}

}  // namespace internal
}  // namespace reel::pipeline
