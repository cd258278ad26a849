#include "pipeline/probe.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "base/text_encoding.h"
#include "base/utf8.h"
#include "pipeline/frame_index.h"
#include "pipeline/internal/bitstream_scan.h"
#include "pipeline/internal/ffmpeg.h"
#include "pipeline/internal/truncation.h"

namespace reel::pipeline {
namespace {

using internal::Deadline;

// Enum fields of the codec parameters are read as raw ints (internal::RawEnumValue): a damaged
// file can leave any number in them.
StreamType TypeOf(const AVStream* stream) {
  switch (internal::RawEnumValue(stream->codecpar->codec_type)) {
    case AVMEDIA_TYPE_VIDEO:
      return StreamType::kVideo;
    case AVMEDIA_TYPE_AUDIO:
      return StreamType::kAudio;
    case AVMEDIA_TYPE_SUBTITLE:
      return StreamType::kSubtitle;
    case AVMEDIA_TYPE_DATA:
      return StreamType::kData;
    case AVMEDIA_TYPE_ATTACHMENT:
      return StreamType::kAttachment;
    default:
      return StreamType::kUnknown;
  }
}

// A metadata tag as valid UTF-8. Containers should hold UTF-8, but old muxers (AVI's INFO chunk,
// some Matroska and MP4 taggers) write Latin-1 or Windows-1252: text that is not UTF-8 is read as
// Windows-1252, like a side-car subtitle file.
std::string TagText(const AVDictionary* metadata, const char* key) {
  const AVDictionaryEntry* entry = av_dict_get(metadata, key, nullptr, 0);
  if (entry == nullptr || entry->value == nullptr) return "";
  Result<DecodedText> decoded = DecodeText(entry->value);
  return decoded.ok() ? std::move(decoded->text) : ReplaceInvalidUtf8(entry->value);
}

double Seconds(int64_t ts, AVRational tb) {
  return ts == AV_NOPTS_VALUE ? 0.0 : static_cast<double>(ts) * av_q2d(tb);
}

// Facts read from the packets themselves, for streams whose header leaves them out.
struct PacketFacts {
  int64_t packets = 0;
  int64_t no_picture = 0;  // video: packets the decoder outputs no picture for
  int64_t min_pts = AV_NOPTS_VALUE;
  int64_t max_end = AV_NOPTS_VALUE;  // largest pts + duration
  std::vector<int64_t> times;        // video: every packet's presentation (else decode) time
};

struct ScanResult {
  std::map<int, PacketFacts> streams;
  std::map<int, std::unique_ptr<internal::BitstreamScan>> bitstreams;  // video streams
  std::string read_error;  // why reading stopped before the end, if it did
};

// Reads every packet (no decoding) and counts them per stream. Packets an edit list discards are
// not counted: they are never presented. A packet without a presentation time (elementary
// streams give one on the first packet only) is timed by its decode time.
Result<ScanResult> ScanPackets(AVFormatContext* format, const std::string& path,
                               const Deadline& deadline) {
  ScanResult scan;
  internal::UniquePacket packet(av_packet_alloc());
  if (!packet) return Internal(path + ": out of memory");
  // The context is fresh: av_read_frame first returns what avformat_find_stream_info buffered.
  while (true) {
    int rc = av_read_frame(format, packet.get());
    if (rc == AVERROR_EOF) break;
    if (deadline.Expired()) return LimitExceeded(path + ": time limit exceeded while indexing");
    if (rc < 0) {  // a damaged tail: keep what was read, and say so
      scan.read_error = internal::AvErrorString(rc);
      break;
    }
    if (!(packet->flags & AV_PKT_FLAG_DISCARD)) {
      PacketFacts& f = scan.streams[packet->stream_index];
      ++f.packets;
      const int64_t ts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
      if (ts != AV_NOPTS_VALUE) {
        if (f.min_pts == AV_NOPTS_VALUE || ts < f.min_pts) f.min_pts = ts;
        int64_t end = ts + std::max<int64_t>(packet->duration, 0);
        if (f.max_end == AV_NOPTS_VALUE || end > f.max_end) f.max_end = end;
        if (format->streams[packet->stream_index]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
          f.times.push_back(ts);
        }
      }
      AVStream* stream = format->streams[packet->stream_index];
      if (stream->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
        std::unique_ptr<internal::BitstreamScan>& bitstream = scan.bitstreams[stream->index];
        if (!bitstream) bitstream = std::make_unique<internal::BitstreamScan>(stream);
        bitstream->Add(packet.get());
      }
    }
    av_packet_unref(packet.get());
  }
  for (const auto& [index, bitstream] : scan.bitstreams) {
    scan.streams[index].no_picture = bitstream->not_shown();
  }
  return scan;
}

// Stream times (any order) as seconds, ascending, each once.
std::vector<double> SortedSeconds(std::vector<int64_t> times, AVRational time_base) {
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<double> seconds;
  seconds.reserve(times.size());
  for (int64_t t : times) seconds.push_back(static_cast<double>(t) * av_q2d(time_base));
  return seconds;
}

// The decode times of a stream's index entries (MP4/MOV: every sample), edit-list discards left
// out.
std::vector<int64_t> IndexEntryTimes(AVStream* stream) {
  std::vector<int64_t> times;
  const int entries = avformat_index_get_entries_count(stream);
  for (int i = 0; i < entries; ++i) {
    const AVIndexEntry* entry = avformat_index_get_entry(stream, i);
    if (entry != nullptr && !(entry->flags & AVINDEX_DISCARD_FRAME)) {
      times.push_back(entry->timestamp);
    }
  }
  return times;
}

// Counts the frames a stream's index entries promise (MP4/MOV keep a full sample table), leaving
// out entries an edit list discards. Returns 0 when the demuxer keeps no complete index.
int64_t IndexEntryFrames(const AVFormatContext* format, AVStream* stream) {
  std::string name = format->iformat->name;
  if (name.find("mp4") == std::string::npos && name.find("mov") == std::string::npos) return 0;
  int entries = avformat_index_get_entries_count(stream);
  int64_t frames = 0;
  for (int i = 0; i < entries; ++i) {
    const AVIndexEntry* entry = avformat_index_get_entry(stream, i);
    if (entry != nullptr && !(entry->flags & AVINDEX_DISCARD_FRAME)) ++frames;
  }
  return frames;
}

// How many of a stream's index entries (MP4/MOV samples) hold no picture: an H.264 sample with
// only an end-of-sequence NAL, an MPEG-4 VOP that is not coded. Only samples small enough to
// hold nothing else are read from the file.
int64_t EmptyIndexEntries(AVStream* stream, const std::string& path) {
  constexpr int kSmallSample = 64;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  internal::BitstreamScan bitstream(stream);
  internal::UniquePacket packet(av_packet_alloc());
  if (!packet) return 0;
  std::vector<uint8_t> bytes(kSmallSample + AV_INPUT_BUFFER_PADDING_SIZE);
  const int entries = avformat_index_get_entries_count(stream);
  for (int i = 0; i < entries; ++i) {
    const AVIndexEntry* entry = avformat_index_get_entry(stream, i);
    if (entry == nullptr || (entry->flags & AVINDEX_DISCARD_FRAME) || entry->size <= 0 ||
        entry->size > kSmallSample || entry->pos < 0) {
      continue;
    }
    if (!file) file.reset(std::fopen(path.c_str(), "rb"));
    if (!file || fseeko(file.get(), entry->pos, SEEK_SET) != 0 ||
        std::fread(bytes.data(), 1, entry->size, file.get()) != static_cast<size_t>(entry->size)) {
      continue;
    }
    std::fill(bytes.begin() + entry->size, bytes.end(), 0);
    packet->data = bytes.data();
    packet->size = entry->size;
    packet->pts = packet->dts = entry->timestamp;
    packet->flags = (entry->flags & AVINDEX_KEYFRAME) ? AV_PKT_FLAG_KEY : 0;
    bitstream.Add(packet.get());
  }
  packet->data = nullptr;
  packet->size = 0;
  return bitstream.not_shown();
}

}  // namespace

Result<MediaInfo> Probe(const std::string& path, const MediaLimits& limits) {
  Deadline deadline(limits.time_limit_s);
  REEL_ASSIGN_OR_RETURN(internal::UniqueFormatContext format, internal::OpenInput(path, deadline));

  MediaInfo info;
  info.path = path;
  info.format = format->iformat->name;
  info.format_long = format->iformat->long_name ? format->iformat->long_name : "";
  info.title = TagText(format->metadata, "title");
  std::error_code ec;
  info.size_bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  info.start_s = format->start_time == AV_NOPTS_VALUE
                     ? 0.0
                     : static_cast<double>(format->start_time) / AV_TIME_BASE;
  // A duration FFmpeg estimated from the bit rate (elementary streams: .m2v, .mpv, some .mpg) is a
  // guess, often wildly off: the packet index measures instead.
  const bool guessed = format->duration_estimation_method == AVFMT_DURATION_FROM_BITRATE;
  // MPEG-PS/TS durations are first-to-last timestamp: they leave out the last frame's duration.
  const bool first_to_last = format->duration_estimation_method == AVFMT_DURATION_FROM_PTS;
  double container_duration = guessed || format->duration == AV_NOPTS_VALUE || format->duration <= 0
                                  ? 0.0
                                  : static_cast<double>(format->duration) / AV_TIME_BASE;
  info.bit_rate = format->bit_rate;

  bool needs_scan = false;
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    AVStream* stream = format->streams[i];
    const AVCodecParameters* par = stream->codecpar;
    StreamInfo s;
    s.index = static_cast<int>(i);
    s.type = TypeOf(stream);
    s.codec = avcodec_get_name(static_cast<AVCodecID>(internal::RawEnumValue(par->codec_id)));
    s.language = TagText(stream->metadata, "language");
    s.title = TagText(stream->metadata, "title");
    s.start_s = Seconds(stream->start_time, stream->time_base);
    s.bit_rate = par->bit_rate;
    if (!guessed && stream->duration != AV_NOPTS_VALUE && stream->duration > 0) {
      s.duration_s = Seconds(stream->duration, stream->time_base);
      s.duration_source = FactSource::kStream;
    } else if (container_duration > 0) {
      s.duration_s = container_duration;
      s.duration_source = FactSource::kContainer;
    } else {
      needs_scan = true;
    }
    if (s.type == StreamType::kVideo) {
      s.width = par->width;
      s.height = par->height;
      if (s.width <= 0 || s.height <= 0 || s.width > limits.max_side ||
          s.height > limits.max_side ||
          static_cast<int64_t>(s.width) * s.height > limits.max_pixels) {
        if (s.width > 0 && s.height > 0) {
          return LimitExceeded(path + ": video stream " + std::to_string(i) + " is " +
                               std::to_string(s.width) + "x" + std::to_string(s.height) +
                               ", over the size limit");
        }
      }
      s.rotation = internal::StreamRotation(stream);
      s.sample_aspect = internal::StreamSampleAspect(format.get(), stream);
      Size shown = DisplaySize({s.width, s.height}, s.sample_aspect);
      bool swap = s.rotation == 90 || s.rotation == 270;
      s.display_width = swap ? shown.height : shown.width;
      s.display_height = swap ? shown.width : shown.height;
      s.fps = internal::StreamFrameRate(stream, {});
      s.attached_picture = (stream->disposition & AV_DISPOSITION_ATTACHED_PIC) != 0;
      const AVPixFmtDescriptor* desc =
          par->format >= 0 && par->format < AV_PIX_FMT_NB
              ? av_pix_fmt_desc_get(static_cast<AVPixelFormat>(par->format))
              : nullptr;
      s.pixel_format = desc ? desc->name : "";
      s.full_range = internal::StreamFullRange(*par);
      switch (internal::RawEnumValue(par->field_order)) {
        case AV_FIELD_PROGRESSIVE:
          s.field_order = "progressive";
          break;
        case AV_FIELD_TT:
          s.field_order = "tt";
          break;
        case AV_FIELD_BB:
          s.field_order = "bb";
          break;
        case AV_FIELD_TB:
          s.field_order = "tb";
          break;
        case AV_FIELD_BT:
          s.field_order = "bt";
          break;
        default:
          break;
      }
      // The packet index is the truth; a container's nb_frames is only believed when the index
      // agrees with it.
      int64_t indexed = IndexEntryFrames(format.get(), stream);
      if (indexed > 0) {
        s.frames = std::max<int64_t>(indexed - EmptyIndexEntries(stream, path), 1);
        s.frames_source = FactSource::kPacketIndex;
        std::vector<double> times = SortedSeconds(IndexEntryTimes(stream), stream->time_base);
        s.fps = internal::StreamFrameRate(stream, times);
        s.constant_rate = IsConstantRate(times, s.fps);
      } else {
        needs_scan = true;
      }
      if (first_to_last) needs_scan = true;
    } else if (s.type == StreamType::kAudio) {
      s.sample_rate = par->sample_rate;
      s.audio_channels = par->ch_layout.nb_channels;
    }
    info.streams.push_back(std::move(s));
  }

