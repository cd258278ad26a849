#include "pipeline/audio/audio_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pipeline/internal/ffmpeg.h"

namespace reel::pipeline {
namespace {

using internal::AvErrorString;

// Timestamp differences up to this are jitter, not gaps (FFmpeg's min_hard_comp default).
constexpr double kToleranceS = 0.1;
// Silence is handed out at most this long at a time, so a hostile timestamp jump cannot make
// one Read allocate without bound.
constexpr double kSilenceBlockS = 10;
constexpr int kMaxChannels = 64;

std::string Tag(AVDictionary* metadata, const char* key) {
  const AVDictionaryEntry* e = av_dict_get(metadata, key, nullptr, 0);
  return e != nullptr && e->value != nullptr ? e->value : "";
}

// The layout of a frame's channels, or the default order for its channel count when the decoder
// did not say (raw PCM, some damaged streams).
bool InputLayout(const AVFrame& frame, AVChannelLayout* layout) {
  const int channels = frame.ch_layout.nb_channels;
  if (channels < 1 || channels > kMaxChannels) return false;
  if (frame.ch_layout.order != AV_CHANNEL_ORDER_UNSPEC &&
      av_channel_layout_check(&frame.ch_layout) &&
      av_channel_layout_copy(layout, &frame.ch_layout) == 0) {
    return true;
  }
  av_channel_layout_default(layout, channels);
  return true;
}

}  // namespace

struct AudioReader::Impl {
  std::string path;
  AudioReadOptions options;
  internal::Deadline deadline;
  internal::UniqueFormatContext format;
  internal::UniqueCodecContext codec;
  internal::UniquePacket packet;
  internal::UniqueFrame frame;
  AVStream* stream = nullptr;
  AudioTrack track;
  AudioReadStats stats;

  // The resampler and the input shape it was made for.
  internal::UniqueSwrContext swr;
  int swr_format = -1;
  int swr_rate = 0;
  AVChannelLayout swr_layout{};

  bool origin_known = false;
  int64_t limit = std::numeric_limits<int64_t>::max();  // samples up to end_s
  int64_t pending_silence = 0;  // samples of silence to hand out before the held frame
  bool frame_held = false;      // `frame` still has samples to convert
  bool frame_timed = false;     // the held frame's timestamp has been checked
  int64_t frame_skip = 0;       // input samples of the held frame to drop (overlap)
  bool input_done = false;      // no more packets: the decoder has been told to drain
  bool finished = false;
  std::vector<int16_t> scratch;

  explicit Impl(const AudioReadOptions& o) : options(o), deadline(o.limits.time_limit_s) {}
  ~Impl() { av_channel_layout_uninit(&swr_layout); }

  int rate() const { return options.sample_rate; }

  // Appends converted samples, stopping at the range's end.
  void Emit(const int16_t* data, int64_t n, std::vector<int16_t>* out) {
    n = std::min(n, limit - stats.samples);
    if (n <= 0) {
      finished = stats.samples >= limit;
      return;
    }
    out->insert(out->end(), data, data + n);
    stats.samples += n;
    if (stats.samples >= limit) finished = true;
  }

  // Hands out the resampler's buffered samples and forgets it (a new one is made for the next
  // frame), so that silence or a new input shape comes after them.
  void Drain(std::vector<int16_t>* out) {
    if (!swr) return;
    scratch.resize(4096);
    while (true) {
      uint8_t* dst = reinterpret_cast<uint8_t*>(scratch.data());
      const int n = swr_convert(swr.get(), &dst, static_cast<int>(scratch.size()), nullptr, 0);
      if (n <= 0) break;
      Emit(scratch.data(), n, out);
    }
    swr.reset();
  }

