#include "pipeline/internal/frame_converter.h"

namespace reel::pipeline::internal {
namespace {

bool IsFullRange(const AVFrame* frame) {
  switch (frame->format) {
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUVJ444P:
    case AV_PIX_FMT_YUVJ440P:
    case AV_PIX_FMT_YUVJ411P:
      return true;
    default:
      return frame->color_range == AVCOL_RANGE_JPEG;
  }
}

// The YUV->RGB matrix. Untagged video follows the usual player guess: BT.709 for HD sizes,
// BT.601 below.
int Matrix(const AVFrame* frame) {
  switch (frame->colorspace) {
    case AVCOL_SPC_BT709:
      return SWS_CS_ITU709;
    case AVCOL_SPC_FCC:
      return SWS_CS_FCC;
    case AVCOL_SPC_SMPTE240M:
      return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL:
      return SWS_CS_BT2020;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M:
      return SWS_CS_ITU601;
    default:
      return (frame->width >= 1280 || frame->height > 576) ? SWS_CS_ITU709 : SWS_CS_ITU601;
  }
}

// Rebuilds `context` when the source changes (a stream may change size mid-way).
Status Prepare(UniqueSwsContext& context, const AVFrame* frame, int width, int height,
               AVPixelFormat format, int flags, const std::string& path) {
  SwsContext* raw = sws_getCachedContext(context.release(), frame->width, frame->height,
                                         static_cast<AVPixelFormat>(frame->format), width, height,
                                         format, flags, nullptr, nullptr, nullptr);
  context.reset(raw);
  if (!context) {
    const char* name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(frame->format));
    return Unsupported(path + ": cannot convert pixel format " + (name ? name : "?"));
  }
  if (format != AV_PIX_FMT_GRAY8) {
    const int* coefficients = sws_getCoefficients(Matrix(frame));
    sws_setColorspaceDetails(context.get(), coefficients, IsFullRange(frame) ? 1 : 0,
                             sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
  }
  return Status::Ok();
}

}  // namespace

Result<Image> FrameConverter::Convert(const AVFrame* frame, const std::string& path) {
  bool swap = rotation_ == 90 || rotation_ == 270;
  int width = swap ? upright_.height : upright_.width;
  int height = swap ? upright_.width : upright_.height;
  REEL_RETURN_IF_ERROR(
      Prepare(rgb_, frame, width, height, AV_PIX_FMT_RGB24, SWS_BICUBIC | SWS_ACCURATE_RND, path));
  Image image = MakeImage(width, height, 3);
  uint8_t* planes[4] = {image.pixels.data(), nullptr, nullptr, nullptr};
  int strides[4] = {static_cast<int>(image.stride()), 0, 0, 0};
  int rows = sws_scale(rgb_.get(), frame->data, frame->linesize, 0, frame->height, planes, strides);
  if (rows <= 0) return CorruptData(path + ": colour conversion failed");
  if (rotation_ != 0) return Rotate(image, rotation_);
  return image;
}

Status FrameConverter::Thumbnail(const AVFrame* frame, int side, uint8_t* out,
                                 const std::string& path) {
  REEL_RETURN_IF_ERROR(Prepare(gray_, frame, side, side, AV_PIX_FMT_GRAY8, SWS_AREA, path));
  uint8_t* planes[4] = {out, nullptr, nullptr, nullptr};
  int strides[4] = {side, 0, 0, 0};
  if (sws_scale(gray_.get(), frame->data, frame->linesize, 0, frame->height, planes, strides) <=
      0) {
    return CorruptData(path + ": thumbnail conversion failed");
  }
  return Status::Ok();
}

Image Rotate(const Image& image, int degrees) {
  const int w = image.width, h = image.height, c = image.channels;
  const bool swap = degrees == 90 || degrees == 270;
  Image out = MakeImage(swap ? h : w, swap ? w : h, c);
  for (int y = 0; y < h; ++y) {
    const uint8_t* src = image.row(y);
    for (int x = 0; x < w; ++x) {
      int ox, oy;
      switch (degrees) {
        case 90:
          ox = h - 1 - y;
          oy = x;
          break;
        case 180:
          ox = w - 1 - x;
          oy = h - 1 - y;
          break;
        case 270:
          ox = y;
          oy = w - 1 - x;
          break;
        default:
          ox = x;
          oy = y;
          break;
      }
      uint8_t* dst = out.row(oy) + static_cast<size_t>(ox) * c;
      for (int k = 0; k < c; ++k) dst[k] = src[x * c + k];
    }
  }
  return out;
}

}  // namespace reel::pipeline::internal
