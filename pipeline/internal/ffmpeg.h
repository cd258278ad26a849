// The one place FFmpeg's headers are included. Private to pipeline/: public headers never
// include this file.
//
// Every FFmpeg object Reel creates is owned from the line it is created by one of the Unique*
// aliases below, so no error path needs cleanup code.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
}

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "pipeline/smart_resize.h"

namespace reel::pipeline::internal {

struct FormatContextDeleter {
  void operator()(AVFormatContext* p) const { avformat_close_input(&p); }
};
struct CodecContextDeleter {
  void operator()(AVCodecContext* p) const { avcodec_free_context(&p); }
};
struct FrameDeleter {
  void operator()(AVFrame* p) const { av_frame_free(&p); }
};
struct PacketDeleter {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct ParserContextDeleter {
  void operator()(AVCodecParserContext* p) const { av_parser_close(p); }
};
struct SwsContextDeleter {
  void operator()(SwsContext* p) const { sws_freeContext(p); }
};
struct SwrContextDeleter {
  void operator()(SwrContext* p) const { swr_free(&p); }
};

using UniqueFormatContext = std::unique_ptr<AVFormatContext, FormatContextDeleter>;
using UniqueCodecContext = std::unique_ptr<AVCodecContext, CodecContextDeleter>;
using UniqueFrame = std::unique_ptr<AVFrame, FrameDeleter>;
using UniquePacket = std::unique_ptr<AVPacket, PacketDeleter>;
using UniqueSwsContext = std::unique_ptr<SwsContext, SwsContextDeleter>;
using UniqueSwrContext = std::unique_ptr<SwrContext, SwrContextDeleter>;
using UniqueParserContext = std::unique_ptr<AVCodecParserContext, ParserContextDeleter>;

// An enum field FFmpeg filled from the file (codec parameters, stream and frame properties): its
// bytes as an int, never loaded as the enum. A demuxer or decoder can leave any number there for a
// damaged file (a decoder gave colorspace 32), and loading such a value as the enum is undefined
// behaviour (UBSan: invalid enum load). Compare the result with the enum's constants.
template <typename Enum>
int RawEnumValue(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int));
  int raw = 0;
  std::memcpy(&raw, &field, sizeof raw);
  return raw;
}

// Whether samples use the full (JPEG) range: the color_range says so, or the pixel format is one
// of the yuvj formats. Takes the fields as raw ints (RawEnumValue).
inline bool IsFullRange(int pixel_format, int color_range) {
  switch (pixel_format) {
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUVJ444P:
    case AV_PIX_FMT_YUVJ440P:
    case AV_PIX_FMT_YUVJ411P:
      return true;
    default:
      return color_range == AVCOL_RANGE_JPEG;
  }
}

// A video stream's range, from its parameters.
inline bool StreamFullRange(const AVCodecParameters& par) {
  return IsFullRange(par.format, RawEnumValue(par.color_range));
}

// FFmpeg's text for an error code.
inline std::string AvErrorString(int error) {
  char buffer[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(error, buffer, sizeof(buffer));
  return buffer;
}

// A deadline checked by FFmpeg's interrupt callback, so a hostile file cannot hang a read.
class Deadline {
 public:
  explicit Deadline(double seconds);
  bool Expired() const { return std::chrono::steady_clock::now() > end_; }
  double seconds() const { return seconds_; }
  // Moves the end later: time spent outside the work the deadline bounds does not count.
  void Extend(double seconds) {
    end_ += std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
  }

 private:
  std::chrono::steady_clock::time_point end_;
  double seconds_;
};

// Opens `path` for demuxing with the deadline installed as interrupt callback (the Deadline must
// outlive the context) and stream info read. Errors name the path: kNotFound, kInvalidArgument
// (a directory), kCorruptData (not media), kLimitExceeded (deadline).
Result<UniqueFormatContext> OpenInput(const std::string& path, const Deadline& deadline);

// Opens a decoder for `stream`. `threads` 0 = automatic.
Result<UniqueCodecContext> OpenDecoder(const AVStream* stream, int threads,
                                       const std::string& path);

// The stream's display rotation as clockwise degrees to make it upright (0, 90, 180, 270).
int StreamRotation(const AVStream* stream);

// The stream's sample (pixel) aspect ratio as FFmpeg reads it (the container's, else the
// codec's), reduced; 1:1 when the file says nothing, or something implausible (beyond 8:1
// either way, which no real pixel shape is).
SampleAspect StreamSampleAspect(AVFormatContext* format, AVStream* stream);

// A video stream's frames per second. FFmpeg's average rate (avg_frame_rate) when it has one.
// Without it (too few frames for FFmpeg to average: a 2-frame ASF file), the rate the packet
// index measures, (n - 1) / (last - first) over `times_s` (presentation times in seconds, any
// order, at least two distinct), keeping r_frame_rate's exact value when it agrees within 1%:
// r_frame_rate alone is then a guess, often the time base's tick rate (1000 fps for ASF and
// Matroska). Else r_frame_rate; else 0 (unknown).
double StreamFrameRate(const AVStream* stream, std::vector<double> times_s);

}  // namespace reel::pipeline::internal