  Status DecodeError(const std::string& what) {
    ++stats.decode_errors;
    const MediaLimits& l = options.limits;
    if (stats.decode_errors >= l.min_errors_for_rate &&
        static_cast<double>(stats.decode_errors) >
            l.max_error_rate * static_cast<double>(std::max<int64_t>(stats.packets, 1))) {
      return CorruptData(path + ": audio stream #" + std::to_string(track.stream.index) + ": " +
                         std::to_string(stats.decode_errors) + " of " +
                         std::to_string(stats.packets) + " packets damaged (last: " + what + ")");
    }
    return Status::Ok();
  }

  // A resampler for `f`'s shape. False when the shape is unusable (counted as damage).
  bool EnsureResampler(const AVFrame& f, std::vector<int16_t>* out) {
    const int fmt = f.format;
    if (fmt < 0 || fmt >= AV_SAMPLE_FMT_NB || f.sample_rate <= 0 || f.sample_rate > 10000000) {
      return false;
    }
    AVChannelLayout layout{};
    if (!InputLayout(f, &layout)) return false;
    if (swr && fmt == swr_format && f.sample_rate == swr_rate &&
        av_channel_layout_compare(&layout, &swr_layout) == 0) {
      av_channel_layout_uninit(&layout);
      return true;
    }
    Drain(out);
    SwrContext* raw = nullptr;
    AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO;
    int rc = swr_alloc_set_opts2(&raw, &mono, AV_SAMPLE_FMT_S16, rate(), &layout,
                                 static_cast<AVSampleFormat>(fmt), f.sample_rate, 0, nullptr);
    internal::UniqueSwrContext context(raw);
    if (rc < 0 || !context || swr_init(context.get()) < 0) {
      av_channel_layout_uninit(&layout);
      return false;
    }
    swr = std::move(context);
    swr_format = fmt;
    swr_rate = f.sample_rate;
    av_channel_layout_uninit(&swr_layout);
    swr_layout = layout;  // takes over the copy
    return true;
  }

  // The held frame's time against the timeline: a gap becomes pending silence, an overlap
  // input samples to skip.
  void TimeFrame(std::vector<int16_t>* out) {
    frame_timed = true;
    frame_skip = 0;
    const int64_t pts = frame->best_effort_timestamp;
    const double t = pts == AV_NOPTS_VALUE ? std::numeric_limits<double>::quiet_NaN()
                                           : static_cast<double>(pts) * av_q2d(stream->time_base);
    if (!origin_known) {
      origin_known = true;
      const bool ranged = options.start_s > track.media_start_s;
      track.origin_s = ranged ? options.start_s : (std::isfinite(t) ? t : track.media_start_s);
      if (options.end_s) {
        limit = std::max<int64_t>(0, std::llround((*options.end_s - track.origin_s) * rate()));
        if (limit == 0) finished = true;
      }
    }
    if (!std::isfinite(t)) return;
    const double buffered = swr ? static_cast<double>(swr_get_delay(swr.get(), rate())) : 0.0;
    const double expected = static_cast<double>(stats.samples) + buffered;
    const double delta = (t - track.origin_s) * rate() - expected;  // output samples
    if (delta > kToleranceS * rate()) {
      Drain(out);
      pending_silence = std::llround(delta);
      if (stats.samples > 0) stats.silence_filled_s += delta / rate();
    } else if (delta < -kToleranceS * rate() || (stats.samples == 0 && delta < 0)) {
      // Before the range's start, or audio the timeline already has.
      const double skip = -delta * frame->sample_rate / rate();
      frame_skip = std::min<int64_t>(frame->nb_samples, std::llround(skip));
      if (stats.samples > 0) stats.overlap_dropped_s += static_cast<double>(frame_skip) / rate();
    }
  }

