#include "pipeline/internal/ffmpeg.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "pipeline/internal/truncation.h"

namespace reel::pipeline::internal {

Deadline::Deadline(double seconds)
    : end_(std::chrono::steady_clock::now() +
           std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6))),
      seconds_(seconds) {}

static int InterruptCallback(void* opaque) {
  return static_cast<const Deadline*>(opaque)->Expired() ? 1 : 0;
}

// FFmpeg's own log lines would interleave with Reel's one-line errors: keep it quiet unless
// REEL_FFMPEG_LOG is set (to FFmpeg's level names' numbers, e.g. 32 for info).
static void QuietFfmpegLog() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* level = std::getenv("REEL_FFMPEG_LOG");
    av_log_set_level(level != nullptr ? std::atoi(level) : AV_LOG_QUIET);
  });
}

Result<UniqueFormatContext> OpenInput(const std::string& path, const Deadline& deadline) {
  QuietFfmpegLog();
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return NotFound(path + ": no such file");
  if (std::filesystem::is_directory(status)) return InvalidArgument(path + ": is a directory");
  if (!std::filesystem::is_regular_file(status)) {
    return InvalidArgument(path + ": not a regular file");
  }
  if (std::filesystem::file_size(path, ec) == 0) return CorruptData(path + ": empty file");

  AVFormatContext* raw = avformat_alloc_context();
  if (raw == nullptr) return Internal(path + ": out of memory");
  // Fill in presentation times the container leaves out (MPEG-PS, some AVI) from the parser, so
  // the frame index knows every frame's time without decoding.
  raw->flags |= AVFMT_FLAG_GENPTS;
  raw->interrupt_callback.callback = InterruptCallback;
  raw->interrupt_callback.opaque = const_cast<Deadline*>(&deadline);
  // avformat_open_input frees the context on failure.
  int rc = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (rc < 0) {
    if (deadline.Expired()) return LimitExceeded(path + ": time limit exceeded while opening");
    // A file cut before its index (an MP4's 'moov' at the end) cannot be opened: say so.
    if (std::string cut = CutShortHint(path); !cut.empty()) {
      return CorruptData(path + ": file truncated: " + cut + " (" + AvErrorString(rc) + ")");
    }
    return CorruptData(path + ": not a readable media file (" + AvErrorString(rc) + ")");
  }
  UniqueFormatContext context(raw);
  rc = avformat_find_stream_info(context.get(), nullptr);
  if (deadline.Expired()) return LimitExceeded(path + ": time limit exceeded while probing");
  if (rc < 0) {
    if (std::string cut = CutShortHint(path); !cut.empty()) {
      return CorruptData(path + ": file truncated: " + cut + " (" + AvErrorString(rc) + ")");
    }
    return CorruptData(path + ": cannot read stream information (" + AvErrorString(rc) + ")");
  }
  return context;
}

Result<UniqueCodecContext> OpenDecoder(const AVStream* stream, int threads,
                                       const std::string& path) {
  const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
  if (codec == nullptr) {
    return Unsupported(path + ": no decoder for codec '" +
                       avcodec_get_name(stream->codecpar->codec_id) + "'");
  }
  UniqueCodecContext context(avcodec_alloc_context3(codec));
  if (!context) return Internal(path + ": out of memory");
  int rc = avcodec_parameters_to_context(context.get(), stream->codecpar);
  if (rc < 0) return CorruptData(path + ": bad codec parameters (" + AvErrorString(rc) + ")");
  context->pkt_timebase = stream->time_base;
  context->thread_count = threads;
  context->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
  rc = avcodec_open2(context.get(), codec, nullptr);
  if (rc < 0) {
    return Unsupported(path + ": cannot open the " + codec->name + " decoder (" +
                       AvErrorString(rc) + ")");
  }
  return context;
}

int StreamRotation(const AVStream* stream) {
  const uint8_t* matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, nullptr);
  if (matrix == nullptr) return 0;
  // av_display_rotation_get gives the counter-clockwise angle the picture was rotated by; turning
  // it upright is the same angle clockwise... with FFmpeg's sign convention, -angle.
  double angle = -av_display_rotation_get(reinterpret_cast<const int32_t*>(matrix));
  if (std::isnan(angle)) return 0;
  int degrees = static_cast<int>(std::lround(angle / 90.0)) * 90;
  degrees %= 360;
  if (degrees < 0) degrees += 360;
  return degrees;
}

SampleAspect StreamSampleAspect(AVFormatContext* format, AVStream* stream) {
  AVRational sar = av_guess_sample_aspect_ratio(format, stream, nullptr);
  if (sar.num <= 0 || sar.den <= 0) return {};
  av_reduce(&sar.num, &sar.den, sar.num, sar.den, 1 << 20);
  if (sar.num > 8 * int64_t{sar.den} || sar.den > 8 * int64_t{sar.num}) return {};
  return {sar.num, sar.den};
}

double StreamFrameRate(const AVStream* stream, std::vector<double> times_s) {
  const AVRational avg = stream->avg_frame_rate;
  if (avg.num > 0 && avg.den > 0) return av_q2d(avg);
  const AVRational guess = stream->r_frame_rate;
  const double guessed = guess.num > 0 && guess.den > 0 ? av_q2d(guess) : 0.0;
  std::sort(times_s.begin(), times_s.end());
  times_s.erase(std::unique(times_s.begin(), times_s.end()), times_s.end());
  if (times_s.size() >= 2 && times_s.back() > times_s.front()) {
    const double measured =
        static_cast<double>(times_s.size() - 1) / (times_s.back() - times_s.front());
    if (std::isfinite(measured) && measured > 0) {
      return std::abs(guessed - measured) <= 0.01 * measured ? guessed : measured;
    }
  }
  return guessed;
}

}  // namespace reel::pipeline::internal