  internal::ReadOutcome read;
  read.what = "the media";
  if (needs_scan) {
    REEL_ASSIGN_OR_RETURN(ScanResult scan, ScanPackets(format.get(), path, deadline));
    read.read_error = scan.read_error;
    for (StreamInfo& s : info.streams) {
      auto it = scan.streams.find(s.index);
      if (it == scan.streams.end()) continue;
      const PacketFacts& f = it->second;
      AVRational tb = format->streams[s.index]->time_base;
      if (s.type == StreamType::kVideo && s.frames_source != FactSource::kPacketIndex) {
        s.frames = f.packets - f.no_picture;
        s.frames_source = FactSource::kPacketIndex;
        std::vector<double> times = SortedSeconds(f.times, tb);
        s.fps = internal::StreamFrameRate(format->streams[s.index], times);
        s.constant_rate = IsConstantRate(times, s.fps);
      }
      if (f.max_end == AV_NOPTS_VALUE) continue;
      const double measured = Seconds(f.max_end - f.min_pts, tb);
      read.end_s = std::max(read.end_s.value_or(0.0), Seconds(f.max_end, tb));
      // The index measures to the end of the last frame; a first-to-last estimate is short by
      // that frame (a much longer index span is a timestamp jump, not a frame: keep FFmpeg's).
      const bool adds_last_frame = first_to_last && s.type == StreamType::kVideo &&
                                   measured >= s.duration_s && measured <= s.duration_s + 1.0;
      if (s.duration_source == FactSource::kUnknown || adds_last_frame) {
        s.duration_s = measured;
        s.duration_source = FactSource::kPacketIndex;
      }
    }
  }
  info.truncation = internal::CheckTruncation(format.get(), path, -1, read);

  info.duration_s = container_duration;
  for (const StreamInfo& s : info.streams)
    info.duration_s = std::max(info.duration_s, s.duration_s);

  int best = av_find_best_stream(format.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (best >= 0 && !info.streams[best].attached_picture) {
    info.best_video = best;
  } else {
    for (const StreamInfo& s : info.streams) {
      if (s.type == StreamType::kVideo && !s.attached_picture) {
        info.best_video = s.index;
        break;
      }
    }
  }
  return info;
}

}  // namespace reel::pipeline