  // Converts the held frame (after its skip) and lets it go.
  Status ConvertHeld(std::vector<int16_t>* out) {
    frame_held = false;
    const AVFrame& f = *frame;
    const int64_t count = f.nb_samples - frame_skip;
    if (count <= 0) return Status::Ok();
    if (!EnsureResampler(f, out)) return DecodeError("a frame of unusable shape");
    const int channels = f.ch_layout.nb_channels;
    const int bytes = av_get_bytes_per_sample(static_cast<AVSampleFormat>(f.format));
    const bool planar = av_sample_fmt_is_planar(static_cast<AVSampleFormat>(f.format)) != 0;
    std::vector<const uint8_t*> in(planar ? channels : 1);
    for (size_t c = 0; c < in.size(); ++c) {
      if (f.extended_data[c] == nullptr) return DecodeError("a frame without data");
      in[c] = f.extended_data[c] + frame_skip * bytes * (planar ? 1 : channels);
    }
    const int capacity = swr_get_out_samples(swr.get(), static_cast<int>(count));
    if (capacity < 0) return DecodeError("resampler: " + AvErrorString(capacity));
    scratch.resize(static_cast<size_t>(capacity) + 16);
    uint8_t* dst = reinterpret_cast<uint8_t*>(scratch.data());
    const int n = swr_convert(swr.get(), &dst, static_cast<int>(scratch.size()), in.data(),
                              static_cast<int>(count));
    if (n < 0) return DecodeError("resampler: " + AvErrorString(n));
    Emit(scratch.data(), n, out);
    return Status::Ok();
  }

  // Gets the next decoded frame into `frame`. False at the end of the stream.
  Result<bool> NextFrame() {
    while (true) {
      if (deadline.Expired()) {
        return LimitExceeded(path + ": time limit exceeded while decoding audio (" +
                             std::to_string(static_cast<int>(deadline.seconds())) + " s)");
      }
      int rc = avcodec_receive_frame(codec.get(), frame.get());
      if (rc == 0) {
        if (frame->nb_samples > 0) return true;
        av_frame_unref(frame.get());
        continue;
      }
      if (rc == AVERROR_EOF) return false;
      if (rc != AVERROR(EAGAIN)) {
        REEL_RETURN_IF_ERROR(DecodeError(AvErrorString(rc)));
        if (input_done) return false;
        continue;
      }
      if (input_done) return false;
      rc = av_read_frame(format.get(), packet.get());
      if (rc < 0) {
        if (rc != AVERROR_EOF) {
          stats.read_error = deadline.Expired() ? "time limit" : AvErrorString(rc);
        }
        input_done = true;
        avcodec_send_packet(codec.get(), nullptr);
        continue;
      }
      if (packet->stream_index != stream->index) {
        av_packet_unref(packet.get());
        continue;
      }
      // Past the range's end (with a second's margin for reordering): stop reading.
      if (options.end_s && packet->pts != AV_NOPTS_VALUE && origin_known &&
          static_cast<double>(packet->pts) * av_q2d(stream->time_base) > *options.end_s + 1) {
        av_packet_unref(packet.get());
        input_done = true;
        avcodec_send_packet(codec.get(), nullptr);
        continue;
      }
      ++stats.packets;
      rc = avcodec_send_packet(codec.get(), packet.get());
      av_packet_unref(packet.get());
      if (rc < 0 && rc != AVERROR(EAGAIN)) {
        REEL_RETURN_IF_ERROR(DecodeError(AvErrorString(rc)));
      }
    }
  }

