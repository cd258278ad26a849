#include "pipeline/internal/frame_converter.h"

#include <cstring>

#include "pipeline/internal/deinterlacer.h"

namespace reel::pipeline::internal {
namespace {

// A decoder can leave any number in an enum field of a damaged stream (colorspace 32 was seen by
// the frames_json fuzz target): fields are read with RawEnumValue (ffmpeg.h).
bool IsFullRange(const AVFrame* frame) {
  return internal::IsFullRange(frame->format, RawEnumValue(frame->color_range));
}

// The YUV->RGB matrix. Untagged video follows the usual player guess: BT.709 for HD sizes,
// BT.601 below.
int Matrix(const AVFrame* frame) {
  switch (RawEnumValue(frame->colorspace)) {
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

Result<Image> FrameConverter::Convert(const AVFrame* source, const std::string& path) {
  UniqueFrame deinterlaced;
  const AVFrame* frame = source;
  if (deinterlace_ && IsInterlaced(source)) {
    REEL_ASSIGN_OR_RETURN(deinterlaced, Deinterlace(source, path));
    frame = deinterlaced.get();
  }
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

namespace {

// The pixel formats FFmpeg's `select` filter accepts when it computes scene scores (FFmpeg 5.1:
// the 11 formats its query_formats lists).
bool SceneNative(AVPixelFormat format) {
  switch (format) {
    case AV_PIX_FMT_RGB24:
    case AV_PIX_FMT_BGR24:
    case AV_PIX_FMT_RGBA:
    case AV_PIX_FMT_ABGR:
    case AV_PIX_FMT_BGRA:
    case AV_PIX_FMT_GRAY8:
    case AV_PIX_FMT_YUV420P:
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUV422P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUV420P10:
      return true;
    default:
      return false;
  }
}

// The formats `select` lists, in its order (libavfilter/f_select.c, FFmpeg 5.1).
constexpr AVPixelFormat kSceneFormats[] = {
    AV_PIX_FMT_RGB24,   AV_PIX_FMT_BGR24,    AV_PIX_FMT_RGBA,     AV_PIX_FMT_ABGR,
    AV_PIX_FMT_BGRA,    AV_PIX_FMT_GRAY8,    AV_PIX_FMT_YUV420P,  AV_PIX_FMT_YUVJ420P,
    AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUV420P10};

// The format FFmpeg's filter graph converts other formats to before `select`: its format
// negotiation (libavfilter/avfiltergraph.c, pick_format) keeps the least lossy of the listed
// formats by av_find_best_pix_fmt_of_2, in list order, alpha counted when the source has it. So
// packed and planar 8-bit RGB (rgb555le from MS Video 1 and QuickTime rpza, rgb565, pal8, gbrp,
// bgr0) become rgb24, deeper RGB yuv420p10le, packed 4:2:2 and 4:1:1 yuv422p, alpha rgba,
// deeper gray gray (checked against ffmpeg 5.1's "picking ... out of 11" for every pixel format
// it can write).
AVPixelFormat SceneTarget(AVPixelFormat format) {
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(format);
  if (desc == nullptr) return AV_PIX_FMT_YUV420P;
  const int has_alpha = desc->nb_components % 2 == 0;
  AVPixelFormat best = AV_PIX_FMT_NONE;
  for (AVPixelFormat candidate : kSceneFormats) {
    best = av_find_best_pix_fmt_of_2(best, candidate, format, has_alpha, nullptr);
  }
  return best == AV_PIX_FMT_NONE ? AV_PIX_FMT_YUV420P : best;
}

// Whether converting `frame` to `target` leaves its luma samples as they are: YUV or gray whose
// luma is a plane of its own, 8-bit to 8-bit or 10-bit little-endian to 10-bit, with no range
// change (yuv444p -> yuv420p, nv12 -> yuv420p, yuv422p10le -> yuv420p10le, ...). Converting only
// to throw the chroma away would cost more than scoring.
bool LumaUnchanged(const AVFrame* frame, AVPixelFormat target) {
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(frame->format));
  if (desc == nullptr ||
      (desc->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_PAL |
                      AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL))) {
    return false;
  }
  const AVComponentDescriptor& luma = desc->comp[0];
  const int bytes = luma.depth > 8 ? 2 : 1;
  if (luma.plane != 0 || luma.offset != 0 || luma.shift != 0 || luma.step != bytes) return false;
  if (target == AV_PIX_FMT_YUV420P10) return luma.depth == 10;
  if (luma.depth != 8) return false;
  if (target == AV_PIX_FMT_YUVJ420P || target == AV_PIX_FMT_YUVJ422P) return true;
  if (target == AV_PIX_FMT_YUV420P || target == AV_PIX_FMT_YUV422P) return !IsFullRange(frame);
  return target == AV_PIX_FMT_GRAY8;
}

ScenePicture PlanesOf(const AVFrame* frame) {
  ScenePicture picture;
  const AVPixelFormat format = static_cast<AVPixelFormat>(frame->format);
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(format);
  // FFmpeg scores the first plane only: luma for YUV and gray, all three channels for packed
  // RGB (one plane of width * bytes-per-pixel samples).
  picture.bit_depth = desc->comp[0].depth;
  picture.planes = 1;
  const int bytes = av_image_get_linesize(format, frame->width, 0);
  picture.data[0] = frame->data[0];
  picture.linesize[0] = frame->linesize[0];
  picture.width[0] = picture.bit_depth > 8 ? bytes / 2 : bytes;
  picture.height[0] = frame->height;
  return picture;
}

}  // namespace

Result<ScenePicture> FrameConverter::ScenePlanes(const AVFrame* frame, const std::string& path) {
  const AVPixelFormat format = static_cast<AVPixelFormat>(frame->format);
  if (av_pix_fmt_desc_get(format) == nullptr) {
    return Unsupported(path + ": unknown pixel format");
  }
  if (SceneNative(format)) return PlanesOf(frame);
  const AVPixelFormat target = SceneTarget(format);
  if (LumaUnchanged(frame, target)) {
    // Only the luma plane is scored and the conversion would copy it as it is: read it in place.
    return PlanesOf(frame);
  }
  if (!scene_frame_ || scene_frame_->width != frame->width ||
      scene_frame_->height != frame->height || scene_frame_->format != target) {
    scene_frame_.reset(av_frame_alloc());
    if (!scene_frame_) return Internal(path + ": out of memory");
    scene_frame_->width = frame->width;
    scene_frame_->height = frame->height;
    scene_frame_->format = target;
    if (av_frame_get_buffer(scene_frame_.get(), 0) < 0) {
      scene_frame_.reset();
      return Internal(path + ": out of memory");
    }
  }
  SwsContext* raw =
      sws_getCachedContext(scene_.release(), frame->width, frame->height, format, frame->width,
                           frame->height, target, SWS_BICUBIC, nullptr, nullptr, nullptr);
  scene_.reset(raw);
  if (!scene_) {
    const char* name = av_get_pix_fmt_name(format);
    return Unsupported(path + ": cannot convert pixel format " + (name ? name : "?"));
  }
  const AVPixFmtDescriptor* target_desc = av_pix_fmt_desc_get(target);
  if (!(target_desc->flags & AV_PIX_FMT_FLAG_RGB) && target_desc->nb_components > 1) {
    // FFmpeg's auto-inserted scaler converts a full-range picture to the limited range of
    // yuv420p (which scales luma differences by 219/255), and keeps yuvj420p full.
    const int* coefficients = sws_getCoefficients(Matrix(frame));
    sws_setColorspaceDetails(scene_.get(), coefficients, IsFullRange(frame) ? 1 : 0, coefficients,
                             target == AV_PIX_FMT_YUVJ420P || target == AV_PIX_FMT_YUVJ422P ? 1 : 0,
                             0, 1 << 16, 1 << 16);
  }
  if (sws_scale(scene_.get(), frame->data, frame->linesize, 0, frame->height, scene_frame_->data,
                scene_frame_->linesize) <= 0) {
    return CorruptData(path + ": scene conversion failed");
  }
  return PlanesOf(scene_frame_.get());
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