  Result<size_t> Read(std::vector<int16_t>* out) {
    const size_t before = out->size();
    while (out->size() == before && !finished) {
      if (pending_silence > 0) {
        const int64_t n =
            std::min<int64_t>(pending_silence, static_cast<int64_t>(kSilenceBlockS * rate()));
        pending_silence -= n;
        scratch.assign(static_cast<size_t>(n), 0);
        Emit(scratch.data(), n, out);
        continue;
      }
      if (frame_held) {
        if (!frame_timed) {
          TimeFrame(out);
          if (pending_silence > 0 || finished) continue;
        }
        REEL_RETURN_IF_ERROR(ConvertHeld(out));
        av_frame_unref(frame.get());
        continue;
      }
      REEL_ASSIGN_OR_RETURN(bool got, NextFrame());
      if (!got) {
        Drain(out);
        finished = true;
        break;
      }
      frame_held = true;
      frame_timed = false;
    }
    return out->size() - before;
  }
};

AudioReader::AudioReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AudioReader::~AudioReader() = default;

const AudioTrack& AudioReader::track() const { return impl_->track; }
const AudioReadStats& AudioReader::stats() const { return impl_->stats; }

void AudioReader::ExcludeTime(double seconds) {
  if (seconds > 0) impl_->deadline.Extend(seconds);
}

Result<size_t> AudioReader::Read(std::vector<int16_t>* out) {
  if (!impl_->track.has_audio) return size_t{0};
  return impl_->Read(out);
}

Result<std::unique_ptr<AudioReader>> AudioReader::Open(const std::string& path,
                                                       const AudioReadOptions& options) {
  if (options.sample_rate < 1000 || options.sample_rate > 384000) {
    return InvalidArgument(path + ": sample rate " + std::to_string(options.sample_rate) +
                           " Hz is outside 1000-384000");
  }
  auto impl = std::make_unique<Impl>(options);
  impl->path = path;
  REEL_ASSIGN_OR_RETURN(impl->format, internal::OpenInput(path, impl->deadline));
  AVFormatContext* format = impl->format.get();
  AudioTrack& track = impl->track;
  if (format->start_time != AV_NOPTS_VALUE) {
    track.media_start_s = static_cast<double>(format->start_time) / AV_TIME_BASE;
  }

  std::vector<AudioStreamCandidate> candidates;
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    AVStream* s = format->streams[i];
    s->discard = AVDISCARD_ALL;
    if (s->codecpar->codec_type != AVMEDIA_TYPE_AUDIO) continue;
    candidates.push_back({static_cast<int>(i), Tag(s->metadata, "language"),
                          (s->disposition & AV_DISPOSITION_DEFAULT) != 0});
  }
  std::optional<AudioStreamChoice> choice;
  if (options.stream_index >= 0) {
    for (const AudioStreamCandidate& c : candidates) {
      if (c.index == options.stream_index) {
        choice = AudioStreamChoice{c.index, c.language,
                                   "stream #" + std::to_string(c.index) + ": as asked", false};
      }
    }
    if (!choice) {
      return InvalidArgument(path + ": stream #" + std::to_string(options.stream_index) +
                             " is not an audio stream");
    }
  } else {
    choice = ChooseAudioStream(candidates, options.language);
  }
  if (!choice) return std::unique_ptr<AudioReader>(new AudioReader(std::move(impl)));

  track.has_audio = true;
  track.stream = *choice;
  impl->stream = format->streams[choice->index];
  AVStream* stream = impl->stream;
  stream->discard = AVDISCARD_DEFAULT;
  track.codec = avcodec_get_name(stream->codecpar->codec_id);
  track.source_sample_rate = stream->codecpar->sample_rate;
  track.source_channels = stream->codecpar->ch_layout.nb_channels;
  REEL_ASSIGN_OR_RETURN(impl->codec, internal::OpenDecoder(stream, 1, path));
  impl->packet.reset(av_packet_alloc());
  impl->frame.reset(av_frame_alloc());
  if (!impl->packet || !impl->frame) return Internal(path + ": out of memory");

  // A range that starts later: seek to at most its start (what comes before it is dropped
  // sample by sample). A file that cannot seek is read from its beginning.
  if (options.start_s > track.media_start_s + 1) {
    const int64_t ts = static_cast<int64_t>(options.start_s * AV_TIME_BASE);
    if (avformat_seek_file(format, -1, std::numeric_limits<int64_t>::min(), ts, ts, 0) >= 0) {
      avcodec_flush_buffers(impl->codec.get());
    }
  }
  return std::unique_ptr<AudioReader>(new AudioReader(std::move(impl)));
}

}  // namespace reel::pipeline
